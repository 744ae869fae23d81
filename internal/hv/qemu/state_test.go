package qemu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
)

func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := State{
		Info: hv.MachineInfo{
			Backend: "qemu", Name: "lab", PID: 4242, Accel: AccelTCG, CPUs: 2, MemoryMiB: 512,
			VCPUThreads: []int{4250, 4251}, StateDir: dir, ConsoleLog: filepath.Join(dir, consoleLogFile),
			Disk: filepath.Join(dir, scratchDiskFile), GuestDisk: "/dev/vda", BootNs: 1234567,
			Image: hv.Image{Name: "debian", Kernel: "/k", Initramfs: "/i", Arch: "amd64", KernelVersion: "6.1.0-56-amd64"},
		},
		RequestedAccel: "", DiskBytes: 1 << 30, DiskCache: "writeback", Detached: true, Machine: machineQ35,
		QEMU: "/usr/bin/qemu-system-x86_64", QEMUVersion: "QEMU emulator version 7.2.22", Args: []string{"-machine", "q35"},
		QMPSocket: filepath.Join(dir, qmpSocketFile), AgentSocket: filepath.Join(dir, agentSocketFile), VsockCID: 77,
		StartedAt: time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC),
	}
	require.NoError(t, writeState(dir, want))
	got, err := ReadState(dir)
	require.NoError(t, err)
	want.Version = stateVersion
	assert.Equal(t, want, got)

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestReadStateErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadState(dir)
	assert.ErrorContains(t, err, "no VM was started there")

	require.NoError(t, os.WriteFile(filepath.Join(dir, hv.StateFile), []byte(`{"version": 2}`), 0o644))
	_, err = ReadState(dir)
	assert.ErrorContains(t, err, "has version 2; this qoslab reads version 1")
}

func TestCheckSocketPath(t *testing.T) {
	assert.NoError(t, checkSocketPath("/tmp/qoslab/vm/qmp.sock"))
	long := "/" + strings.Repeat("d", maxSocketPath-len("/qmp.sock")) + "/qmp.sock"
	err := checkSocketPath(long)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "use a shorter state directory")
	assert.NoError(t, checkSocketPath(long[:maxSocketPath]))
}
