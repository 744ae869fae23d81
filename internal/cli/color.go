package cli

import (
	"io"

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

// colorWriter colours warnings yellow: those written to it as warnings
// (termcolor.Warn), whole lines as their format writes them. What is
// written as text passes as it is: a warning is never found in text, nor
// is a verdict's answer, coloured where it is written from its outcome
// (summary.Colored).
type colorWriter struct{ w io.Writer }

func (c *colorWriter) Write(p []byte) (int, error) { return c.w.Write(p) }

// Warn writes the warning's line yellow.
func (c *colorWriter) Warn(line, _ string) error {
	_, err := io.WriteString(c.w, termcolor.Paint(termcolor.Yellow, line)+"\n")
	return err
}

// warningFilter passes on what is written to w, and each warning written
// to it as one (termcolor.Warn) but those drop says to leave out.
type warningFilter struct {
	w    io.Writer
	drop func(text string) bool
}

func (f *warningFilter) Write(p []byte) (int, error) { return f.w.Write(p) }

// Told says whether the warning text was said already (drop says so), for
// a writer of documents that leaves such warnings out (termcolor.Untold).
func (f *warningFilter) Told(text string) bool { return f.drop != nil && f.drop(text) }

// Warn passes the warning on to w (as a warning) unless drop says not to.
func (f *warningFilter) Warn(line, text string) error {
	if f.drop != nil && f.drop(text) {
		return nil
	}
	return termcolor.Warn(f.w, line, text)
}
