//go:build unix

package results

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The lock file is truncated and rewritten: one that is a symbolic link, a
// hard link to another file or not a regular file is refused, and the file
// it leads to is left as it was.
func TestLockRefusesWhatIsNotItsOwnFile(t *testing.T) {
	precious := filepath.Join(t.TempDir(), "thesis.tex")
	const text = "two years of work\n"
	cases := []struct {
		name string
		make func(lock string) error
		want string
	}{
		{"symbolic link", func(lock string) error { return os.Symlink(precious, lock) }, "is a symbolic link, not qoslab's lock file: remove it"},
		{"hard link", func(lock string) error { return os.Link(precious, lock) }, "has 2 hard links, so it is another file's too"},
		{"named pipe", func(lock string) error { return syscall.Mkfifo(lock, 0o644) }, "is not a regular file (a named pipe)"},
		{"directory", func(lock string) error { return os.Mkdir(lock, 0o755) }, "is not a regular file (a directory)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(precious, []byte(text), 0o644))
			d, err := Create(t.TempDir(), "locked", time.Now())
			require.NoError(t, err)
			lock := filepath.Join(d.Path, LockFile)
			require.NoError(t, tc.make(lock))
			_, err = d.Lock()
			assert.ErrorContains(t, err, lock+" "+tc.want)
			b, err := os.ReadFile(precious)
			require.NoError(t, err)
			assert.Equal(t, text, string(b), "the file the lock leads to is untouched")
			_, running := Running(d.Path)
			assert.False(t, running)
		})
	}
}
