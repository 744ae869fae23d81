// Package inputfile reads the files a user hands qoslab (specs, the config
// file, image recipes) with a size cap, so that /dev/zero or a huge file
// is refused at once with a clear error instead of filling memory.
package inputfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/qoslab/qoslab/internal/units"
)

// sizeLimit is the largest input file qoslab reads: far above any real spec,
// config or recipe (a few KiB), far below what could hurt.
const sizeLimit int64 = 4 << 20

// Read reads the regular file at path, up to sizeLimit bytes. what names the
// file in errors as the user gave it ("--spec x.yaml", "recipe x.yaml") and
// kind what it should be ("a YAML spec").
func Read(what, path, kind string) ([]byte, error) {
	return readLimit(what, path, kind, sizeLimit)
}

// readLimit is Read with another cap.
//
// Opening a named pipe blocks until a writer comes, and reading a device
// may never end, so the file is looked at before it is opened, and opened
// without blocking (O_NONBLOCK) in case it was swapped for a pipe between
// the two; what it is once open is checked again.
func readLimit(what, path, kind string, limit int64) ([]byte, error) {
	if err := checkRegular(what, path, kind); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlocking, 0) //nolint:gosec // G304: reading the user's file, through a size cap, is this package's job
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s); give %s", what, typeName(st.Mode()), kind)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %s is over the %s limit for %s", what, units.FormatBytes(st.Size()), units.FormatBytes(limit), kind)
	}
	// The size can change under us (a file still being written): the
	// reader stops one byte past the cap whatever the file does.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: grew past the %s limit for %s while being read", what, units.FormatBytes(limit), kind)
	}
	return b, nil
}

// checkRegular refuses, before anything opens it, a path that is not a
// regular file (following symbolic links, as open would).
func checkRegular(what, path, kind string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s); give %s", what, typeName(st.Mode()), kind)
	}
	return nil
}

func typeName(m fs.FileMode) string { return "a " + Kind(m) }

// Kind names what kind of file m describes: "regular file", "directory",
// "character device", "block device", "symbolic link", "named pipe",
// "socket", else "special file".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
