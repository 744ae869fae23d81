//go:build unix

package vz

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/flock"
)

// How long taking a lock waits out a prober: lockHeld holds a shared lock
// for the moment of one system call.
const (
	lockRetries = 20
	lockRetry   = 10 * time.Millisecond
)

// errLocked is a lock another process holds.
var errLocked = errors.New("held by another process")

// lockExclusive takes an exclusive flock on path (created when create is
// set) for as long as the returned file stays open. flock, not fcntl: it
// belongs to the open file, not the process, so a second open in the same
// process is refused too, and closing another descriptor of the file does
// not drop it. A lock taken on a file that path no longer names (replaced
// meanwhile by replaceLocked) is let go, and the file path names now is
// locked instead.
func lockExclusive(path string, create bool) (*os.File, error) {
	flag := os.O_RDONLY
	if create {
		flag |= os.O_CREATE
	}
	var err error
	for i := 0; ; i++ {
		var f *os.File
		f, err = os.OpenFile(path, flag, 0o600) //nolint:gosec // G304: a lock file in the VM's own state directory
		if err != nil {
			return nil, err
		}
		err = flock.TryExclusive(f)
		if err == nil {
			same, serr := namesFile(path, f)
			if serr != nil {
				_ = f.Close()
				return nil, fmt.Errorf("lock %s: %w", path, serr)
			}
			if same {
				return f, nil
			}
			err = flock.ErrHeld // replaced: its new file's lock is held
		}
		_ = f.Close()
		if !errors.Is(err, flock.ErrHeld) || i == lockRetries {
			break
		}
		time.Sleep(lockRetry)
	}
	if errors.Is(err, flock.ErrHeld) {
		return nil, errLocked
	}
	return nil, fmt.Errorf("lock %s: %w", path, err)
}

// namesFile reports whether path still names the open file f.
func namesFile(path string, f *os.File) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	now, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(held, now), nil
}

// replaceLocked replaces the file at path, whose exclusive lock held is,
// with a new file of content, mode 0600, and returns the new file, locked.
// The new file is locked before it takes path's place and the old lock is
// let go only after, so that the lock on what path names never lapses:
// lockExclusive refuses the new file while the lock is held, and a locker
// that got the old file meanwhile sees it replaced. On an error held is
// still held and path unchanged.
func replaceLocked(path string, held *os.File, content []byte) (*os.File, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*os.File, error) {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, err
	}
	if _, err := f.Write(content); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := flock.TryExclusive(f); err != nil {
		return fail(fmt.Errorf("lock the new %s: %w", filepath.Base(path), err))
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fail(err)
	}
	// The new file is in place and locked, and the rename cannot be taken
	// back: a failed directory sync only means a crash now could bring back
	// the old file, which is still a whole, valid one. So it is not an error.
	_ = atomicfile.SyncDir(dir)
	_ = held.Close()
	return f, nil
}

// lockHeld says whether another open file holds an exclusive lock on path.
func lockHeld(path string) (bool, error) {
	f, err := os.Open(path) //nolint:gosec // G304: a lock file in the VM's own state directory
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	switch {
	case err == nil:
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return false, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return true, nil
	default:
		return false, fmt.Errorf("lock %s: %w", path, err)
	}
}

// hostProcAttr: the vz host process gets its own session, so that it
// outlives the controller and its terminal, as a detached QEMU does.
func hostProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// signalProcess sends sig to pid.
func signalProcess(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
