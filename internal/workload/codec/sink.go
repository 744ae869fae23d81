package codec

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/qoslab/qoslab/internal/inputfile"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Sink kinds, as users type them (see catalog).
const (
	SinkFile  = catalog.SinkFile
	SinkBlock = catalog.SinkBlock
	SinkNull  = catalog.SinkNull
)

// sinkKinds lists the sink kinds.
func sinkKinds() []string { return catalog.Sinks() }

// SinkSpec says where a workload's output goes.
type SinkSpec struct {
	Kind string // SinkFile, SinkBlock or SinkNull
	// Path is the directory for a file sink and the device for a block
	// sink; a null sink ignores it.
	Path string
	// Root, when set, confines a file sink: Path must lie within it, and
	// every file is created through an os.Root on it, so no symlink or ".."
	// in the tree (one planted in an agent's scratch directory, say) can
	// lead a write outside.
	Root string
}

// Sink takes one thread's output. It is not safe for concurrent use; each
// thread opens its own.
type Sink interface {
	io.Writer
	// Sync makes what was written durable: fsync for file and block sinks,
	// nothing for null.
	Sync() error
	// Written is the number of bytes written so far.
	Written() int64
	// ReadBack returns a reader over everything written, for verification.
	// A null sink keeps nothing and returns errNotKept.
	ReadBack() (io.ReadCloser, error)
	// Name identifies the sink in messages: a file or device path, or "null".
	Name() string
	// Close releases the sink. A file sink's file is scratch output and is
	// removed; a block device's contents stay.
	Close() error
}

// errNotKept is returned by a null sink's ReadBack.
var errNotKept = errors.New("a null sink keeps no output")

// Validate checks the kind and that a path is given where one is needed,
// without touching the file system.
func (s SinkSpec) Validate() error {
	switch s.Kind {
	case SinkNull:
		return nil
	case SinkFile, SinkBlock:
		if s.Path == "" {
			what := "a directory"
			if s.Kind == SinkBlock {
				what = "a block device"
			}
			return fmt.Errorf("%s sink needs a path: %s", s.Kind, what)
		}
		return nil
	}
	return fmt.Errorf("unknown sink %q: allowed %s", s.Kind, strings.Join(sinkKinds(), ", "))
}

// Check verifies up front that the sink can take regions outputs of up to
// regionSize bytes each: that a file sink's directory exists and is
// writable, and that a block sink's path is a block device big enough for
// all regions.
func (s SinkSpec) Check(regions int, regionSize int64) error {
	if err := s.Validate(); err != nil {
		return err
	}
	switch s.Kind {
	case SinkFile:
		return checkDirectory(s.Path)
	case SinkBlock:
		size, err := blockDeviceSize(s.Path)
		if err != nil {
			return err
		}
		return checkRegions(s.Path, size, regions, regionSize)
	}
	return nil
}

// Open opens the sink for thread index. A file sink creates a new file in
// the directory named from pattern (as os.CreateTemp takes it); a block
// sink opens region index of regionSize bytes, at offset index*regionSize.
func (s SinkSpec) Open(index int, regionSize int64, pattern string) (Sink, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	switch s.Kind {
	case SinkFile:
		if s.Root != "" {
			return openRooted(s.Root, s.Path, pattern)
		}
		if err := checkDirectory(s.Path); err != nil {
			return nil, err
		}
		f, err := os.CreateTemp(s.Path, pattern)
		if err != nil {
			return nil, fmt.Errorf("create output file in %s: %w", s.Path, err)
		}
		return &fileSink{f: f, path: f.Name()}, nil
	case SinkBlock:
		size, err := blockDeviceSize(s.Path)
		if err != nil {
			return nil, err
		}
		if err := checkRegions(s.Path, size, index+1, regionSize); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(s.Path, os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("open block device %s: %w", s.Path, err)
		}
		return newRegionSink(f, s.Path, index, regionSize), nil
	}
	return &nullSink{}, nil
}

