//go:build unix

package flock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// The lock is the open file's: a second open in this process is refused
// while the first is open, whatever else closes, and gets it once the
// first is closed.
func TestTryExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	first, second := open(t, path), open(t, path)
	require.NoError(t, TryExclusive(first))
	require.NoError(t, TryExclusive(first), "taking it again on the same open file")

	assert.ErrorIs(t, TryExclusive(second), ErrHeld)
	other := open(t, path)
	require.NoError(t, other.Close())
	assert.ErrorIs(t, TryExclusive(second), ErrHeld, "closing another open file of it lets nothing go")

	require.NoError(t, first.Close())
	assert.NoError(t, TryExclusive(second))
}

// A shared lock held elsewhere refuses it too.
func TestTryExclusiveAgainstShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	reader, f := open(t, path), open(t, path)
	require.NoError(t, unix.Flock(int(reader.Fd()), unix.LOCK_SH|unix.LOCK_NB))
	assert.ErrorIs(t, TryExclusive(f), ErrHeld)
	require.NoError(t, unix.Flock(int(reader.Fd()), unix.LOCK_UN))
	assert.NoError(t, TryExclusive(f))
}

// What is not a held lock is flock's own error, not ErrHeld.
func TestTryExclusiveOtherErrors(t *testing.T) {
	f := open(t, filepath.Join(t.TempDir(), "lock"))
	require.NoError(t, f.Close())
	err := TryExclusive(f)
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrHeld), "%v", err)
}
