package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
)

// Markdown is a file's format: results show --format md prints summary.md
// without colour on a terminal that gets colour, the file as the run wrote
// it and, for a run without one, as computed; the text view colours the
// same run's answers and warnings from their values.
func TestMarkdownIsNeverColoured(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "results", "constructed", "interference")
	dir := filepath.Join(t.TempDir(), "interference")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, f := range []string{results.RunFile, results.SamplesFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	show := func(format string) string {
		streams, out, errOut := testIO()
		streams.Verdicts = summary.Colored
		code := Execute(context.Background(), NewFactory(streams), []string{"results", "show", "--format", format, dir})
		require.Contains(t, []int{0, exitNo, exitInconclusive}, code, errOut.String())
		return out.String()
	}
	assert.Contains(t, show(render.FormatText), "\x1b[", "the terminal's view is coloured")
	computed := show(render.FormatMarkdown)
	assert.NotContains(t, computed, "\x1b[", "computed")
	assert.Contains(t, computed, "**warning:**", "a run with warnings")

	l, err := results.Load(dir)
	require.NoError(t, err)
	require.NoError(t, summary.Write(dir, summary.Of(l)))
	written, err := os.ReadFile(filepath.Join(dir, results.SummaryMDFile))
	require.NoError(t, err)
	shown := show(render.FormatMarkdown)
	assert.True(t, strings.HasSuffix(shown, "\n\n"+string(written)), "summary.md as written, byte for byte")
	assert.Equal(t, computed, shown, "what it wrote is what it computes")
}
