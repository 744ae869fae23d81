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

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/spec"
)

// The formats' older names still work, as the names they stand for.
func TestBenchFormatAliases(t *testing.T) {
	for alias, want := range map[string]string{"table": "text", "markdown": "md", "text": "text", "md": "md", "json": "json", "csv": "csv"} {
		o, err := parseBench(t, nil, "--format", alias)
		require.NoError(t, err, alias)
		assert.Equal(t, want, o.Format, alias)
	}
	o, err := parseBench(t, nil)
	require.NoError(t, err)
	assert.Equal(t, render.FormatText, o.Format, "text by default")
}

// Off a terminal the text fits 100 columns; on one, the terminal's width;
// --format md has every column, as a Markdown table.
func TestBenchTextFitsTheTerminal(t *testing.T) {
	args := []string{"--qos", "9,33", "--threads", "1-2", "--loops", "1000", "--repeat", "2"}
	for _, width := range []int{0, 60} {
		a := newFake()
		t.Chdir(t.TempDir())
		o, err := parseBench(t, nil, args...)
		require.NoError(t, err)
		streams, out, _ := testIO()
		streams.Width = width
		o.IO = streams
		o.StartTarget = func(context.Context, string, spec.Spec, io.Writer) (experiment.Target, []string, error) {
			return a, nil, nil
		}
		require.NoError(t, benchRun(context.Background(), o))
		fits := streams.width()
		for _, l := range strings.Split(out.String(), "\n") {
			assert.LessOrEqual(t, len([]rune(l)), fits, "width %d: %q", width, l)
		}
		assert.Contains(t, out.String(), "TOTAL", "width %d", width)
		assert.NotContains(t, out.String(), "\033[", "no colour where Out is not coloured")
	}
	_, md, _, err := benchWithFake(t, newFake(), append(args, "--format", "md")...)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(md, "| target | workload | qos | threads | phase | n | seconds median [min..max] | total rate | per-thread rate | unit | qos applied |\n"), md)
	assert.NotContains(t, md, "Left out")
}

// A warning the table says is not said again by --save's summary after
// it: a short cell's (never said as the run goes) and a disagreeing
// cell's, which the saved summary holds.
func TestBenchSavedSaysEachWarningOnce(t *testing.T) {
	a := newFake()
	a.onRun = func() { a.speed = map[int]float64{1: 100, 2: 40000, 3: 100}[a.calls] } // 10 ms cells, the second 400x faster
	_, out, errOut, err := benchWithFake(t, a, "--loops", "10", "--repeat", "3", "--qos", "9", "--save")
	require.NoError(t, err)
	flat := strings.Join(strings.Fields(out), " ")
	assert.Equal(t, 1, strings.Count(flat, "ran 10ms (< 250ms)"), out)
	assert.NotContains(t, errOut, "(< 250ms)")
	assert.Equal(t, 1, strings.Count(flat, "host fp qos=9 threads=1: repeats"), out)
	dirs, err := filepath.Glob(filepath.Join("qoslab-results", "bench-*", "summary.md"))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	summary, err := os.ReadFile(dirs[0])
	require.NoError(t, err)
	assert.Contains(t, string(summary), "host fp qos=9 threads=1: repeats", "the saved summary keeps it")
}
