package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/termcolor"
)

// testdataRuns are the results directories under testdata/results and
// testdata/results/constructed that load (a damaged one, made to be
// refused, does not).
func testdataRuns(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, parent := range []string{filepath.Join("..", "..", "testdata", "results"), filepath.Join("..", "..", "testdata", "results", "constructed")} {
		entries, err := os.ReadDir(parent)
		require.NoError(t, err)
		for _, e := range entries {
			dir := filepath.Join(parent, e.Name())
			if _, err := os.Stat(filepath.Join(dir, results.RunFile)); err != nil {
				continue
			}
			if _, err := results.Load(dir); err == nil {
				dirs = append(dirs, dir)
			}
		}
	}
	require.Greater(t, len(dirs), 20)
	return dirs
}

// terminal runs qoslab args on streams that are a terminal of width
// columns (with colour when colored), and fails naming the command and
// each line of its output wider than width, colours not counted.
func terminal(t *testing.T, width int, colored bool, args ...string) string {
	t.Helper()
	streams, out, errOut := testIO()
	streams.Width = width
	if colored {
		streams.Verdicts = summary.Colored
	}
	code := Execute(context.Background(), NewFactory(streams), args)
	require.Contains(t, []int{0, exitNo, exitInconclusive}, code, "qoslab %s: %s", strings.Join(args, " "), errOut.String())
	for _, l := range overWidth(out.String(), width) {
		t.Errorf("qoslab %s: a line over %d columns: %q", strings.Join(args, " "), width, l)
	}
	return out.String()
}

// The terminal's views of the commands a person reads (results show,
// compare, results list, doctor and every command's --help) fit 100
// columns on every results directory under testdata, in colour and not.
func TestTerminalViewFits100Columns(t *testing.T) {
	dirs := testdataRuns(t)
	for _, colored := range []bool{false, true} {
		for _, d := range dirs {
			terminal(t, defaultWidth, colored, "results", "show", d)
		}
		for _, parent := range []string{filepath.Dir(dirs[0]), filepath.Dir(dirs[len(dirs)-1])} {
			terminal(t, defaultWidth, colored, "results", "list", "--results", parent)
		}
	}
	top := filepath.Join("..", "..", "testdata", "results")
	abc := []string{filepath.Join(top, "compare-a"), filepath.Join(top, "compare-b"), filepath.Join(top, "compare-c")}
	linux := []string{filepath.Join(top, "linux-fixture"), filepath.Join(top, "linux-contention")}
	var constructed []string
	for _, d := range dirs {
		if filepath.Base(filepath.Dir(d)) == "constructed" {
			constructed = append(constructed, d)
		}
	}
	for _, set := range [][]string{abc, linux, append(append([]string{}, abc...), linux...), constructed} {
		for _, layout := range []string{"", "--layout=columns"} {
			args := append([]string{"compare"}, set...)
			if layout != "" {
				args = append(args, layout)
			}
			terminal(t, defaultWidth, true, args...)
		}
	}

	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		terminal(t, defaultWidth, false, append(strings.Fields(c.CommandPath())[1:], "--help")...)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(NewCmdRoot(testFactory(t, nil)))

	empty := t.TempDir()
	streams, out, _ := testIO()
	o := &doctorOptions{IO: streams, AgentPath: filepath.Join(empty, "no-agent"),
		VMEnv: guestvm.Env{Store: filepath.Join(empty, "images"), StateHome: empty, CacheDir: empty}, KernelCache: filepath.Join(empty, "kernels")}
	require.Error(t, doctorRun(context.Background(), o), "the agent is missing")
	for _, l := range overWidth(out.String(), defaultWidth) {
		t.Errorf("qoslab doctor: a line over %d columns: %q", defaultWidth, l)
	}
}

