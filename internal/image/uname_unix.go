//go:build unix

package image

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// unameRelease is uname -r.
func unameRelease() (string, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", fmt.Errorf("uname: %w", err)
	}
	return unix.ByteSliceToString(u.Release[:]), nil
}
