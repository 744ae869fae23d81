// Package atomicfile writes files so that a crash or a full disk leaves
// the old version or the new one whole, never part of either.
package atomicfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data so that a crash or a full disk
// leaves either the old file or the new one whole: it writes a temporary
// file beside it, syncs it, renames it over path and syncs the directory.
func Write(path string, data []byte) error {
	return writer{}.write(path, data)
}

// WriteJSON is Write of v as indented JSON and a newline: the form every
// JSON file qoslab keeps for itself has (vm.json, a bundle's config.json).
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return Write(path, append(b, '\n'))
}

// writer is Write with its one seam: what happens between writing the
// temporary file and renaming it over the old one.
type writer struct {
	// beforeRename, when set, runs once the temporary file tmp is written,
	// synced and closed, before it is renamed over path; an error from it
	// fails the write there, as a crash at that point would end it. Tests
	// set it; nil in Write.
	beforeRename func(tmp string) error
}

func (w writer) write(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fail := func(err error) error {
		_ = tmp.Close()           // the write already failed; this error says why
		_ = os.Remove(tmp.Name()) // best effort: a leftover is named as hidden
		return fmt.Errorf("write %s: %w (the previous version, if any, is untouched)", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if w.beforeRename != nil {
		if err := w.beforeRename(tmp.Name()); err != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("write %s: %w (the previous version, if any, is untouched)", path, err)
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// SyncDir syncs a directory, so that a file created or renamed in it (which
// syncing the file alone does not make durable) survives a crash. Its error
// is the caller's to handle: one that only tidies up may ignore it, saying so.
func SyncDir(dir string) error {
	f, err := os.Open(dir) //nolint:gosec // G304: the directory of a file the caller writes
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