// checkDirectory makes sure dir exists, is a directory, and takes a new file.
func checkDirectory(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sink directory %s does not exist: create it or choose another", dir)
	case err != nil:
		return fmt.Errorf("sink directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("sink directory %s is not a directory", dir)
	}
	// Permission bits do not tell (root, ACLs, read-only mounts): try.
	probe, err := os.CreateTemp(dir, ".qoslab-probe-*")
	if err != nil {
		return fmt.Errorf("sink directory %s is not writable: %w", dir, err)
	}
	name := probe.Name()
	_ = probe.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("sink directory %s: remove probe file: %w", dir, err)
	}
	return nil
}

// blockDeviceSize returns the size of the block device at path, refusing
// anything else.
func blockDeviceSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("block sink: %w", err)
	}
	if kind := inputfile.Kind(fi.Mode()); kind != "block device" {
		hint := ""
		if runtime.GOOS == "darwin" && kind == "character device" {
			hint = " (on macOS use /dev/diskN, not the raw /dev/rdiskN)"
		}
		return 0, fmt.Errorf("block sink %s is a %s, not a block device%s: pass a whole disk or partition the workload may overwrite", path, kind, hint)
	}
	f, err := os.Open(path) //nolint:gosec // G304: the block device the user names for the block sink
	if err != nil {
		return 0, fmt.Errorf("open block device %s: %w", path, err)
	}
	defer f.Close()
	size, err := deviceSize(f)
	if err != nil {
		return 0, fmt.Errorf("size of block device %s: %w", path, err)
	}
	return size, nil
}

// checkRegions refuses a device of deviceSize bytes that cannot hold
// regions regions of regionSize bytes.
func checkRegions(path string, deviceSize int64, regions int, regionSize int64) error {
	if regions < 1 || regionSize < 1 {
		return fmt.Errorf("block sink %s: %d regions of %d bytes: need at least one region of at least one byte", path, regions, regionSize)
	}
	if regionSize > math.MaxInt64/int64(regions) || int64(regions)*regionSize > deviceSize {
		return fmt.Errorf("block device %s holds %d bytes, too small for %d regions of %d bytes (%d bytes): use a bigger device, fewer threads or less data",
			path, deviceSize, regions, regionSize, mulSaturating(int64(regions), regionSize))
	}
	return nil
}

func mulSaturating(a, b int64) int64 {
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// fullError names the sink and how much went in when the device ran out
// of space; other errors keep their cause with the sink's name.
func fullError(op, name string, written int64, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the sink's name says which file
	}
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%s %s: device full after %d bytes written: %w", op, name, written, err)
	}
	return fmt.Errorf("%s %s after %d bytes written: %w", op, name, written, err)
}

// fileSink writes to a new file.
type fileSink struct {
	f       *os.File
	path    string
	written int64
	// root and rel, for a rooted sink: the file is read back and removed
	// through the root, never by a path that could be redirected.
	root *os.Root
	rel  string
}

// openRooted creates a new file for a sink in dir, which must lie within
// root, through an os.Root on root: a symlink or ".." that leads outside is
// refused by the kernel-checked walk, not by the path's text.
func openRooted(root, dir, pattern string) (Sink, error) {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("sink directory %s is outside %s", dir, root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("sink directory %s: %w", root, err)
	}
	fi, err := r.Stat(rel)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("sink directory %s: %w (files go only inside %s; symlinks out of it are refused)", dir, err, root)
	}
	if !fi.IsDir() {
		r.Close()
		return nil, fmt.Errorf("sink directory %s is not a directory", dir)
	}
	for range 100 {
		var rnd [6]byte
		_, _ = rand.Read(rnd[:])
		name := filepath.Join(rel, strings.Replace(pattern, "*", hex.EncodeToString(rnd[:]), 1))
		if !strings.Contains(pattern, "*") {
			name = filepath.Join(rel, pattern+hex.EncodeToString(rnd[:]))
		}
		f, err := r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("create output file in %s: %w (files go only inside %s; symlinks out of it are refused)", dir, err, root)
		}
		return &fileSink{f: f, path: filepath.Join(root, name), root: r, rel: name}, nil
	}
	r.Close()
	return nil, fmt.Errorf("create output file in %s: no free name", dir)
}

