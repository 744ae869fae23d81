package qemu

import (
	"context"
	"os"
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
)

// Start refuses a bad spec before it runs anything, saying what is wrong
// and what is allowed.
func TestStartRejects(t *testing.T) {
	img := stubImage(t)
	good := hv.Spec{Name: "lab", Image: img, CPUs: 1, MemoryMiB: 256, StateDir: shortTempDir(t)}
	assertStartRefuses(t, good, []startRefusal{
		{"no state directory", Options{}, func(s *hv.Spec) { s.StateDir = "" }, "no state directory"},
		{"unknown architecture", Options{}, func(s *hv.Spec) { s.Image.Arch = "riscv64" }, `image "stub" is for "riscv64": want amd64 or arm64`},
		{"no vCPUs", Options{}, func(s *hv.Spec) { s.CPUs = 0 }, "0 vCPUs: want 1 to"},
		{"more vCPUs than the host", Options{}, func(s *hv.Spec) { s.CPUs = runtime.NumCPU() + 1 }, "want 1 to " + strconv.Itoa(runtime.NumCPU()) + " (this host's CPUs)"},
		{"too little memory", Options{}, func(s *hv.Spec) { s.MemoryMiB = 64 }, "64 MiB of memory: want at least 128 MiB"},
		{"negative disk", Options{}, func(s *hv.Spec) { s.DiskBytes = -1 }, "scratch disk of -1 bytes"},
		{"missing kernel", Options{}, func(s *hv.Spec) { s.Image.Kernel = filepath.Join(img.Dir, "vmlinuz-absent") }, "vmlinuz-absent: no such file or directory: rebuild the image"},
		{"no initramfs", Options{}, func(s *hv.Spec) { s.Image.Initramfs = "" }, `image "stub" has no initramfs`},
		{"socket path too long", Options{}, func(s *hv.Spec) { s.StateDir = "/tmp/" + strings.Repeat("x", 110) }, "unix sockets allow at most"},
		{"QEMU missing", Options{QEMUAMD64: "/nonexistent/qemu-system-x86_64"}, func(*hv.Spec) {}, "is not installed: " + installHint("amd64")},
	})
}

// startRefusal is a spec that Start must refuse: good changed by change,
// started with opts, and the words the error must contain.
type startRefusal struct {
	name   string
	opts   Options
	change func(*hv.Spec)
	want   string
}

// assertStartRefuses starts each refusal's spec and asserts Start refuses it
// with its words, before anything is started.
func assertStartRefuses(t *testing.T, good hv.Spec, tests []startRefusal) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := good
			tt.change(&spec)
			tt.opts.CacheDir = t.TempDir()
			m, err := New(tt.opts).Start(context.Background(), spec)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), tt.want)
			assert.NoFileExists(t, filepath.Join(spec.StateDir, hv.StateFile), "nothing was started")
		})
	}
}

func TestCheckReportsMissingQEMU(t *testing.T) {
	b := New(Options{QEMUAMD64: "/nonexistent/qemu-system-x86_64", QEMUARM64: "/nonexistent/qemu-system-aarch64", CacheDir: t.TempDir()})
	checks := b.Check(context.Background())
	byName := map[string]hv.Check{}
	for _, c := range checks {
		byName[c.Name] = c
	}
	native, other := "/nonexistent/qemu-system-x86_64", "/nonexistent/qemu-system-aarch64"
	if runtime.GOARCH == "arm64" {
		native, other = other, native
	}
	require.Contains(t, byName, native)
	assert.False(t, byName[native].OK, "this host's emulator is required")
	assert.Contains(t, byName[native].Fix, "install")
	require.Contains(t, byName, other)
	assert.True(t, byName[other].OK, "the other architecture's emulator is optional")
	assert.Contains(t, byName[other].Detail, "not installed")
	assert.True(t, byName[other].Absent, "a missing emulator is not marked ok")
	require.Contains(t, byName, "qemu-img")
	if !byName["qemu-img"].Absent {
		assert.Contains(t, byName["qemu-img"].Detail, "not needed")
	} else {
		assert.Contains(t, byName["qemu-img"].Detail, "nothing in qoslab needs it")
	}
	if runtime.GOOS == "linux" {
		assert.Contains(t, byName, kvmDevice)
		assert.Contains(t, byName, vhostVsockDevice)
	}
}

func TestCheckFindsQEMU(t *testing.T) {
	requireQEMU(t)
	checks := New(Options{CacheDir: t.TempDir()}).Check(context.Background())
	var found bool
	for _, c := range checks {
		if c.Name == "qemu-system-x86_64" {
			found = true
			assert.True(t, c.OK)
			assert.Contains(t, c.Detail, "QEMU emulator version")
		}
	}
	assert.True(t, found)
}

