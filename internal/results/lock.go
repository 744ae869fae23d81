package results

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/qoslab/qoslab/internal/inputfile"
)

// LockFile is the results directory's lock: held (flock, exclusive) for the
// whole life of a run or a resume, so that two processes never append to
// one directory; it holds the holder's pid and start time for the message
// the next one gets.
const LockFile = ".lock"

// Holder is who holds a results directory's lock.
type Holder struct {
	PID   int       `json:"pid"`
	Since time.Time `json:"since"`
}

// InUseError is a results directory another process is running in.
type InUseError struct {
	Path   string
	Holder Holder
}

func (e *InUseError) Error() string {
	who := "another qoslab"
	if e.Holder.PID > 0 {
		who = fmt.Sprintf("qoslab (pid %d, since %s)", e.Holder.PID, e.Holder.Since.Local().Format("15:04:05"))
	}
	return fmt.Sprintf("results %s is in use by %s: wait for it or stop it", e.Path, who)
}

// Lock takes d's lock for this process, without waiting: a directory in use
// is an *InUseError naming the holder. unlock releases it (the lock also
// goes when the process dies, however it dies).
//
// The lock file is truncated and rewritten, so it is opened without
// following a symbolic link and must be a regular file with no other hard
// link: `ln -s ~/thesis.tex DIR/.lock` must not empty the thesis.
func (d *Dir) Lock() (unlock func(), err error) {
	path := filepath.Join(d.Path, LockFile)
	f, err := openLockFile(path, true)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", d.Path, err)
	}
	ok, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		h, _ := readHolder(f)
		f.Close()
		return nil, &InUseError{Path: d.Path, Holder: h}
	}
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Since: time.Now().UTC()})
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(append(b, '\n'), 0)
	}
	unlock = func() {
		_ = f.Truncate(0)
		f.Close()
	}
	d.unlock = unlock
	return unlock, nil
}

// openLockFile opens the lock file at path for reading and writing
// (creating it when create is set) without following a symbolic link, and
// checks that what it opened is a regular file with one link, in its
// directory alone.
func openLockFile(path string, create bool) (*os.File, error) {
	flags := os.O_RDWR | openNoFollow | openNonBlocking
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o644) //nolint:gosec // G304: the lock file of the results directory the user names
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil {
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				return nil, fmt.Errorf("%s is a symbolic link, not qoslab's lock file: remove it (rm %s) and try again", path, path)
			case !fi.Mode().IsRegular():
				return nil, fmt.Errorf("%s is not a regular file (%s), not qoslab's lock file: remove it and try again", path, "a "+inputfile.Kind(fi.Mode()))
			}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s), not qoslab's lock file: remove it and try again", path, "a "+inputfile.Kind(fi.Mode()))
	}
	if n := linkCount(fi); n > 1 {
		f.Close()
		return nil, fmt.Errorf("%s has %d hard links, so it is another file's too, not qoslab's lock file: remove it (rm %s) and try again", path, n, path)
	}
	return f, nil
}

// Running reports whether a process holds the lock of the results
// directory at path, and who: a probe that takes the lock and lets it go at
// once, so a holder that died (its lock gone with it) is not running.
func Running(path string) (Holder, bool) {
	f, err := openLockFile(filepath.Join(path, LockFile), false)
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	ok, err := tryLock(f)
	if err != nil || ok {
		return Holder{}, false // taken by us, so free (closing f lets it go)
	}
	h, _ := readHolder(f)
	return h, true
}

// maxHolder bounds what is read of a lock file: a pid and a time.
const maxHolder = 4 << 10

func readHolder(f *os.File) (Holder, error) {
	var h Holder
	b, err := io.ReadAll(io.NewSectionReader(f, 0, maxHolder))
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return h, nil
}

// String is "pid 1234".
func (h Holder) String() string { return "pid " + strconv.Itoa(h.PID) }
