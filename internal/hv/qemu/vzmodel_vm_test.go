//go:build linux

package qemu

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/testvm"
	"github.com/qoslab/qoslab/internal/transport"
)

// These tests run the vz model for real, QEMU and its vhost-device-vsock,
// with a stub arm64 kernel that spins: what they check is the host side
// (the daemon lives and dies with its VM), not the guest.

// requireVZModel skips without qemu-system-aarch64 or vhost-device-vsock;
// CI (QOSLAB_REQUIRE_VM=1), which installs both, fails instead.
func requireVZModel(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-aarch64"); err != nil {
		vmMissing(t, "no qemu-system-aarch64 (sudo apt-get install qemu-system-arm)")
	}
	if _, _, err := New(Options{VhostVsockDirs: testvm.VhostVsockDirs()}).FindVhostVsock(context.Background()); err != nil {
		vmMissing(t, err.Error())
	}
}

func vzStubSpec(t *testing.T) hv.Spec {
	return hv.Spec{Name: "vzstub", Image: arm64Stub(t), CPUs: 1, MemoryMiB: 128, Accel: AccelTCG, Model: hv.ModelVZ, StateDir: shortTempDir(t)}
}

// alive says whether pid is a process that has not ended (a zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

func TestVZModelStartStop(t *testing.T) {
	requireVZModel(t)
	spec := vzStubSpec(t)
	m := startVM(t, New(Options{CacheDir: t.TempDir(), VhostVsockDirs: testvm.VhostVsockDirs()}), spec)
	info := m.Info()
	assert.Equal(t, "qemu", info.Backend, "the vz model is QEMU's")
	assert.Equal(t, hv.ModelVZ, info.Model)
	state, err := ReadState(spec.StateDir)
	require.NoError(t, err)
	assert.Equal(t, hv.ModelVZ, state.Model)
	assert.Equal(t, "0.3.0", state.VsockDaemonVersion)
	require.Positive(t, state.VsockDaemonPID)
	assert.True(t, alive(state.VsockDaemonPID), "the daemon runs beside QEMU")
	pgid, err := syscall.Getpgid(state.VsockDaemonPID)
	require.NoError(t, err)
	assert.Equal(t, state.VsockDaemonPID, pgid, "the daemon has its own process group, out of reach of the terminal's Ctrl-C")
	assert.Equal(t, filepath.Join(spec.StateDir, hybridVsockFile), state.HybridVsockSocket)
	assert.Empty(t, state.AgentSocket, "no virtio-serial agent port")
	assert.NotContains(t, strings.Join(state.Args, " "), "virtserialport")
	assert.Contains(t, strings.Join(state.Args, " "), "vhost-user-vsock-pci,chardev=vsock")

	// No guest listens (the stub has no vsock driver): a dial waits, and
	// ends with its context.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err = m.DialAgent(ctx)
	cancel()
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "vsock port 1024")

	require.NoError(t, m.Stop(context.Background()))
	waitDone(t, m, time.Second)
	assert.NoError(t, m.Err(), "a stop is clean")
	assert.True(t, processGone(info.PID), "no QEMU is left")
	assert.False(t, alive(state.VsockDaemonPID), "no daemon is left")
	assert.NoFileExists(t, state.HybridVsockSocket)
	assert.NoFileExists(t, filepath.Join(spec.StateDir, vhostUserSocketFile))
}

// Before QEMU has set up the device, the daemon closes a host connection
// at once: to the dialler, a refusal, tried again until the VM answers.
func TestVZModelRefusesUntilTheGuestListens(t *testing.T) {
	requireVZModel(t)
	spec := vzStubSpec(t)
	m := startVM(t, New(Options{CacheDir: t.TempDir(), VhostVsockDirs: testvm.VhostVsockDirs()}), spec)
	state, err := ReadState(spec.StateDir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = transport.DialHybridVsock(ctx, state.HybridVsockSocket, 1024)
	require.Error(t, err)
	// The stub never loads a vsock driver: the daemon either closes the
	// connection (no device set up) or holds it unanswered.
	if !errors.Is(err, transport.ErrHybridVsockRefused) {
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	}
	_ = m.Stop(context.Background())
}

// A daemon that dies while its VM runs fails the VM, which is stopped: the
// agent is out of reach.
func TestVZModelDaemonDeathFailsTheVM(t *testing.T) {
	requireVZModel(t)
	spec := vzStubSpec(t)
	m := startVM(t, New(Options{CacheDir: t.TempDir(), VhostVsockDirs: testvm.VhostVsockDirs()}), spec)
	state, err := ReadState(spec.StateDir)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(state.VsockDaemonPID, syscall.SIGKILL))
	waitDone(t, m, 15*time.Second)
	require.Error(t, m.Err())
	assert.Contains(t, m.Err().Error(), "vhost-device-vsock (pid ")
	assert.Contains(t, m.Err().Error(), "ended while the VM ran (signal: killed")
	assert.Contains(t, m.Err().Error(), "the VM was stopped")
	assert.True(t, processGone(m.Info().PID), "no QEMU is left")
}

// QEMU killed from outside takes its daemon with it.
func TestVZModelQEMUKilledStopsTheDaemon(t *testing.T) {
	requireVZModel(t)
	spec := vzStubSpec(t)
	m := startVM(t, New(Options{CacheDir: t.TempDir(), VhostVsockDirs: testvm.VhostVsockDirs()}), spec)
	state, err := ReadState(spec.StateDir)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(m.Info().PID, syscall.SIGKILL))
	waitDone(t, m, 5*time.Second)
	require.Error(t, m.Err())
	assert.Contains(t, m.Err().Error(), "died of signal 9")
	assert.False(t, alive(state.VsockDaemonPID), "Done closes once the daemon is gone too")
}

// Ctrl-C while booting leaves neither QEMU nor the daemon.
func TestVZModelCancelledDuringBoot(t *testing.T) {
	requireVZModel(t)
	spec := vzStubSpec(t)
	ctx, cancel := context.WithCancel(context.Background())
	var qemuPID, daemonPID int
	spec.Ready = func(ctx context.Context, m hv.Machine) error {
		qemuPID = m.Info().PID
		if st, err := ReadState(spec.StateDir); err == nil {
			daemonPID = st.VsockDaemonPID
		}
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	m, err := New(Options{CacheDir: t.TempDir(), VhostVsockDirs: testvm.VhostVsockDirs()}).Start(ctx, spec)
	assert.Nil(t, m)
	require.ErrorIs(t, err, context.Canceled)
	require.Positive(t, qemuPID)
	require.Positive(t, daemonPID)
	assert.True(t, processGone(qemuPID), "no QEMU is left")
	assert.False(t, alive(daemonPID), "no daemon is left")
}

// A daemon that cannot start fails the boot, saying why, and no QEMU
// starts.
func TestVZModelDaemonFailsToStart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the vz model runs on Linux hosts")
	}
	requireVZModel(t)
	dir := t.TempDir()
	fake := filepath.Join(dir, VhostVsockName)
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\nif [ \"$1\" = --version ]; then echo vhost-device-vsock 0.3.0; exit 0; fi\necho 'cannot bind the socket' >&2\nexit 3\n"), 0o755))
	spec := vzStubSpec(t)
	_, err := New(Options{CacheDir: t.TempDir(), VhostVsock: fake}).Start(context.Background(), spec)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "vhost-device-vsock exited at start: exit status 3; cannot bind the socket")
	assert.NoFileExists(t, filepath.Join(spec.StateDir, qemuLogFile), "QEMU was not started")
}
