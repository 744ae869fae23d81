//go:build unix

package macos

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/flock"
	"github.com/qoslab/qoslab/internal/hv/vz"
)

// freeSpace is what an unprivileged user may still write on dir's file
// system (f_bavail: blocks reserved for root do not count).
func freeSpace(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("free space on %s: %w", dir, err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

// allocatedSize is what a file takes on disk: a sparse guest disk takes far
// less than its length.
func allocatedSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return min(int64(st.Blocks)*512, fi.Size()), nil
	}
	return fi.Size(), nil
}

// lockBundle takes the lock hv/vz holds while a VM runs from the bundle
// (flock on config.json), so the disk is never written from two sides.
func lockBundle(dir string) (func(), error) {
	path := filepath.Join(dir, vz.BundleConfigFile)
	// hv/vz replaces config.json under its lock (to keep a new MAC
	// address): a lock got on the file it replaced is no lock, so the file
	// path names now is tried again.
	for try := 0; try < 3; try++ {
		f, err := os.Open(path) //nolint:gosec // G304: config.json of the bundle the user names
		if err != nil {
			return nil, fmt.Errorf("lock the VM bundle: %w", err)
		}
		if err := flock.TryExclusive(f); err != nil {
			f.Close()
			if errors.Is(err, flock.ErrHeld) {
				return nil, fmt.Errorf("VM bundle %s is in use by a running VM: stop it first (`qoslab vm stop`), or provision it running with `--via ssh USER@ADDR`", dir)
			}
			return nil, fmt.Errorf("lock the VM bundle %s: %w", dir, err)
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(path)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return func() { f.Close() }, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("VM bundle %s: its %s keeps being replaced; is a VM starting from it? Try again once it runs or has stopped", dir, vz.BundleConfigFile)
}

// tartRunningPID is the pid of the tart process running the VM, or 0. tart
// holds an fcntl write lock on config.json while it runs a VM (PIDLock.swift)
// and finds the pid the same way: F_GETLK, which takes no lock.
func tartRunningPID(config string) (int, error) {
	f, err := os.Open(config) //nolint:gosec // G304: config.json of the tart VM the user names
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return 0, fmt.Errorf("ask whether tart runs it: %w", err)
	}
	if lk.Type == unix.F_UNLCK {
		return 0, nil
	}
	return int(lk.Pid), nil
}
