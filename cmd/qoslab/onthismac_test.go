package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/telemetry"
)

// A host-only bench on a Mac, saved, so with telemetry: every cell's
// threads ran at the class asked (pthread QoS applies in full on macOS),
// and the telemetry is powermetrics' when sudo -n may run it, else a note
// saying how to enable it. powermetrics may still give nothing on a Mac
// that is itself a VM (CI's hosted runners), or samples without the CPU
// clusters: then the note says so, which the test accepts, and logs.
func TestHostBenchOnThisMac(t *testing.T) {
	if runtime.GOOS != "darwin" {
		t.Skip("macOS's QoS classes and powermetrics: CI's hosted macOS job runs this (a Linux host bench is TestEndToEnd's)")
	}
	dir := binaries(t)
	res := t.TempDir()
	_, stderr, code := qoslab(t, dir, "bench", "--target", "host", "--workload", "fp", "--qos", "background,user-interactive",
		"--threads", "1-2", "--duration", "300ms", "--repeat", "1", "--save", "--results", res)
	require.Equal(t, 0, code, stderr)
	runs, err := filepath.Glob(filepath.Join(res, "bench-*"))
	require.NoError(t, err)
	require.Len(t, runs, 1)
	l, err := results.Load(runs[0])
	require.NoError(t, err)

	require.Len(t, l.Samples, 2+2*2, "two classes, 1 and 2 threads: a sample per thread")
	for _, s := range l.Samples {
		assert.Equal(t, s.QoS, s.QoSApplied, "%+v", s)
		assert.True(t, s.QoSFull, "%s: %s", s.QoSDetail, s.QoSReason)
	}

	sudo := exec.Command("sudo", "-n", "-l", "/usr/bin/powermetrics").Run() == nil
	var pm []telemetry.Sample
	for _, s := range l.Telemetry {
		if s.Sampler == telemetry.SamplerPowermetrics {
			pm = append(pm, s)
		}
	}
	notes := strings.Join(l.TelemetryNotes(), "\n")
	t.Logf("sudo -n may run powermetrics: %v; %d powermetrics samples; telemetry notes: %q", sudo, len(pm), notes)
	switch {
	case !sudo:
		assert.Empty(t, pm)
		assert.Contains(t, notes, "powermetrics needs root", "the note says how to enable it")
	case len(pm) > 0:
		clustered := false
		for _, s := range pm {
			assert.Equal(t, telemetry.ViewHost, s.View)
			clustered = clustered || len(s.Clusters) > 0
		}
		// A runner that is itself a VM may report no processor.clusters:
		// the parser then notes it, and the samples are still the host's.
		if !clustered {
			var sampleNotes []string
			for _, s := range pm {
				sampleNotes = append(sampleNotes, s.Notes...)
			}
			t.Logf("powermetrics reported no CPU clusters (a Mac that is a VM may not): per-cluster residency and frequency are unknown here; the samples' notes: %q", sampleNotes)
			assert.Regexp(t, `no processor|processor\.clusters is empty`, strings.Join(sampleNotes, "\n"), "the missing clusters are noted in the samples, not silent")
		}
	default:
		assert.Contains(t, notes, "telemetry unavailable on host", "sudo worked, so the note says what powermetrics did instead")
		assert.NotContains(t, notes, "needs root")
	}
}
