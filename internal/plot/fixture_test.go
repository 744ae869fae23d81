package plot

import (
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
	return Input{Name: d.Run.Name, Samples: samples, Summary: summary.Analyze(samples, "host", "vm")}
}

func loadTelemetry(t *testing.T) []telemetry.Sample {
	t.Helper()
	ts, notes, err := telemetry.ReadFile(fixtureDir("telemetry-constructed.jsonl"))
	require.NoError(t, err)
	require.Empty(t, notes)
	require.NotEmpty(t, ts)
	return ts
}
