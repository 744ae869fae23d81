package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteKeepsOldOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	require.NoError(t, Write(path, []byte("old\n")))
	require.NoError(t, Write(path, []byte("new\n")))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "results are readable by others, unlike a temp file's 0600")

	err = Write(filepath.Join(dir, "missing", "x.json"), []byte("x"))
	assert.ErrorContains(t, err, filepath.Join(dir, "missing", "x.json"))
	assert.Equal(t, "summary.json", entries(t, dir))
}

// entries lists the names in dir, joined by commas.
func entries(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// A write that fails between writing the new content and renaming it over
// the old (as a crash there would end it) leaves the old content whole and
// no temporary file: until the rename, the new content is only elsewhere.
func TestWriteFailingBeforeRenameKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	require.NoError(t, Write(path, []byte("old\n")))

	ran := false
	w := writer{beforeRename: func(tmp string) error {
		ran = true
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "old\n", string(b), "the new content is written, and path still holds the old")
		b, err = os.ReadFile(tmp)
		require.NoError(t, err)
		assert.Equal(t, "new, and longer\n", string(b), "the new content is whole in the temporary file")
		return errors.New("power cut")
	}}
	err := w.write(path, []byte("new, and longer\n"))
	require.True(t, ran, "the write got as far as the rename")
	require.ErrorContains(t, err, "power cut")
	assert.ErrorContains(t, err, path)
	assert.ErrorContains(t, err, "the previous version, if any, is untouched")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(b))
	assert.Equal(t, "summary.json", entries(t, dir), "no temporary file is left")
}

// A reader racing the writer sees the old content or the new, each whole,
// never an empty or a partial file, and never no file: the new content
// replaces the old in one rename. (os.WriteFile truncates, then writes: a
// reader between the two sees an empty or a short file.)
func TestReaderSeesOldOrNewWhole(t *testing.T) {
	const size = 1 << 20
	dir := t.TempDir()
	path := filepath.Join(dir, "samples.jsonl")
	versions := [][]byte{bytes.Repeat([]byte{'a'}, size), bytes.Repeat([]byte{'b'}, size)}
	require.NoError(t, Write(path, versions[0]))

	var reads, torn atomic.Int64
	var first atomic.Value // the first torn read, described
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(path)
			reads.Add(1)
			if bad := notWhole(b, err, size); bad != "" {
				if torn.Add(1) == 1 {
					first.Store(bad)
				}
			}
		}
	}()
	// The writes go on until the reader has read many times while they
	// did (on a busy machine it may not be scheduled for a while), or
	// has seen a torn file.
	deadline := time.Now().Add(20 * time.Second)
	writes := 0
	for writes < 20 || (reads.Load() < 500 && torn.Load() == 0 && time.Now().Before(deadline)) {
		writes++
		require.NoError(t, Write(path, versions[writes%2]))
	}
	close(stop)
	<-stopped
	assert.Zero(t, torn.Load(), "of %d reads racing %d writes, %d saw neither version whole; the first %v",
		reads.Load(), writes, torn.Load(), first.Load())
	assert.Positive(t, reads.Load(), "the reader raced the writer")
	assert.Equal(t, "samples.jsonl", entries(t, dir), "no temporary file is left")
}

// notWhole says what is wrong with a read of a file that should hold size
// bytes all alike (one version or the other), or "" when nothing is.
func notWhole(b []byte, err error, size int) string {
	if err != nil {
		return "failed: " + err.Error()
	}
	if len(b) != size {
		return fmt.Sprintf("had %d bytes of %d", len(b), size)
	}
	if n := bytes.Count(b, b[:1]); n != size {
		return fmt.Sprintf("mixed versions: %d of %d bytes are %q", n, size, b[:1])
	}
	return ""
}

// WriteJSON writes indented JSON and a newline, whole, and refuses what
// JSON cannot hold, naming the file and leaving the old one.
func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vm.json")
	require.NoError(t, WriteJSON(path, map[string]any{"name": "lab", "pid": 12}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"name\": \"lab\",\n  \"pid\": 12\n}\n", string(b))

	err = WriteJSON(path, map[string]any{"bad": make(chan int)})
	require.ErrorContains(t, err, "write "+path+": json: unsupported type")
	after, rerr := os.ReadFile(path)
	require.NoError(t, rerr)
	assert.Equal(t, b, after, "the old file stays whole")
}
