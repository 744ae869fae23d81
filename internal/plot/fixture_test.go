package plot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/telemetry"
)

// fixtureDir is the repository's result fixtures (see its README.md).
func fixtureDir(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata", "results"}, parts...)...)
}

// loadRun reads a results directory fixture as the plot command would.
func loadRun(t *testing.T, name string) Input {
	t.Helper()
	d, err := results.Open(fixtureDir(name))
	require.NoError(t, err)
	recs, torn, err := d.ReadSamples()
	require.NoError(t, err)
	require.Nil(t, torn, "fixture %s has a torn tail", name)
	require.NotEmpty(t, recs, "fixture %s has no samples", name)
	samples := results.Samples(recs)
	return Input{Name: d.Run.Name, Samples: samples, Analysis: summary.Analyze(samples, "host", "vm")}
}

func loadTelemetry(t *testing.T) []telemetry.Sample {
	t.Helper()
	ts, notes, err := telemetry.ReadFile(fixtureDir("telemetry-constructed.jsonl"))
	require.NoError(t, err)
	require.Empty(t, notes)
	require.NotEmpty(t, ts)
	return ts
}

// TestWriteReview renders every fixture chart as PNG into
// $QOSLAB_PLOT_REVIEW for a person to look at; it is skipped otherwise.
func TestWriteReview(t *testing.T) {
	dir := os.Getenv("QOSLAB_PLOT_REVIEW")
	if dir == "" {
		t.Skip("set QOSLAB_PLOT_REVIEW to a directory to render the fixture charts for review")
	}
	format := os.Getenv("QOSLAB_PLOT_FORMAT")
	if format == "" {
		format = "png"
	}
	in := loadRun(t, "linux-fixture")
	in.Telemetry = loadTelemetry(t)
	charts, skipped := Charts(in)
	paths, err := WriteAll(dir, charts, format)
	require.NoError(t, err)
	for _, p := range paths {
		t.Log(p)
	}
	for _, s := range skipped {
		t.Logf("skipped %s: %s", s.Name, s.Reason)
	}
	contention := loadRun(t, "linux-contention")
	charts, _ = Charts(contention)
	for i := range charts {
		charts[i].Name = "contention-" + charts[i].Name
	}
	_, err = WriteAll(dir, charts, format)
	require.NoError(t, err)
}
