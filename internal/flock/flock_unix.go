//go:build unix

package flock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ErrHeld is a lock that another open file holds.
var ErrHeld = errors.New("locked by another open file")

// TryExclusive takes an exclusive lock on f without waiting; it lasts as
// long as f stays open. The error is ErrHeld when another open file holds a
// lock on f's file, else what flock(2) said.
func TryExclusive(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return ErrHeld
	}
	return err
}
