package qemu

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
)

// PlanAccel says what Start would boot with, for a dry run, without QEMU
// (none is on PATH here): as asked, the probe, or a remembered failure.
func TestPlanAccelRunsNothing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	cache := t.TempDir()
	b := New(Options{CacheDir: cache})
	kernel := filepath.Join(t.TempDir(), "vmlinuz")
	require.NoError(t, os.WriteFile(kernel, make([]byte, 100), 0o644))
	img := hv.Image{Kernel: kernel, KernelVersion: "6.1.0-56-amd64", Arch: runtime.GOARCH}

	accel, why, err := b.PlanAccel(hv.Spec{Image: img, Accel: AccelTCG})
	require.NoError(t, err)
	assert.Equal(t, AccelTCG, accel)
	assert.Equal(t, "as asked", why)

	if runtime.GOOS != "linux" || kvmProblem() != "" {
		t.Skip("no usable /dev/kvm: the choice without --accel is TCG, which planAccel's own tests cover")
	}
	accel, why, err = b.PlanAccel(hv.Spec{Image: img})
	require.NoError(t, err)
	assert.Equal(t, accelKVM, accel)
	assert.Contains(t, why, "if a probe boot reaches the agent within 15s, else tcg")

	name, size := kernelKey(img)
	failure := probeFailure{probeKey: probeKey{QEMU: "/usr/bin/qemu-system-x86_64", QEMUVersion: "QEMU emulator version 7.2", Kernel: name, KernelSize: size, HostKernel: hostKernelRelease()},
		At: time.Now().Add(-time.Hour), Reason: "no agent within 15s (nested KVM?)"}
	require.NoError(t, writeProbeFailures(filepath.Join(cache, probeFailuresFile), probeFailures{Version: probeFailuresVersion, Failures: []probeFailure{failure}}))
	accel, why, err = b.PlanAccel(hv.Spec{Image: img})
	require.NoError(t, err)
	assert.Equal(t, AccelTCG, accel, "a KVM probe that failed for this kernel is remembered")
	assert.Contains(t, why, "KVM probe failed")
}
