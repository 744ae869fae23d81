//go:build !linux && !darwin

package macos

import (
	"errors"
	"fmt"
)

// cloneFile cannot clone here: copy instead.
func cloneFile(from, _ string) error {
	return fmt.Errorf("clone %s: %w", from, errors.ErrUnsupported)
}
