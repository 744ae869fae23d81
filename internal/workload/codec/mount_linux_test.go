package codec

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of size bytes on a new temporary directory and
// unmounts it when the test ends; it skips the test when mounting is not
// possible here.
func mountTmpfs(t *testing.T, size int, readOnly bool) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	var flags uintptr
	if readOnly {
		flags = unix.MS_RDONLY
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", flags, "size="+strconv.Itoa(size)); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		assert.NoError(t, unix.Unmount(dir, unix.MNT_DETACH), "unmount %s", dir)
	})
	return dir
}
