package hv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Lifecycle is the end of a running VM as a backend's Machine reports it:
// Done and Err for Machine, Finish for whatever notices the end, and
// StopWith to run a Stop one at a time. Its zero value is a VM that runs;
// it must not be copied once used.
type Lifecycle struct {
	// stopMu makes a Stop that comes while another runs wait for it.
	stopMu sync.Mutex
	// stopping is set once a Stop begins: the end it causes is asked for.
	stopping atomic.Bool

	mu       sync.Mutex
	done     chan struct{}
	finished bool
	err      error
}

// doneChan is done, made on first use so that the zero value works.
func (l *Lifecycle) doneChan() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done == nil {
		l.done = make(chan struct{})
	}
	return l.done
}

// Done is closed once the VM has ended, whoever ended it.
func (l *Lifecycle) Done() <-chan struct{} { return l.doneChan() }

// Err says why the VM ended, once Done is closed (nil for a clean stop); it
// is nil while the VM runs.
func (l *Lifecycle) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// EndErr says that the VM has ended, wrapping Err when it did not stop
// cleanly, for a call that needs the VM running.
func (l *Lifecycle) EndErr() error {
	if err := l.Err(); err != nil {
		return fmt.Errorf("the VM has ended: %w", err)
	}
	return errors.New("the VM has ended")
}

// Ended reports whether the VM has ended.
func (l *Lifecycle) Ended() bool {
	select {
	case <-l.doneChan():
		return true
	default:
		return false
	}
}

// Finish records that the VM has ended, and why (nil for a clean stop),
// and closes Done. Only the first call counts: a VM ends once.
func (l *Lifecycle) Finish(err error) {
	done := l.doneChan()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.finished {
		return
	}
	l.finished = true
	l.err = err
	close(done)
}

// StopAsked reports whether a Stop has begun: the end that follows is one
// the controller asked for, not an error.
func (l *Lifecycle) StopAsked() bool { return l.stopping.Load() }

// StopWith runs stop, the backend's way of ending the VM, as Machine.Stop:
// one call at a time (a second Stop waits for the first), and not at all
// once the VM has ended, returning nil then.
func (l *Lifecycle) StopWith(stop func() error) error {
	l.stopMu.Lock()
	defer l.stopMu.Unlock()
	if l.Ended() {
		return nil
	}
	l.stopping.Store(true)
	return stop()
}

// Wait waits until the VM has ended or ctx ends, and reports whether the VM
// has ended.
func (l *Lifecycle) Wait(ctx context.Context) bool {
	select {
	case <-l.doneChan():
		return true
	case <-ctx.Done():
		return l.Ended()
	}
}

// KillTimeout bounds waiting for a SIGKILLed hypervisor process to be gone.
const KillTimeout = 5 * time.Second

// Terminate is how every backend's Stop ends the process that runs a VM
// once gentler ways have had their time: SIGTERM, then, when the VM has not
// ended within grace (or once ctx ends), SIGKILL, after which it waits up
// to KillTimeout whatever ctx says (a SIGKILLed process ends promptly, and
// Stop must not return while it lives). signal sends a signal to the
// process, and must send none once the pid may no longer be the VM's. The
// error, when the process outlives SIGKILL, names vm and proc ("qemu (pid
// 12)").
func (l *Lifecycle) Terminate(ctx context.Context, grace time.Duration, signal func(syscall.Signal), vm, proc string) error {
	if !l.Ended() {
		signal(syscall.SIGTERM)
		gctx, cancel := context.WithTimeout(ctx, grace)
		l.Wait(gctx)
		cancel()
	}
	if !l.Ended() {
		signal(syscall.SIGKILL)
		kctx, cancel := context.WithTimeout(context.Background(), KillTimeout)
		l.Wait(kctx)
		cancel()
	}
	if !l.Ended() {
		return fmt.Errorf("stop VM %s: %s is still there %s after SIGKILL", vm, proc, KillTimeout)
	}
	return nil
}
