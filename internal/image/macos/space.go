package macos

import (
	"errors"
	"fmt"
)

// FreeSpaceFunc tells how many bytes may still be written in dir. Options
// take one so tests can pretend a disk is full; nil means the file system's
// own answer (statfs).
type FreeSpaceFunc func(dir string) (uint64, error)

// checkFreeSpace refuses to start what would run dir's disk out of space
// half-way. A platform that cannot tell free space skips the check.
func checkFreeSpace(free FreeSpaceFunc, dir string, need uint64, what string) error {
	if free == nil {
		free = freeSpace
	}
	have, err := free(dir)
	if errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	if err != nil {
		return err
	}
	if have < need {
		return fmt.Errorf("%s needs %s free in %s, only %s is free: free up %s or choose a directory on another disk",
			what, formatBytes(int64(need)), dir, formatBytes(int64(have)), formatBytes(int64(need-have)))
	}
	return nil
}