// On a terminal, results show colours each verdict's answer by its
// outcome and each warning, from the values: each verdict's answer in its
// outcome's colour, and green and red nowhere else, however often "yes"
// and "no" stand in the text (the rule says "yes:" and "no:"); a yellow
// "warning:" per warning. Off a terminal nothing is coloured, and the
// colours change no word.
func TestResultsShowColoursFromValues(t *testing.T) {
	seen := map[analysis.Outcome]int{}
	warned := 0
	for _, d := range testdataRuns(t) {
		l, err := results.Load(d)
		require.NoError(t, err)
		a := summary.Of(l)
		out := terminal(t, defaultWidth, true, "results", "show", d)
		colors := map[analysis.Outcome]string{analysis.Subsumed: termcolor.Green, analysis.NotSubsumed: termcolor.Red, analysis.Inconclusive: termcolor.Yellow}
		for _, v := range a.Verdicts {
			seen[v.Outcome]++
			assert.Contains(t, out, "- "+render.SensitivityName(v.Host)+": "+render.LineOf(v).Head+termcolor.Paint(colors[v.Outcome], string(v.Outcome)), "%s: the verdict's answer coloured", d)
		}
		// Green and red colour nothing but answers (yellow colours
		// warnings too, and every word of theirs).
		for o, color := range map[analysis.Outcome]string{analysis.Subsumed: termcolor.Green, analysis.NotSubsumed: termcolor.Red} {
			n := 0
			for _, v := range a.Verdicts {
				if v.Outcome == o {
					n++
				}
			}
			assert.Equal(t, n, strings.Count(out, color), "%s: only the %s verdicts are coloured so", d, o)
		}
		per, rest := summary.Warnings(a)
		n := len(rest)
		for _, ws := range per {
			n += len(ws)
		}
		warned += n
		assert.Equal(t, n, strings.Count(out, termcolor.Paint(termcolor.Yellow, "warning:")), "%s: warnings coloured", d)
		plain := terminal(t, defaultWidth, false, "results", "show", d)
		assert.False(t, ansi.MatchString(plain), "%s: no colour off a terminal", d)
		assert.Equal(t, plain, ansi.ReplaceAllString(out, ""), "%s: colour changes no word", d)
	}
	for _, o := range []analysis.Outcome{analysis.Subsumed, analysis.NotSubsumed, analysis.Inconclusive} {
		assert.Positive(t, seen[o], "testdata holds a %s verdict", o)
	}
	assert.Positive(t, warned, "testdata holds warnings")
}

// On a terminal, compare colours each run's verdict in the per-machine
// table by its outcome, and only there: the findings table's "yes" stays
// plain.
func TestCompareColoursFromValues(t *testing.T) {
	top := filepath.Join("..", "..", "testdata", "results")
	out := terminal(t, defaultWidth, true, "compare", filepath.Join(top, "compare-a"), filepath.Join(top, "compare-b"), filepath.Join(top, "compare-c"))
	assert.Equal(t, 1, strings.Count(out, termcolor.Paint(termcolor.Green, "yes")), "compare-c's verdict")
	assert.Equal(t, 2, strings.Count(out, termcolor.Paint(termcolor.Yellow, "inconclusive")), "compare-a's and compare-b's")
	assert.Contains(t, out, "0.997 [0.951..1.031] yes", "the findings' words, plain")
}

// results show's --format: md is summary.md as written (the file, under
// the line naming the run), json is --json, a wrong one is a usage error;
// compare's older names, table and markdown, still name text and md.
func TestFormats(t *testing.T) {
	top := filepath.Join("..", "..", "testdata", "results")
	l, err := results.Load(filepath.Join(top, "compare-a"))
	require.NoError(t, err)
	var md strings.Builder
	require.NoError(t, summary.WriteMarkdown(&md, summary.Of(l)))
	out, stderr, code := runRoot(t, nil, "results", "show", "--format", "md", filepath.Join(top, "compare-a"))
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasSuffix(out, "\n\n"+md.String()), "summary.md as computed, it has none written")
	asJSON, _, code := runRoot(t, nil, "results", "show", "--json", filepath.Join(top, "compare-a"))
	require.Equal(t, 0, code)
	out, _, code = runRoot(t, nil, "results", "show", "--format", "json", filepath.Join(top, "compare-a"))
	require.Equal(t, 0, code)
	assert.Equal(t, asJSON, out)
	_, stderr, code = runRoot(t, nil, "results", "show", "--json", "--format", "md", filepath.Join(top, "compare-a"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--json is --format json")
	_, stderr, code = runRoot(t, nil, "results", "show", "--format", "mdd", filepath.Join(top, "compare-a"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "md")

	dirs := []string{filepath.Join(top, "compare-a"), filepath.Join(top, "compare-b")}
	for alias, format := range map[string]string{"table": "text", "markdown": "md"} {
		a, _, code := runRoot(t, nil, append([]string{"compare", "--format", alias}, dirs...)...)
		require.Equal(t, 0, code)
		b, _, code := runRoot(t, nil, append([]string{"compare", "--format", format}, dirs...)...)
		require.Equal(t, 0, code)
		assert.Equal(t, b, a, "--format %s is --format %s", alias, format)
	}
}

// A narrower terminal's width is the view's: results show and compare fit
// 60 columns (a path wider than that stands whole on its line).
func TestTerminalViewFitsANarrowTerminal(t *testing.T) {
	top := filepath.Join("..", "..", "testdata", "results")
	for _, args := range [][]string{
		{"results", "show", filepath.Join(top, "compare-a")},
		{"results", "show", filepath.Join(top, "linux-fixture")},
		{"compare", filepath.Join(top, "compare-a"), filepath.Join(top, "compare-b"), filepath.Join(top, "compare-c")},
		{"compare", filepath.Join(top, "linux-fixture"), filepath.Join(top, "linux-contention")},
	} {
		out := terminal(t, 60, true, args...)
		assert.Greater(t, strings.Count(out, "\n"), 20, "qoslab %s", strings.Join(args, " "))
	}
}
