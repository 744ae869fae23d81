package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/qoslab/qoslab/internal/results"
)

// Interrupt is why a run's context was cancelled: a signal (Ctrl-C's
// SIGINT, or SIGTERM from a service manager or a CI timeout).
type Interrupt struct{ Signal os.Signal }

func (i *Interrupt) Error() string { return "interrupted by " + SignalName(i.Signal) }

// ExitCode is the shell's for a death by the signal: 128 + its number
// (130 for SIGINT, 143 for SIGTERM).
func (i *Interrupt) ExitCode() int {
	if s, ok := i.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// SignalName is "SIGINT", "SIGTERM".
func SignalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// SignalContext returns a context cancelled, with an *Interrupt as its
// cause, by the first SIGINT or SIGTERM; later ones are caught too, so a
// second Ctrl-C cannot kill qoslab before it has stopped its VMs. stop
// lets the signals go back to their defaults.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(&Interrupt{Signal: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// InterruptOf returns the signal that cancelled ctx, or nil.
func InterruptOf(ctx context.Context) *Interrupt {
	var i *Interrupt
	if errors.As(context.Cause(ctx), &i) {
		return i
	}
	return nil
}

// UnfinishedError is a run that stopped before measuring every cell: the
// error, and how to finish it.
type UnfinishedError struct {
	Err error
	Dir string
}

func (e *UnfinishedError) Error() string { return fmt.Sprintf("%v\n%s", e.Err, e.Hint()) }
func (e *UnfinishedError) Unwrap() error { return e.Err }

// Hint says where the finished cells are and how to finish the run.
func (e *UnfinishedError) Hint() string {
	return fmt.Sprintf("what finished is in %s; finish the run with: qoslab run --resume %s", e.Dir, e.Dir)
}

// EndNotRecordedError is a run whose end (time, outcome, error) could not
// be written to run.json, a full disk most often: run.json still reads as
// a run going on, so the terminal must say so, and what to do.
type EndNotRecordedError struct {
	Dir string
	Err error
}

func (e *EndNotRecordedError) Error() string {
	return fmt.Sprintf("how the run ended could not be recorded in %s (%v): it still reads as running or crashed; free space, then run qoslab run --resume %s, which records it and measures what is missing",
		filepath.Join(e.Dir, results.RunFile), e.Err, e.Dir)
}

func (e *EndNotRecordedError) Unwrap() error { return e.Err }
