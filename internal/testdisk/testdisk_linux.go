package testdisk

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// Tiny mounts a tmpfs of size ("64k", "256k") on a new temporary directory
// and returns it; the test is skipped where that cannot be done (not root,
// no mount permission). The disk is unmounted when the test ends, detached
// so that a file a child process still holds does not keep it.
func Tiny(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { assert.NoError(t, unix.Unmount(dir, unix.MNT_DETACH)) })
	return dir
}
