package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteKeepsOldOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	require.NoError(t, Write(path, []byte("old\n")))
	require.NoError(t, Write(path, []byte("new\n")))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "results are readable by others, unlike a temp file's 0600")

	err = Write(filepath.Join(dir, "missing", "x.json"), []byte("x"))
	assert.ErrorContains(t, err, filepath.Join(dir, "missing", "x.json"))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, "summary.json", strings.Join(names, ","))
}
