//go:build unix

package vz

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A locker that opened config.json before it was replaced, and gets the
// old file's lock once the replacer lets it go, is refused: the lock that
// counts is on the file the path names.
func TestReplaceLockedKeepsTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	held, err := lockExclusive(path, false)
	require.NoError(t, err)
	early, err := os.Open(path) // a locker's open, before the replace
	require.NoError(t, err)
	defer early.Close()

	lock, err := replaceLocked(path, held, []byte("new"))
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	require.NoError(t, unix.Flock(int(early.Fd()), unix.LOCK_EX|unix.LOCK_NB), "the old file's lock is free")
	same, err := namesFile(path, early)
	require.NoError(t, err)
	assert.False(t, same, "but the path names another file")
	_, err = lockExclusive(path, false)
	assert.ErrorIs(t, err, errLocked, "whose lock is held")

	require.NoError(t, lock.Close())
	free, err := lockExclusive(path, false)
	require.NoError(t, err)
	require.NoError(t, free.Close())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")
}
