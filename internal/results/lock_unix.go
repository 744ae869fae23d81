//go:build unix

package results

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/qoslab/qoslab/internal/flock"
)

// Open flags for the lock file: a symbolic link is refused (ELOOP), a
// named pipe does not block.
const (
	openNoFollow    = syscall.O_NOFOLLOW
	openNonBlocking = syscall.O_NONBLOCK
)

// linkCount is how many hard links the file has.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// tryLock takes an exclusive flock on f without waiting; false when another
// open file holds it.
func tryLock(f *os.File) (bool, error) {
	err := flock.TryExclusive(f)
	if errors.Is(err, flock.ErrHeld) {
		return false, nil
	}
	return err == nil, err
}
