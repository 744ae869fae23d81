package inputfile

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

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
	_, err = readLimit("--recipe big.yaml", big, "a recipe", 1024)
	assert.EqualError(t, err, "--recipe big.yaml: 2KiB is over the 1KiB limit for a recipe")

	_, err = Read("--spec "+dir, dir, "a YAML spec")
	assert.EqualError(t, err, "--spec "+dir+": not a regular file (a directory); give a YAML spec")

	_, err = Read("--config nope", filepath.Join(dir, "nope"), "a YAML config file")
	assert.ErrorContains(t, err, "--config nope: stat ")
	assert.ErrorContains(t, err, "no such file or directory")

	if runtime.GOOS != "windows" {
		_, err = Read("--spec /dev/zero", "/dev/zero", "a YAML spec")
		assert.EqualError(t, err, "--spec /dev/zero: not a regular file (a character device); give a YAML spec")
	}
}

// A named pipe is refused at once: opening one for reading blocks until a
// writer comes, which once hung `qoslab run --spec FIFO` for good.
func TestReadRefusesANamedPipeAtOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes in the file system")
	}
	fifo := filepath.Join(t.TempDir(), "spec.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() {
		_, err := Read("--spec "+fifo, fifo, "a YAML spec")
		done <- err
	}()
	select {
	case err := <-done:
		assert.EqualError(t, err, "--spec "+fifo+": not a regular file (a named pipe); give a YAML spec")
	case <-time.After(30 * time.Second):
		// Unblock the open so the goroutine ends with the test.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("reading a named pipe blocked")
	}
}

// A symbolic link to a regular file is read through, as open would.
func TestReadFollowsASymlinkToAFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.yaml")
	require.NoError(t, os.WriteFile(real, []byte("name: x\n"), 0o644))
	link := filepath.Join(dir, "link.yaml")
	require.NoError(t, os.Symlink(real, link))
	b, err := Read("--spec "+link, link, "a YAML spec")
	require.NoError(t, err)
	assert.Equal(t, "name: x\n", string(b))
}