func (s *fileSink) Write(p []byte) (int, error) {
	n, err := s.f.Write(p)
	s.written += int64(n)
	if err != nil {
		return n, fullError("write", s.path, s.written, err)
	}
	return n, nil
}

func (s *fileSink) Sync() error {
	if err := s.f.Sync(); err != nil {
		return fullError("fsync", s.path, s.written, err)
	}
	return nil
}

func (s *fileSink) Written() int64 { return s.written }
func (s *fileSink) Name() string   { return s.path }

func (s *fileSink) ReadBack() (io.ReadCloser, error) {
	if s.root != nil {
		f, err := s.root.Open(s.rel)
		if err != nil {
			return nil, fmt.Errorf("read back %s: %w", s.path, err)
		}
		return f, nil
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, fmt.Errorf("read back %s: %w", s.path, err)
	}
	return f, nil
}

func (s *fileSink) Close() error {
	err := s.f.Close()
	remove := os.Remove
	if s.root != nil {
		remove = func(string) error { return s.root.Remove(s.rel) }
		defer s.root.Close()
	}
	if rerr := remove(s.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", filepath.Base(s.path), err)
	}
	return nil
}

// regionDevice is what a block sink needs of its device; *os.File has it,
// and tests fake it.
type regionDevice interface {
	io.WriterAt
	io.ReaderAt
	Sync() error
	Close() error
}

// regionSink writes one thread's region of a block device.
type regionSink struct {
	dev     regionDevice
	path    string
	index   int
	start   int64 // offset of the region on the device
	size    int64
	written int64
}

func newRegionSink(dev regionDevice, path string, index int, regionSize int64) *regionSink {
	return &regionSink{dev: dev, path: path, index: index, start: int64(index) * regionSize, size: regionSize}
}

func (s *regionSink) Write(p []byte) (int, error) {
	room := s.size - s.written
	short := int64(len(p)) > room
	if short {
		p = p[:room]
	}
	n, err := s.dev.WriteAt(p, s.start+s.written)
	s.written += int64(n)
	if err != nil {
		return n, fullError("write", s.Name(), s.written, err)
	}
	if short {
		return n, fmt.Errorf("write %s: region of %d bytes full after %d bytes written: %w", s.Name(), s.size, s.written, syscall.ENOSPC)
	}
	return n, nil
}

func (s *regionSink) Sync() error {
	if err := s.dev.Sync(); err != nil {
		return fullError("fsync", s.Name(), s.written, err)
	}
	return nil
}

func (s *regionSink) Written() int64 { return s.written }

func (s *regionSink) Name() string {
	return fmt.Sprintf("%s region %d (offset %d)", s.path, s.index, s.start)
}

func (s *regionSink) ReadBack() (io.ReadCloser, error) {
	return readCloser{io.NewSectionReader(s.dev, s.start, s.written)}, nil
}

func (s *regionSink) Close() error {
	if err := s.dev.Close(); err != nil {
		return fmt.Errorf("close %s: %w", s.path, err)
	}
	return nil
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

// nullSink discards, counting.
type nullSink struct{ written int64 }

func (s *nullSink) Write(p []byte) (int, error)      { s.written += int64(len(p)); return len(p), nil }
func (s *nullSink) Sync() error                      { return nil }
func (s *nullSink) Written() int64                   { return s.written }
func (s *nullSink) Name() string                     { return SinkNull }
func (s *nullSink) ReadBack() (io.ReadCloser, error) { return nil, errNotKept }
func (s *nullSink) Close() error                     { return nil }
