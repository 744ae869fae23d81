// Package cli is qoslab's command line: each command turns its flags (and
// the config file and QOSLAB_* environment behind them) into an Options
// struct, hands it to the package that does the work, and prints.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/results/summary"
)

// IOStreams are where a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Progress is true when ErrOut is a terminal: live progress goes there;
	// otherwise long commands print a line per step.
	Progress bool
	// OutTTY and ErrTTY say whether Out and ErrOut are terminals: verdicts
	// and warnings are coloured there unless NO_COLOR is set.
	OutTTY, ErrTTY bool
	// Verdicts is how Out writes a verdict's answer: summary.Colored once
	// Out is a terminal that gets colour (colorStreams).
	Verdicts summary.Style
	// Width is the terminal's columns when Out is one (0 when it is not,
	// or unknown): tables and help fit it, else 100 columns (width).
	Width int
}

// SystemIO returns the process's streams.
func SystemIO() *IOStreams {
	errTTY := term.IsTerminal(int(os.Stderr.Fd()))
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Progress: errTTY,
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())), ErrTTY: errTTY}
	if s.OutTTY {
		s.Width, _, _ = term.GetSize(int(os.Stdout.Fd()))
	}
	return s
}

// Factory carries what every command needs.
type Factory struct {
	IO *IOStreams
	// Env reads the environment (os.Getenv in production).
	Env func(string) string
	// Settings fill the flags the user did not type, from the environment
	// and the config file.
	Settings *config.Settings
}

// NewFactory returns a factory over io and the process environment. agent,
// results and image-store are settings every command that has them shares.
func NewFactory(io *IOStreams) *Factory {
	f := &Factory{IO: io, Env: os.Getenv}
	f.Settings = config.New(func(k string) string { return f.Env(k) }, "agent", "results", "image-store")
	return f
}

// usageError is a mistake in how qoslab was called: exit status 2, with a
// pointer to the command's help. It is made only where the command line is
// checked: flag parsing (flagError), argument checks (every command's Args,
// see usageArgs), the settings' checks, and each command's checks of its
// values; an error's text never makes one.
type usageError struct{ Err error }

func (e *usageError) Error() string { return e.Err.Error() }
func (e *usageError) Unwrap() error { return e.Err }

func usageErrorf(format string, a ...any) error {
	return &usageError{Err: fmt.Errorf(format, a...)}
}

// wrapUsage makes err (nil stays nil) a usage error.
func wrapUsage(err error) error {
	if err == nil || isUsageError(err) {
		return err
	}
	return &usageError{Err: err}
}

// isUsageError tells whether err came from how qoslab was called.
func isUsageError(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}

// sources name where each flag's value came from (see config.Sources).
type sources = config.Sources

// configure registers cmd's flags under section and, before cmd runs, gives
// every flag the user did not type its value from the environment or the
// config file, recording where each came from in *src.
func (f *Factory) configure(cmd *cobra.Command, section string, src *sources) {
	f.Settings.Register(cmd.Flags(), section)
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		s, err := f.Settings.Apply(cmd.Flags(), section)
		*src = s
		return wrapUsage(err)
	}
}
