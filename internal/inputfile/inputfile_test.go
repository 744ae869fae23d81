package inputfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "spec.yaml")
	require.NoError(t, os.WriteFile(ok, []byte("matrix: []\n"), 0o644))
	b, err := Read("--spec "+ok, ok, "a YAML spec")
	require.NoError(t, err)
	assert.Equal(t, "matrix: []\n", string(b))

	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, make([]byte, 2048), 0o644))
	_, err = ReadLimit("--recipe big.yaml", big, "a recipe", 1024)
	assert.EqualError(t, err, "--recipe big.yaml: 2KiB is over the 1KiB limit for a recipe")

	_, err = Read("--spec "+dir, dir, "a YAML spec")
	assert.EqualError(t, err, "--spec "+dir+": not a regular file (a directory); give a YAML spec")

	_, err = Read("--config nope", filepath.Join(dir, "nope"), "a YAML config file")
	assert.ErrorContains(t, err, "--config nope: open ")

	if runtime.GOOS != "windows" {
		_, err = Read("--spec /dev/zero", "/dev/zero", "a YAML spec")
		assert.EqualError(t, err, "--spec /dev/zero: not a regular file (a character device); give a YAML spec")
	}
}
