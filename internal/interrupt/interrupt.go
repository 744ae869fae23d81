// Package interrupt turns the signals that stop qoslab (Ctrl-C's SIGINT,
// SIGTERM) into the cancellation of a context, with the signal as its
// cause, so that what runs under it stops in order and the exit status
// says which signal it was.
package interrupt

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Error is why a context was cancelled: a signal (Ctrl-C's SIGINT, or
// SIGTERM from a service manager or a CI timeout).
type Error struct{ Signal os.Signal }

func (e *Error) Error() string { return "interrupted by " + signalName(e.Signal) }

// ExitCode is the shell's for a death by the signal: 128 + its number
// (130 for SIGINT, 143 for SIGTERM).
func (e *Error) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// signalName is "SIGINT", "SIGTERM".
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// Context returns a context cancelled, with an *Error as its cause, by
// the first SIGINT or SIGTERM; later ones are caught too, so a second
// Ctrl-C cannot kill qoslab before it has stopped its VMs. stop lets the
// signals go back to their defaults.
func Context(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(&Error{Signal: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// Of returns the signal that cancelled ctx, or nil.
func Of(ctx context.Context) *Error {
	var i *Error
	if errors.As(context.Cause(ctx), &i) {
		return i
	}
	return nil
}
