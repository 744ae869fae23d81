package cli

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/termcolor"
)

// A mistyped flag is a usage error that names the flag meant, and every
// usage error points at the help of the command it was made on.
func TestMistypedFlagGetsASuggestion(t *testing.T) {
	cases := []struct {
		args []string
		want string
		help string
	}{
		{[]string{"run", "--quik"}, "unknown flag: --quik; did you mean --quick?", "Run 'qoslab run --help' for usage."},
		{[]string{"run", "-quick"}, "did you mean --quick?", "Run 'qoslab run --help'"},
		{[]string{"bench", "--dur", "1s"}, "did you mean --duration?", "Run 'qoslab bench --help'"},
		{[]string{"bench", "--treads=2"}, "did you mean --threads?", "Run 'qoslab bench --help'"},
		{[]string{"results", "list", "--jsno"}, "did you mean --json?", "Run 'qoslab results list --help'"},
		{[]string{"run", "--confg", "x"}, "did you mean --config?", "Run 'qoslab run --help'"},
		{[]string{"vm", "sart"}, "did you mean start?", "Run 'qoslab vm --help'"},
		{[]string{"run", "--zzzzzz"}, "unknown flag: --zzzzzz\n", "Run 'qoslab run --help'"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			_, stderr, code := runRoot(t, nil, c.args...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, c.want)
			assert.Contains(t, stderr, c.help)
			assert.NotContains(t, stderr, "Run 'qoslab --help'")
		})
	}
}

// completion knows four shells and refuses any other with exit 2.
func TestCompletionRefusesUnknownShells(t *testing.T) {
	out, stderr, code := runRoot(t, nil, "completion", "tcsh")
	assert.Equal(t, 2, code)
	assert.Empty(t, out, "no help on stdout for a script to source")
	assert.Contains(t, stderr, `unknown command "tcsh" for "qoslab completion": allowed bash, fish, powershell, zsh`)
	assert.Contains(t, stderr, "Run 'qoslab completion --help'")

	out, _, code = runRoot(t, nil, "completion", "bash")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "bash completion")
}

// A command missing its argument says what it wants, not cobra's count.
func TestArgumentErrorsSayWhatIsWanted(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "qoslab report needs one or more results directories (DIR, or latest for the newest under --results); none given"},
		{[]string{"plot"}, "qoslab plot needs one results directory (DIR, or latest for the newest under --results); none given"},
		{[]string{"plot", "a", "b"}, "qoslab plot takes one results directory"},
		{[]string{"results", "show"}, "qoslab results show needs one results directory"},
		{[]string{"results", "rm"}, "qoslab results rm needs one or more results directories"},
	} {
		_, stderr, code := runRoot(t, nil, c.args...)
		assert.Equal(t, 2, code, "%q: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%q", c.args)
		assert.NotContains(t, stderr, "arg(s)", "%q: cobra's wording", c.args)
	}
}

// Warnings are coloured on a terminal, and verdicts' answers set to be
// (from their outcome, where they are written), and neither when NO_COLOR
// is set or the output is not a terminal. A warning is coloured because it
// is written as one (termcolor.Warn), never found in text: text that reads
// like a warning or a verdict is not coloured.
func TestColorFollowsTheTerminalAndNoColor(t *testing.T) {
	text := "fp: QoS subsumed in VM: no (SI 0.1)\nwarning: reads like one, written as text\n"
	warning := "  warning: host fp qos=9 threads=1: repeats range 1..9"
	print := func(tty bool, env map[string]string) (string, summary.Style) {
		f := testFactory(t, env)
		var out bytes.Buffer
		f.IO.Out, f.IO.OutTTY = &out, tty
		f.colorStreams()
		_, err := f.IO.Out.Write([]byte(text))
		require.NoError(t, err)
		require.NoError(t, termcolor.Warn(f.IO.Out, warning, "host fp qos=9 threads=1: repeats range 1..9"))
		_, err = f.IO.Out.Write([]byte("plain\n"))
		require.NoError(t, err)
		return out.String(), f.IO.Verdicts
	}
	colored, style := print(true, nil)
	assert.Equal(t, summary.Colored, style)
	assert.Equal(t, text+termcolor.Paint(termcolor.Yellow, warning)+"\nplain\n", colored,
		"a verdict's answer is coloured where it is written, and text that reads like a warning is not one")
	for _, c := range []struct {
		tty bool
		env map[string]string
	}{{true, map[string]string{"NO_COLOR": "1"}}, {false, nil}, {true, map[string]string{"TERM": "dumb"}}} {
		out, style := print(c.tty, c.env)
		assert.Equal(t, text+warning+"\nplain\n", out, "tty %v, %v: no colour", c.tty, c.env)
		assert.Equal(t, summary.Plain, style, "tty %v, %v: no colour", c.tty, c.env)
	}
}

// Through the command: a verdict's answer is coloured on a terminal, not
// with NO_COLOR set.
func TestNoColorThroughACommand(t *testing.T) {
	dir := verdictRun(t, t.TempDir(), "colored", 6, 1)
	for _, c := range []struct {
		noColor string
		colored bool
	}{{"", true}, {"1", false}} {
		f := testFactory(t, map[string]string{"NO_COLOR": c.noColor})
		var out, errOut bytes.Buffer
		f.IO.Out, f.IO.ErrOut, f.IO.OutTTY, f.IO.ErrTTY = &out, &errOut, true, true
		code := Execute(context.Background(), f, []string{"results", "show", dir})
		require.Equal(t, 0, code, errOut.String())
		require.Contains(t, out.String(), "QoS subsumed in VM: ")
		assert.Equal(t, c.colored, strings.Contains(out.String(), termcolor.Paint(termcolor.Green, "yes")), "NO_COLOR=%q:\n%s", c.noColor, out.String())
		assert.Equal(t, c.colored, strings.Contains(out.String(), "\033["), "NO_COLOR=%q", c.noColor)
	}
}

// A macOS-only command on another OS says so in one line, with what can
// be done here instead.
func TestMacOSOnlyCommandsSayItInOneLine(t *testing.T) {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		t.Skip("this is a Mac")
	}
	_, stderr, code := runRoot(t, nil, "image", "fetch", "macos")
	assert.Equal(t, 1, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	assert.Contains(t, stderr, "--ipsw latest needs a Mac (macOS 13+ on Apple silicon)")
	assert.Contains(t, stderr, "download one by its URL with --ipsw URL")
	assert.NotContains(t, stderr, "creating macOS images", "no advice that contradicts the line")

	_, stderr, code = runRoot(t, nil, "image", "create", "macos", "--ipsw", "x.ipsw")
	assert.Equal(t, 1, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	assert.Contains(t, stderr, "needs a Mac")
}
