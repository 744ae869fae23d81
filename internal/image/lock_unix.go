//go:build unix

package image

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/qoslab/qoslab/internal/flock"
)

// lockImage keeps two builds of one image from swapping at once.
func lockImage(store, name string) (func(), error) {
	p := filepath.Join(store, ".lock~"+name)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644) //nolint:gosec // G304: the lock file in the image store the user names
	if err != nil {
		return nil, fmt.Errorf("image store: %w", err)
	}
	if err := flock.TryExclusive(f); err != nil {
		_ = f.Close()
		if errors.Is(err, flock.ErrHeld) {
			return nil, fmt.Errorf("image %s: another build of it is running (lock %s)", name, p)
		}
		return nil, fmt.Errorf("image store: lock %s: %w", p, err)
	}
	return func() { f.Close() }, nil
}
