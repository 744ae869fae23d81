package cli

import (
	"context"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/qoslab/qoslab/internal/results"
)

func TestReportRunWritesBothFiles(t *testing.T) {
	dir := copyFixture(t, "linux-contention")
	streams, out, _ := testIO()
	require.NoError(t, reportRun(context.Background(), &reportOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{dir}}}))
	assert.Equal(t, []string{filepath.Join(dir, results.ReportFile), filepath.Join(dir, "report.md")}, strings.Fields(out.String()))
	assert.FileExists(t, filepath.Join(dir, results.PlotsDir, "throughput-fp.png"), "report.md links PNGs, so they are drawn")

	err := reportRun(context.Background(), &reportOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{t.TempDir()}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a qoslab results directory")
}

func TestReportCompareFlags(t *testing.T) {
	a := filepath.Join("..", "..", "testdata", "results", "compare-a")
	b := filepath.Join("..", "..", "testdata", "results", "compare-b")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--compare", a, b}, "--compare needs --out DIR"},
		{[]string{"report", "--compare", a, "--out", t.TempDir()}, "two or more results directories, got 1"},
		{[]string{"report", a, "--out", t.TempDir()}, "--out, --label and --missing go with --compare"},
		{[]string{"report", a, "--missing", "gone=unreachable"}, "--out, --label and --missing go with --compare"},
		{[]string{"report", a, b}, "add --compare and --out DIR"},
	} {
		streams, _, _ := testIO()
		root := NewCmdRoot(NewFactory(streams))
		root.SetArgs(tc.args)
		err := root.Execute()
		require.Error(t, err, "%q", tc.args)
		assert.True(t, isUsageError(err), "%q: %v", tc.args, err)
		assert.Contains(t, err.Error(), tc.want)
	}
	streams, out, _ := testIO()
	root := NewCmdRoot(NewFactory(streams))
	dir := filepath.Join(t.TempDir(), "across")
	root.SetArgs([]string{"report", "--compare", a, b, "--out", dir})
	require.NoError(t, root.Execute())
	assert.Contains(t, out.String(), filepath.Join(dir, "report.html"))
	_, err := os.Stat(filepath.Join(dir, "plots", "compare-subsumption.png"))
	assert.NoError(t, err)
}
