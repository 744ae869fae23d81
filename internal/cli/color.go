package cli

import (
	"io"
	"strings"

	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/termcolor"
)

// useColor says whether a stream that is a terminal (tty) gets colour:
// not when NO_COLOR is set to anything (no-color.org) or the terminal is
// dumb.
func useColor(tty bool, env func(string) string) bool {
	return tty && env(config.NoColorEnv) == "" && env(config.TermEnv) != "dumb"
}

// colorStreams colours the streams that are terminals, unless the
// environment asks for none.
func (f *Factory) colorStreams() {
	if useColor(f.IO.OutTTY, f.Env) {
		f.IO.Out = &colorWriter{w: f.IO.Out}
		f.IO.Verdicts = summary.Colored
	}
	if useColor(f.IO.ErrTTY, f.Env) {
		f.IO.ErrOut = &colorWriter{w: f.IO.ErrOut}
	}
}

// colorWriter colours warnings yellow, line by line as they are written.
// It keeps no state between writes, so a progress line written in pieces
// passes through as it comes. A verdict's answer is coloured where it is
// written, from its outcome (summary.Colored), not here.
type colorWriter struct{ w io.Writer }

func (c *colorWriter) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(colorLine(l))
	}
	if _, err := io.WriteString(c.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// colorLine colours one line (with its newline, if any): a warning.
func colorLine(l string) string {
	body := strings.TrimRight(l, "\n")
	end := l[len(body):]
	bare := strings.TrimLeft(strings.TrimPrefix(body, "\r\033[K"), " -*")
	if strings.HasPrefix(bare, "warning:") {
		return termcolor.Paint(termcolor.Yellow, body) + end
	}
	return l
}

// lineFilter passes on what is written to w but the lines drop says to
// leave out (each write taken as whole lines, as fmt.Fprintf writes them);
// seen, when set, gets every line that passes.
type lineFilter struct {
	w    io.Writer
	drop func(line string) bool
	seen func(line string)
}

func (f *lineFilter) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(p), "\n") {
		if l == "" {
			continue
		}
		if f.drop != nil && f.drop(strings.TrimRight(l, "\n")) {
			continue
		}
		if f.seen != nil {
			f.seen(strings.TrimRight(l, "\n"))
		}
		b.WriteString(l)
	}
	if _, err := io.WriteString(f.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// warningText is a warning line's text without its marks ("  warning: x",
// "- warning: x", "- **warning:** x" are all "x"); "" for other lines.
func warningText(line string) string {
	bare := strings.TrimLeft(line, " -*")
	for _, p := range []string{"warning:** ", "warning: "} {
		if rest, ok := strings.CutPrefix(bare, p); ok {
			return rest
		}
	}
	return ""
}