// TestProbeCheckWarnsOfAnUnusableKVM: a KVM whose probe boot failed (a
// paravirtual KVM a stock guest kernel aborts on) is a warning with the
// fix, not a thing missing: runs go on with TCG.
func TestProbeCheckWarnsOfAnUnusableKVM(t *testing.T) {
	now := time.Now()
	file := filepath.Join(t.TempDir(), probeFailuresFile)
	c := probeCheck(file, now)
	assert.True(t, c.OK)
	assert.False(t, c.Warn, "no failure remembered")

	reason := "the boot failed: qemu (pid 7) died of signal 6 (aborted): QEMU aborted itself"
	f := probeFailure{probeKey: probeKey{QEMU: "qemu-system-x86_64"}, At: now.Add(-time.Hour), Reason: reason}
	require.NoError(t, writeProbeFailures(file, probeFailures{Version: probeFailuresVersion}.record(f, now)))
	c = probeCheck(file, now)
	assert.True(t, c.OK, "an unusable KVM fails nothing: TCG is used")
	assert.True(t, c.Warn)
	assert.Contains(t, c.Detail, "KVM is present but unusable here")
	assert.Contains(t, c.Detail, reason)
	assert.Contains(t, c.Detail, "TCG will be used")
	assert.NotContains(t, c.Detail, "hang")
	assert.Contains(t, c.Fix, "rm "+file)

	// A failure remembered by an earlier qoslab, which called QEMU's own
	// abort a signal sent from outside, is said right.
	old := probeFailure{probeKey: probeKey{QEMU: "old"}, At: now.Add(-time.Minute), Reason: "the boot failed: qemu exited at start: qemu (pid 9) died of signal 6 (aborted), sent from outside qoslab"}
	require.NoError(t, writeProbeFailures(file, probeFailures{Version: probeFailuresVersion}.record(old, now)))
	c = probeCheck(file, now)
	assert.Contains(t, c.Detail, "died of signal 6 (aborted): QEMU aborted itself")
	assert.NotContains(t, c.Detail, "sent from outside")
}

// TestSignalCauseTellsAnAbortFromAKill: QEMU's own abort or crash is not
// a signal sent from outside qoslab; a kill is.
func TestSignalCauseTellsAnAbortFromAKill(t *testing.T) {
	log := filepath.Join(t.TempDir(), "qemu.log")
	require.NoError(t, os.WriteFile(log, []byte("kvm_init_vcpu: kvm_arch_init_vcpu failed (0): Invalid argument\n"), 0o600))
	for _, tt := range []struct {
		sig       syscall.Signal
		want, not string
	}{
		{syscall.SIGABRT, "QEMU aborted itself, not a signal from outside", "sent from outside"},
		{syscall.SIGSEGV, "QEMU crashed", "sent from outside"},
		{syscall.SIGKILL, "sent from outside qoslab", "aborted"},
		{syscall.SIGTERM, "sent from outside qoslab", "crashed"},
	} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			got := signalCause(tt.sig, log)
			assert.Contains(t, got, tt.want)
			assert.NotContains(t, got, tt.not)
			if tt.sig == syscall.SIGABRT {
				assert.Contains(t, got, "kvm_arch_init_vcpu failed", "an abort names QEMU's last words")
			}
		})
	}
}

// An interrupt that lands while QEMU's version is asked is an
// interruption (context.Canceled, which the run turns into exit 130/143),
// not a broken QEMU killed by a signal; a QEMU that fails on its own says
// how.
func TestVersionProbeInterrupted(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "started")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	hang := filepath.Join(dir, "qemu-hangs")
	// It opens the fifo (which lets the test's open return), then waits.
	require.NoError(t, os.WriteFile(hang, []byte("#!/bin/sh\nexec 3<"+fifo+"\nexec sleep 600\n"), 0o755))
	// Cancelled once the script has started, as an interrupt would be.
	cancelOnStart := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err == nil {
				_ = f.Close()
			}
			cancel()
		}()
		return ctx
	}
	_, err := versionOutput(cancelOnStart(), hang)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotContains(t, err.Error(), "signal")

	// So does a VM's start that asks it (the run's error, which
	// experiment.IsInterrupted reads).
	spec := hv.Spec{Name: "lab", Image: stubImage(t), CPUs: 1, MemoryMiB: 256, StateDir: shortTempDir(t)}
	m, err := New(Options{QEMUAMD64: hang, QEMUARM64: hang, CacheDir: t.TempDir()}).Start(cancelOnStart(), spec)
	require.Error(t, err)
	assert.Nil(t, m)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotContains(t, err.Error(), "signal")

	broken := filepath.Join(dir, "qemu-broken")
	require.NoError(t, os.WriteFile(broken, []byte("#!/bin/sh\nexit 3\n"), 0o755))
	_, err = versionOutput(context.Background(), broken)
	require.Error(t, err)
	assert.NotErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), broken+" --version: exit status 3")
}
