package qemu

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProbeFailures(t *testing.T) {
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	key := probeKey{QEMU: "/usr/bin/qemu-system-x86_64", QEMUVersion: "QEMU emulator version 7.2.22", Kernel: "vmlinuz 6.1.0-56-amd64", KernelSize: 8247232, HostKernel: "6.18.44"}
	otherKernel := key
	otherKernel.Kernel = "vmlinuz 6.12.0-1-amd64"

	file := filepath.Join(t.TempDir(), "cache", probeFailuresFile)
	v, err := readProbeFailures(file)
	require.NoError(t, err, "a missing file remembers no failure")
	_, found := v.failed(key, now)
	assert.False(t, found)

	v = v.record(probeFailure{probeKey: key, At: now.Add(-time.Hour), Reason: "no agent within 15s"}, now)
	require.NoError(t, writeProbeFailures(file, v))
	v, err = readProbeFailures(file)
	require.NoError(t, err)

	f, found := v.failed(key, now)
	require.True(t, found)
	assert.Equal(t, "no agent within 15s", f.Reason)
	assert.True(t, f.At.Equal(now.Add(-time.Hour)))
	_, found = v.failed(otherKernel, now)
	assert.False(t, found, "a failure is about one QEMU and kernel")
	_, found = v.failed(key, now.Add(probeFailureTTL))
	assert.False(t, found, "a failure is forgotten after a week")

	latest, found := v.latest(now)
	require.True(t, found)
	assert.Equal(t, key, latest.probeKey)

	// Recording again replaces the key's failure and drops expired ones.
	later := now.Add(probeFailureTTL)
	v = v.record(probeFailure{probeKey: otherKernel, At: later, Reason: "qemu exited"}, later)
	assert.Len(t, v.Failures, 1)
	v = v.record(probeFailure{probeKey: otherKernel, At: later.Add(time.Minute), Reason: "again"}, later)
	require.Len(t, v.Failures, 1)
	assert.Equal(t, "again", v.Failures[0].Reason)
}

func TestProbeFailuresIgnoresGarbage(t *testing.T) {
	file := filepath.Join(t.TempDir(), probeFailuresFile)
	require.NoError(t, os.WriteFile(file, []byte(`{"version": 99}`), 0o644))
	v, err := readProbeFailures(file)
	assert.ErrorContains(t, err, "ignoring it")
	assert.Empty(t, v.Failures)
	assert.Equal(t, probeFailuresVersion, v.Version, "what replaces it can still be written")
}
