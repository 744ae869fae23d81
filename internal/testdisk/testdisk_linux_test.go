package testdisk

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The disk holds about its size, and writing past that fails with ENOSPC.
func TestTinyFillsAtItsSize(t *testing.T) {
	dir := Tiny(t, "64k")
	f, err := os.Create(filepath.Join(dir, "filler"))
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 4096)
	written := 0
	for written <= 1<<20 {
		if _, err = f.Write(chunk); err != nil {
			break
		}
		written += len(chunk)
	}
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Equal(t, 64<<10, written, "a 64k tmpfs holds 64 KiB of data")
}
