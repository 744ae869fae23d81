package vz

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
)

func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p, err := planVM(hv.Spec{Image: linuxImage(t), CPUs: 2, MemoryMiB: 512, DiskBytes: 1 << 20, StateDir: dir}, testLimits)
	require.NoError(t, err)
	want := state{
		Info: hv.MachineInfo{Backend: backendName, Name: "lab", PID: 4242, Accel: backendName, CPUs: 2, MemoryMiB: 512,
			StateDir: dir, ConsoleLog: p.ConsoleLog, Disk: p.ScratchDisk, GuestDisk: p.GuestDisk, BootNs: 1234, Image: p.Image},
		Phase: phaseRunning, Detached: true, Plan: p, HostLog: filepath.Join(dir, hostLogFile),
		StartedAt: time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC),
	}
	require.NoError(t, writeState(dir, want))
	got, err := readState(dir)
	require.NoError(t, err)
	want.Version = stateVersion
	assert.Equal(t, want, got)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestReadStateRefusals(t *testing.T) {
	dir := t.TempDir()
	_, err := readState(dir)
	assert.ErrorContains(t, err, "no VM was started there")

	path := filepath.Join(dir, hv.StateFile)
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 2, "info": {"backend": "vz"}}`), 0o600))
	_, err = readState(dir)
	assert.ErrorContains(t, err, "has version 2; this qoslab reads version 1")

	require.NoError(t, os.WriteFile(path, []byte(`{"version": 1, "info": {"backend": "qemu"}}`), 0o600))
	_, err = readState(dir)
	assert.ErrorContains(t, err, `is of a "qemu" VM, not a vz one`)

	require.NoError(t, os.WriteFile(path, []byte(`{"version":`), 0o600))
	_, err = readState(dir)
	assert.ErrorContains(t, err, "read VM state")
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), lockFile)
	held, err := lockHeld(path)
	require.NoError(t, err)
	assert.False(t, held, "no lock file, no lock")

	f, err := lockExclusive(path, true)
	require.NoError(t, err)
	held, err = lockHeld(path)
	require.NoError(t, err)
	assert.True(t, held)
	_, err = lockExclusive(path, true)
	assert.ErrorIs(t, err, errLocked, "a second open file is refused, even in the same process")

	require.NoError(t, f.Close())
	held, err = lockHeld(path)
	require.NoError(t, err)
	assert.False(t, held)

	_, err = lockExclusive(filepath.Join(t.TempDir(), "absent"), false)
	assert.ErrorIs(t, err, os.ErrNotExist, "a bundle's lock is never created")
}
