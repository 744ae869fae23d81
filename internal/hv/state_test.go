package hv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/atomicfile"
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

	require.NoError(t, atomicfile.WriteJSON(filepath.Join(dir, StateFile), testState{Version: 1, Name: "a"}))
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

type attachState struct {
	Version int         `json:"version"`
	Info    MachineInfo `json:"info"`
}

// AttachState reads the state from the absolute directory, refuses a VM
// that is not running with what has ended, passes on running's own error,
// and clears the boot time, which was not this controller's.
func TestAttachState(t *testing.T) {
	dir := t.TempDir()
	read := func(dir string) (attachState, error) {
		return ReadState(dir, 1, func(s *attachState) int { return s.Version })
	}
	info := func(s *attachState) *MachineInfo { return &s.Info }
	var askedDir string
	runs, gone, runErr := true, "", error(nil)
	running := func(dir string, s attachState) (bool, string, error) {
		askedDir = dir
		return runs, gone, runErr
	}

	_, err := AttachState(dir, read, info, running)
	assert.ErrorContains(t, err, "attach to the VM in "+dir+": ")
	assert.ErrorContains(t, err, "no VM was started there")

	require.NoError(t, atomicfile.WriteJSON(filepath.Join(dir, StateFile), attachState{Version: 1, Info: MachineInfo{Name: "lab", PID: 12, BootNs: 5e9}}))
	t.Chdir(filepath.Dir(dir))
	s, err := AttachState(filepath.Base(dir), read, info, running)
	require.NoError(t, err)
	assert.Equal(t, dir, askedDir, "running is asked about the absolute directory")
	assert.Equal(t, "lab", s.Info.Name)
	assert.Zero(t, s.Info.BootNs, "not booted by this controller")

	runs, gone = false, "qemu pid 12"
	_, err = AttachState(dir, read, info, running)
	assert.EqualError(t, err, "attach to VM lab: it is not running (qemu pid 12 has ended); start it again")

	lockErr := errors.New("lock: permission denied")
	runErr = lockErr
	_, err = AttachState(dir, read, info, running)
	assert.ErrorIs(t, err, lockErr)
	assert.EqualError(t, err, "attach to VM lab: lock: permission denied")
}
