package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
)

// parsePlot runs `qoslab plot args...` and returns the options it would
// have run with.
func parsePlot(t *testing.T, args ...string) (*plotOptions, error) {
	t.Helper()
	var got *plotOptions
	cmd := newCmdPlot(testFactory(t, nil), func(_ context.Context, o *plotOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	return got, cmd.Execute()
}

func TestPlotFlags(t *testing.T) {
	o, err := parsePlot(t, "some/dir", "--format", "svg", "--only", "throughput")
	require.NoError(t, err)
	assert.Equal(t, []string{"some/dir"}, o.Dirs)
	assert.Equal(t, "svg", o.Format)
	assert.Equal(t, "throughput", o.Only)

	o, err = parsePlot(t, "d")
	require.NoError(t, err)
	assert.Equal(t, "png", o.Format, "PNG unless asked")

	_, err = parsePlot(t, "d", "--format", "jpeg")
	require.Error(t, err)
	assert.True(t, isUsageError(err))
	assert.Contains(t, err.Error(), `"jpeg"`)
	assert.Contains(t, err.Error(), "png, svg, pdf")

	_, err = parsePlot(t)
	require.Error(t, err, "DIR is required")
}

// copyFixture copies a results fixture to a temporary directory.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, f := range []string{results.RunFile, results.SamplesFile} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "results", name, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	return dir
}

func TestPlotRunWritesChosenCharts(t *testing.T) {
	dir := copyFixture(t, "linux-contention")
	streams, out, errOut := testIO()
	require.NoError(t, plotRun(context.Background(), &plotOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{dir}}, Format: "svg", Only: "throughput"}))
	written := strings.Fields(out.String())
	require.Equal(t, []string{filepath.Join(dir, results.PlotsDir, "throughput-fp.svg")}, written)
	assert.FileExists(t, written[0])
	assert.Empty(t, errOut.String(), "throughput has data: nothing skipped to report")

	streams, out, errOut = testIO()
	require.NoError(t, plotRun(context.Background(), &plotOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{dir}}, Format: "png"}))
	assert.Contains(t, errOut.String(), "skipped compression:", "a chart without data is named, not drawn")
	assert.NotContains(t, out.String(), "compression")

	streams, _, _ = testIO()
	err := plotRun(context.Background(), &plotOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{dir}}, Format: "png", Only: "throughputs"})
	require.Error(t, err)
	assert.True(t, isUsageError(err))
	assert.Contains(t, err.Error(), "throughput", "did you mean")

	streams, _, _ = testIO()
	err = plotRun(context.Background(), &plotOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{dir}}, Format: "png", Only: "compression"})
	require.Error(t, err, "nothing drawn is a failure, not a silent success")
	assert.Contains(t, err.Error(), "no chart drawn")
}
