package hv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testState struct {
	Version int    `json:"version"`
	Name    string `json:"name"`
}

func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	version := func(s *testState) int { return s.Version }

	_, err := ReadState(dir, 1, version)
	assert.ErrorContains(t, err, "no VM was started there")

	require.NoError(t, WriteJSONFile(filepath.Join(dir, StateFile), testState{Version: 1, Name: "a"}))
	s, err := ReadState(dir, 1, version)
	require.NoError(t, err)
	assert.Equal(t, "a", s.Name)

	_, err = ReadState(dir, 2, version)
	assert.ErrorContains(t, err, "has version 1; this qoslab reads version 2")

	require.NoError(t, os.WriteFile(filepath.Join(dir, StateFile), []byte("{"), 0o644))
	_, err = ReadState(dir, 1, version)
	assert.ErrorContains(t, err, "read VM state")

	left, _ := filepath.Glob(filepath.Join(dir, StateFile+".*"))
	assert.Empty(t, left, "no temporary file is left behind")
}
