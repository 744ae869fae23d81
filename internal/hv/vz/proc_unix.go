//go:build unix

package vz

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
// not drop it.
func lockExclusive(path string, create bool) (*os.File, error) {
	flag := os.O_RDONLY
	if create {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || i == lockRetries {
			break
		}
		time.Sleep(lockRetry)
	}
	_ = f.Close()
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, errLocked
	}
	return nil, fmt.Errorf("lock %s: %w", path, err)
}

// lockHeld says whether another open file holds an exclusive lock on path.
func lockHeld(path string) (bool, error) {
	f, err := os.Open(path)
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
