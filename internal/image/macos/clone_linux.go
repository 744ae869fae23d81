package macos

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// cloneFile makes to a copy-on-write clone of from (FICLONE, on btrfs or
// XFS); an error matching errors.ErrUnsupported means copy instead.
func cloneFile(from, to string) error {
	src, err := os.Open(from) //nolint:gosec // G304: a file of a bundle or tart VM the user names
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // G304: a file of the bundle being made
	if err != nil {
		return err
	}
	err = unix.IoctlFileClone(int(dst.Fd()), int(src.Fd()))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		return nil
	}
	os.Remove(to)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTTY) {
		return fmt.Errorf("clone %s: %w", from, errors.ErrUnsupported)
	}
	return fmt.Errorf("clone %s to %s: %w", from, to, err)
}
