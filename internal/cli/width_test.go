package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/termcolor"
)

var ansi = regexp.MustCompile("\033\\[[0-9;]*m")

// overWidth are out's lines wider than width, colours not counted.
func overWidth(out string, width int) []string {
	var over []string
	for _, l := range strings.Split(out, "\n") {
		if textWidth(ansi.ReplaceAllString(l, "")) > width {
			over = append(over, l)
		}
	}
	return over
}

func TestWrapWords(t *testing.T) {
	tests := []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"a b c", 10, []string{"a b c"}},
		{"aaaa bbbb cccc", 9, []string{"aaaa bbbb", "cccc"}},
		// A word wider than the width is not cut: it can still be copied.
		{"x /a/very/long/path y", 8, []string{"x", "/a/very/long/path", "y"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, wrapWords(textWords(tt.text), tt.width), tt.text)
	}
}

func TestWrapText(t *testing.T) {
	// A short line (an example laid out by hand) stays; a long one wraps
	// at its spaces, indented as it was.
	in := "short line\n  one two three four five six"
	assert.Equal(t, "short line\n  one two three\n  four five six", wrapText(in, 16))
}

// Every command's help fits 100 columns where stdout is no terminal, and
// keeps every flag's text, only wrapped.
func TestHelpFitsWidth(t *testing.T) {
	var walk func(c *cobra.Command)
	var paths [][]string
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		paths = append(paths, strings.Fields(c.CommandPath())[1:])
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(NewCmdRoot(testFactory(t, nil)))
	require.Greater(t, len(paths), 20)
	for _, p := range paths {
		streams, out, _ := testIO()
		root := NewCmdRoot(NewFactory(streams))
		root.SetArgs(append(append([]string{}, p...), "--help"))
		require.NoError(t, root.Execute(), p)
		assert.Empty(t, overWidth(out.String(), defaultWidth), "qoslab %s --help", strings.Join(p, " "))
		flat := strings.Join(strings.Fields(out.String()), " ")
		cmd, _, err := root.Find(p)
		require.NoError(t, err)
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if !fl.Hidden {
				assert.Contains(t, flat, strings.Join(strings.Fields(strings.ReplaceAll(fl.Usage, "`", "")), " "), "qoslab %s --%s", strings.Join(p, " "), fl.Name)
			}
		})
	}
}

// A terminal's width is the help's: at 80 columns no line is wider.
func TestHelpFitsTerminal(t *testing.T) {
	streams, out, _ := testIO()
	streams.Width = 80
	root := NewCmdRoot(NewFactory(streams))
	root.SetArgs([]string{"run", "--help"})
	require.NoError(t, root.Execute())
	assert.Empty(t, overWidth(out.String(), 80))
}

// results list fits 100 columns on every results directory under
// testdata, and names every run; on a terminal its verdicts are coloured
// from their outcomes.
func TestResultsListFitsWidth(t *testing.T) {
	dirs := []string{filepath.Join("..", "..", "testdata", "results"), filepath.Join("..", "..", "testdata", "results", "constructed")}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, colored := range []bool{false, true} {
			streams, out, _ := testIO()
			if colored {
				streams.Verdicts = summary.Colored
			}
			root := NewCmdRoot(NewFactory(streams))
			root.SetArgs([]string{"results", "list", "--results", dir})
			require.NoError(t, root.Execute())
			assert.Empty(t, overWidth(out.String(), defaultWidth), dir)
			for _, e := range entries {
				if e.IsDir() {
					assert.Contains(t, out.String(), e.Name(), dir)
				}
			}
			assert.Equal(t, colored, ansi.MatchString(out.String()), "colour only on a terminal: %s", dir)
		}
	}
}

// doctor's checks fit 100 columns, and a terminal's narrower width, on a
// machine that has nothing (as doctor's own tests check it).
func TestDoctorFitsWidth(t *testing.T) {
	for _, width := range []int{0, 60} {
		empty := t.TempDir()
		streams, out, _ := testIO()
		streams.Width = width
		o := &doctorOptions{IO: streams, AgentPath: filepath.Join(empty, "no-agent"),
			VMEnv:       guestvm.Env{Store: filepath.Join(empty, "images"), StateHome: empty, CacheDir: empty},
			KernelCache: filepath.Join(empty, "kernels")}
		err := doctorRun(context.Background(), o)
		require.Error(t, err, "the agent is missing")
		assert.Contains(t, out.String(), "fix: make build")
		assert.Empty(t, overWidth(out.String(), streams.width()), "width %d", width)
		assert.False(t, ansi.MatchString(out.String()), "no colour off a terminal")
	}
	// On a terminal a missing check's mark is red, from the check.
	empty := t.TempDir()
	streams, out, _ := testIO()
	streams.Verdicts = summary.Colored
	o := &doctorOptions{IO: streams, AgentPath: filepath.Join(empty, "no-agent"),
		VMEnv: guestvm.Env{Store: filepath.Join(empty, "images"), StateHome: empty, CacheDir: empty}}
	require.Error(t, doctorRun(context.Background(), o))
	assert.Contains(t, out.String(), termcolor.Paint(termcolor.Red, "MISSING")+"  host agent")
	assert.Empty(t, overWidth(out.String(), defaultWidth))
}
