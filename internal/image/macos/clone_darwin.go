package macos

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// cloneFile makes to a copy-on-write clone of from (APFS clonefile); an
// error matching errors.ErrUnsupported means copy instead.
func cloneFile(from, to string) error {
	err := unix.Clonefile(from, to, unix.CLONE_NOFOLLOW)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOTSUP), errors.Is(err, unix.EXDEV):
		return fmt.Errorf("clone %s: %w", from, errors.ErrUnsupported)
	}
	return fmt.Errorf("clone %s to %s: %w", from, to, err)
}
