package hv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "qemu.log")
	assert.Equal(t, "(no "+log+")", LogTail(log))

	require.NoError(t, os.WriteFile(log, []byte("\n  \n"), 0o600))
	assert.Equal(t, "("+log+" is empty)", LogTail(log))

	require.NoError(t, os.WriteFile(log, []byte("one\n\ntwo\r\n  three  \nfour\n\n"), 0o600))
	assert.Equal(t, "two | three | four", LogTail(log), "the last three non-empty lines, trimmed")

	require.NoError(t, os.WriteFile(log, []byte("only"), 0o600))
	assert.Equal(t, "only", LogTail(log))

	assert.Contains(t, LogTail(dir), "("+dir+": ", "a directory is no log")
}
