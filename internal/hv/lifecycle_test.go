package hv

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/testvm"
)

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// A VM runs until Finish; Err is nil until then, and says why after.
func TestLifecycleErrAfterEnd(t *testing.T) {
	var l Lifecycle
	assert.False(t, l.Ended())
	assert.False(t, closed(l.Done()))
	assert.NoError(t, l.Err())

	crash := errors.New("the guest crashed")
	l.Finish(crash)
	assert.True(t, l.Ended())
	assert.True(t, closed(l.Done()))
	assert.Equal(t, crash, l.Err())
	assert.ErrorIs(t, l.EndErr(), crash)
	assert.EqualError(t, l.EndErr(), "the VM has ended: the guest crashed")

	var clean Lifecycle
	clean.Finish(nil)
	assert.EqualError(t, clean.EndErr(), "the VM has ended", "no <nil> for a clean end")
	assert.False(t, l.StopAsked(), "nobody asked for this end")
}

// Done is closed once, by the first Finish: later ones, at once from many
// goroutines, neither panic nor change why the VM ended.
func TestLifecycleDoneClosedOnce(t *testing.T) {
	var l Lifecycle
	first := errors.New("first")
	l.Finish(first)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Finish(errors.New("later"))
		}()
	}
	wg.Wait()
	assert.Equal(t, first, l.Err())

	// And from many goroutines before any has finished: one wins.
	var m Lifecycle
	errs := make([]error, 16)
	for i := range errs {
		errs[i] = errors.New("end")
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Finish(errs[i])
		}()
	}
	wg.Wait()
	require.True(t, m.Ended())
	assert.Contains(t, errs, m.Err())
}

// Concurrent Stops run the backend's stop once: the others wait for it and
// then, the VM having ended, return nil without stopping again.
func TestLifecycleConcurrentStop(t *testing.T) {
	var l Lifecycle
	var calls atomic.Int32
	inStop := make(chan struct{})
	release := make(chan struct{})
	stop := func() error {
		if calls.Add(1) == 1 {
			close(inStop)
		}
		assert.True(t, l.StopAsked(), "a Stop has begun")
		<-release
		l.Finish(nil)
		return nil
	}

	const stoppers = 8
	results := make(chan error, stoppers)
	go func() { results <- l.StopWith(stop) }()
	<-inStop
	for range stoppers - 1 {
		go func() { results <- l.StopWith(stop) }()
	}
	select {
	case err := <-results:
		t.Fatalf("a Stop returned (%v) while the first still stops the VM", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	for range stoppers {
		assert.NoError(t, <-results)
	}
	assert.Equal(t, int32(1), calls.Load(), "the VM is stopped once")
	assert.NoError(t, l.Err(), "an end asked for is clean")
}

// A Stop after the end does nothing; a Stop that failed leaves the VM
// running, and the next Stop tries again.
func TestLifecycleStopAfterEndAndFailure(t *testing.T) {
	var l Lifecycle
	failed := errors.New("still there after SIGKILL")
	assert.Equal(t, failed, l.StopWith(func() error { return failed }))
	assert.False(t, l.Ended())
	ran := false
	assert.NoError(t, l.StopWith(func() error { ran = true; l.Finish(nil); return nil }))
	assert.True(t, ran, "the second Stop tried again")

	var ended Lifecycle
	ended.Finish(nil)
	assert.NoError(t, ended.StopWith(func() error { t.Error("stop ran for a VM that had ended"); return nil }))
	assert.False(t, ended.StopAsked())
}

// Wait returns at the end, or when ctx does, saying which.
func TestLifecycleWait(t *testing.T) {
	var l Lifecycle
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.False(t, l.Wait(ctx), "ctx ended first")

	go func() {
		time.Sleep(10 * time.Millisecond)
		l.Finish(nil)
	}()
	assert.True(t, l.Wait(context.Background()))
}

// Terminate sends SIGTERM, then SIGKILL only when the VM outlives its
// grace (at once when ctx has ended), and says when the process outlives
// SIGKILL too.
func TestTerminate(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		// diesOn is the signal the process ends on (0: it never ends).
		diesOn syscall.Signal
		ended  bool // the VM ended before Terminate
		grace  time.Duration
		sent   []syscall.Signal
		err    string
	}{
		{"ends on SIGTERM", context.Background(), syscall.SIGTERM, false, time.Minute, []syscall.Signal{syscall.SIGTERM}, ""},
		{"SIGKILL after the grace", context.Background(), syscall.SIGKILL, false, 20 * time.Millisecond, []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}, ""},
		{"SIGKILL at once when ctx has ended", cancelled, syscall.SIGKILL, false, time.Hour, []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}, ""},
		{"nothing for a VM that has ended", context.Background(), syscall.SIGTERM, true, time.Minute, nil, ""},
		{"outlives SIGKILL", context.Background(), 0, false, 20 * time.Millisecond, []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL},
			"stop VM lab: qemu (pid 12) is still there 5s after SIGKILL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.diesOn == 0 {
				testvm.Slow(t, "waits KillTimeout (5 s)")
			}
			var l Lifecycle
			if tc.ended {
				l.Finish(nil)
			}
			var sent []syscall.Signal
			signal := func(sig syscall.Signal) {
				sent = append(sent, sig)
				if sig == tc.diesOn {
					go l.Finish(nil)
				}
			}
			err := l.Terminate(tc.ctx, tc.grace, signal, "lab", "qemu (pid 12)")
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.sent, sent)
		})
	}
}
