//go:build !unix

package macos

import (
	"errors"
	"fmt"
	"os"
)

// freeSpace is unknown here; callers skip the check on ErrUnsupported.
func freeSpace(dir string) (uint64, error) {
	return 0, fmt.Errorf("free space on %s: %w", dir, errors.ErrUnsupported)
}

// allocatedSize is a file's length where allocation cannot be read.
func allocatedSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// lockBundle does nothing where hv/vz cannot run a VM either.
func lockBundle(string) (func(), error) { return func() {}, nil }

// tartRunningPID cannot tell here; tart runs only on macOS anyway.
func tartRunningPID(string) (int, error) { return 0, nil }
