package vz

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
)

// blockingDial is vz's Connect as the connector sees it: a call that
// returns only when the test releases it, counting the calls in flight.
type blockingDial struct {
	release chan dialResult

	mu          sync.Mutex
	started     int
	inFlight    int
	maxInFlight int
	ports       []uint32
}

type dialResult struct {
	conn net.Conn
	err  error
}

func newBlockingDial() *blockingDial { return &blockingDial{release: make(chan dialResult)} }

func (d *blockingDial) dial(port uint32) (net.Conn, error) {
	d.mu.Lock()
	d.started++
	d.inFlight++
	d.maxInFlight = max(d.maxInFlight, d.inFlight)
	d.ports = append(d.ports, port)
	d.mu.Unlock()
	r := <-d.release
	d.mu.Lock()
	d.inFlight--
	d.mu.Unlock()
	return r.conn, r.err
}

func (d *blockingDial) counts() (started, inFlight, maxInFlight int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.started, d.inFlight, d.maxInFlight
}

// eventually waits (bounded) until cond holds.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after %s: %s", waitBound, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitingOn is how many Connect calls wait on port's attempt within its
// deadline.
func (c *connector) waitingOn(port uint32) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.current[port]; a != nil {
		return a.waiting
	}
	return 0
}

// parked is how many attempts are in flight, abandoned ones included.
func (c *connector) parked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inFlight)
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// fakeClock is the connector's clock in tests: time moves only when the
// test fires the next timer.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Duration
	timers []*fakeTimer
	// set gets every deadline as it is set.
	set chan time.Duration
}

type fakeTimer struct {
	at, d time.Duration
	f     func()
	done  bool // fired or stopped
}

func newFakeClock() *fakeClock { return &fakeClock{set: make(chan time.Duration, 1024)} }

func (c *fakeClock) afterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	t := &fakeTimer{at: c.now + d, d: d, f: f}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	c.set <- d
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

// fireNext moves the clock to the earliest pending timer and runs it, as
// time.AfterFunc does, in a goroutine of its own.
func (c *fakeClock) fireNext(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	var next *fakeTimer
	for _, tm := range c.timers {
		if !tm.done && (next == nil || tm.at < next.at) {
			next = tm
		}
	}
	require.NotNil(t, next, "no timer to fire")
	next.done = true
	c.now = max(c.now, next.at)
	c.mu.Unlock()
	go next.f()
}

func (c *fakeClock) elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// inForce is the deadline of the attempt whose deadline spans at.
func (c *fakeClock) inForce(at time.Duration) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tm := range c.timers {
		if tm.at-tm.d <= at && at < tm.at {
			return tm.d
		}
	}
	return 0
}

// nextSet waits (bounded) for the next deadline the connector sets.
func (c *fakeClock) nextSet(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.set:
		return d
	case <-time.After(waitBound):
		t.Fatal("the connector set no deadline")
		return 0
	}
}

// framework is Virtualization.framework's socket device as the connector
// sees it: every call of dial is an attempt that answer answers at once
// (ok) or leaves parked until the test releases it. Connections are
// counted, opened and closed. Whatever is still parked when the test ends
// is answered with an error, as a VM that stopped answers it.
type framework struct {
	t      *testing.T
	answer func(n int, port uint32) (dialResult, bool)

	mu          sync.Mutex
	calls       []chan dialResult
	inFlight    int
	maxInFlight int
	opened      []*trackedConn
}

func newFramework(t *testing.T, answer func(n int, port uint32) (dialResult, bool)) *framework {
	f := &framework{t: t, answer: answer}
	t.Cleanup(func() {
		f.mu.Lock()
		calls := f.calls
		f.mu.Unlock()
		for _, ch := range calls {
			select {
			case ch <- dialResult{err: errors.New("the VM has stopped")}:
			default:
			}
		}
	})
	return f
}

func (f *framework) dial(port uint32) (net.Conn, error) {
	f.mu.Lock()
	n := len(f.calls)
	ch := make(chan dialResult, 1)
	f.calls = append(f.calls, ch)
	f.inFlight++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	f.mu.Unlock()
	r, ok := f.answer(n, port)
	if !ok {
		r = <-ch
	}
	f.mu.Lock()
	f.inFlight--
	f.mu.Unlock()
	return r.conn, r.err
}

// release answers the n-th attempt, which must be parked.
func (f *framework) release(n int, r dialResult) {
	f.mu.Lock()
	ch := f.calls[n]
	f.mu.Unlock()
	select {
	case ch <- r:
	default:
		f.t.Fatalf("attempt %d was answered already", n)
	}
}

// awaitCalls waits (bounded) until dial has been called n times: an
// attempt's goroutine reaches the framework a moment after it is made.
func (f *framework) awaitCalls(n int) {
	f.t.Helper()
	eventually(f.t, func() bool { a, _, _ := f.counts(); return a >= n }, fmt.Sprintf("%d attempts in the framework", n))
}

func (f *framework) counts() (attempts, inFlight, maxInFlight int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls), f.inFlight, f.maxInFlight
}

// conn is a new connection from the guest, whose far end the test keeps.
func (f *framework) conn() (*trackedConn, net.Conn) {
	mine, theirs := net.Pipe()
	c := &trackedConn{Conn: mine}
	f.mu.Lock()
	f.opened = append(f.opened, c)
	f.mu.Unlock()
	return c, theirs
}

// closedConns counts the connections handed out that were closed.
func (f *framework) closedConns() (opened, closed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.opened {
		if c.closed.Load() {
			closed++
		}
	}
	return len(f.opened), closed
}

// trackedConn is a connection that knows whether it was closed.
type trackedConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *trackedConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// connectResult is what a Connect in a goroutine returned.
type connectResult struct {
	conn net.Conn
	err  error
}

func connectAsync(ctx context.Context, c *connector, port uint32) <-chan connectResult {
	got := make(chan connectResult, 1)
	go func() {
		conn, err := c.Connect(ctx, port)
		got <- connectResult{conn, err}
	}()
	return got
}

func await(t *testing.T, got <-chan connectResult) connectResult {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(waitBound):
		t.Fatal("Connect did not return")
		return connectResult{}
	}
}

// testSchedule is a small schedule for the fake clock.
var testSchedule = attemptSchedule{first: time.Second, most: 4 * time.Second, parked: 8}

// patient is a connector whose attempts never pass their deadline.
func patient(dial func(uint32) (net.Conn, error)) *connector {
	return newConnectorWith(ignoresStop(dial), testSchedule, newFakeClock().afterFunc)
}

// ignoresStop is a dial that does not hear the connector's close: vz's
// Connect as it was, waiting for the framework's answer whatever happens.
func ignoresStop(dial func(uint32) (net.Conn, error)) dialFunc {
	return func(port uint32, _ <-chan struct{}) (net.Conn, error) { return dial(port) }
}

// stoppableDial is vz's Connect as the patched copy makes it
// (ConnectCancel): parked until the framework answers, which it never
// does here, or until the connector's stop is closed.
type stoppableDial struct {
	mu              sync.Mutex
	started, parked int
	returnedOnStop  int
}

func (d *stoppableDial) dial(port uint32, stop <-chan struct{}) (net.Conn, error) {
	d.mu.Lock()
	d.started++
	d.parked++
	d.mu.Unlock()
	<-stop
	d.mu.Lock()
	d.parked--
	d.returnedOnStop++
	d.mu.Unlock()
	return nil, errors.New("given up: the VM has stopped")
}

func (d *stoppableDial) counts() (started, parked, returned int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.started, d.parked, d.returnedOnStop
}

// Attempts the framework never answers are parked until the VM stops;
// then close gives every one of them up (their goroutines return and the
// connector holds none), and a Connect after it fails at once, dialing
// nothing.
func TestConnectorCloseReclaimsParkedAttempts(t *testing.T) {
	clock := newFakeClock()
	d := &stoppableDial{}
	c := newConnectorWith(d.dial, testSchedule, clock.afterFunc)
	got := connectAsync(context.Background(), c, 1024)
	// Each deadline passed makes a new attempt, the old one left parked.
	for i := 1; i <= testSchedule.parked; i++ {
		eventually(t, func() bool { s, _, _ := d.counts(); return s >= i }, fmt.Sprintf("%d attempts made", i))
		if i < testSchedule.parked {
			clock.fireNext(t)
		}
	}
	eventually(t, func() bool { return c.parked() == testSchedule.parked }, "every attempt parked")

	c.close()
	r := await(t, got)
	require.ErrorIs(t, r.err, errStopped)
	eventually(t, func() bool { return c.parked() == 0 }, "no attempt in flight once the VM stopped")
	started, parked, returned := d.counts()
	assert.Equal(t, 0, parked, "every parked dial returned")
	assert.Equal(t, started, returned)

	_, err := c.Connect(context.Background(), 1024)
	require.ErrorIs(t, err, errStopped)
	s, _, _ := d.counts()
	assert.Equal(t, started, s, "no attempt made after close")
	c.close() // twice is once
}

func TestAttemptScheduleDeadlines(t *testing.T) {
	s := attemptSchedule{first: 500 * time.Millisecond, most: 8 * time.Second}
	var got []time.Duration
	for n := range 8 {
		got = append(got, s.deadline(n))
	}
	assert.Equal(t, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}, got)
	assert.Equal(t, 8*time.Second, s.deadline(1<<20), "no overflow")
	v := vzSchedule()
	assert.Less(t, v.first, time.Second, "short at first")
	// Enough attempts for the longest default boot (a first macOS boot)
	// with every parked attempt unanswered.
	var spanned time.Duration
	for n := range v.parked {
		spanned += v.deadline(n)
	}
	macOS := hv.DefaultBootTimeout(hv.MachineInfo{Backend: backendName, Accel: backendName, Image: hv.Image{OS: hv.OSMacOS}})
	assert.Greater(t, spanned, macOS, "the cap outlasts a macOS guest's boot deadline")
}

// The first attempt, made before the guest's driver exists, is never
// answered (connect(toPort:) "does nothing"); once its deadline passes a
// second attempt is made, and it reaches the agent.
func TestConnectorAbandonsAnUnansweredAttempt(t *testing.T) {
	fw := newFramework(t, nil)
	second, _ := fw.conn()
	fw.answer = func(n int, _ uint32) (dialResult, bool) {
		if n == 0 {
			return dialResult{}, false // parked for good
		}
		return dialResult{conn: second}, true
	}
	clock := newFakeClock()
	c := newConnectorWith(ignoresStop(fw.dial), testSchedule, clock.afterFunc)

	got := connectAsync(context.Background(), c, 1024)
	assert.Equal(t, testSchedule.first, clock.nextSet(t), "the first attempt's deadline")
	fw.awaitCalls(1)
	clock.fireNext(t)
	assert.Equal(t, 2*testSchedule.first, clock.nextSet(t), "the second's, twice as long")
	r := await(t, got)
	require.NoError(t, r.err)
	assert.Same(t, second, r.conn)
	attempts, inFlight, _ := fw.counts()
	assert.Equal(t, 2, attempts)
	assert.Equal(t, 1, inFlight, "the first is still parked in the framework")
	assert.Equal(t, 1, c.parked())

}

// Deadlines grow while attempts go unanswered; an answer, even a refusal,
// starts again from the shortest.
func TestConnectorScheduleStartsAgainAfterAnAnswer(t *testing.T) {
	fw := newFramework(t, nil)
	fw.answer = func(n int, _ uint32) (dialResult, bool) {
		switch n {
		case 0, 1:
			return dialResult{}, false
		case 2:
			return dialResult{err: errors.New("connection reset by peer")}, true
		}
		conn, _ := fw.conn()
		return dialResult{conn: conn}, true
	}
	clock := newFakeClock()
	c := newConnectorWith(ignoresStop(fw.dial), testSchedule, clock.afterFunc)
	got := connectAsync(context.Background(), c, 1024)
	var deadlines []time.Duration
	for i := range 3 {
		deadlines = append(deadlines, clock.nextSet(t))
		fw.awaitCalls(i + 1)
		if i < 2 {
			clock.fireNext(t)
		}
	}
	r := await(t, got)
	assert.EqualError(t, r.err, "connection reset by peer")
	r = await(t, connectAsync(context.Background(), c, 1024))
	require.NoError(t, r.err)
	deadlines = append(deadlines, clock.nextSet(t))
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, time.Second}, deadlines)
}

// An abandoned attempt answered late has its connection closed, and
// nothing of it is left: no attempt in flight, no goroutine.
func TestConnectorClosesALateConnection(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	fw := newFramework(t, nil)
	second, _ := fw.conn()
	fw.answer = func(n int, _ uint32) (dialResult, bool) {
		if n == 0 {
			return dialResult{}, false
		}
		return dialResult{conn: second}, true
	}
	clock := newFakeClock()
	c := newConnectorWith(ignoresStop(fw.dial), testSchedule, clock.afterFunc)
	got := connectAsync(context.Background(), c, 1024)
	clock.nextSet(t)
	fw.awaitCalls(1)
	clock.fireNext(t)
	r := await(t, got)
	require.NoError(t, r.err)
	require.Same(t, second, r.conn)

	// The guest answers the first attempt at last.
	late, theirs := fw.conn()
	require.NoError(t, theirs.SetReadDeadline(time.Now().Add(waitBound)))
	fw.release(0, dialResult{conn: late})
	_, err := theirs.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the late connection is closed")
	eventually(t, func() bool { return c.parked() == 0 }, "no attempt in flight")
	opened, closed := fw.closedConns()
	assert.Equal(t, 2, opened)
	assert.Equal(t, 1, closed, "the late one only: the caller's is its own")
	assert.False(t, second.closed.Load())
	c.mu.Lock()
	assert.Equal(t, 1, c.lateClosed)
	c.mu.Unlock()

	require.NoError(t, second.Close())
	eventually(t, func() bool { return runtime.NumGoroutine() <= goroutines }, "no goroutine left behind")
}

// A guest whose agent listens only 20 s after the VM runs, with every
// attempt made before never answered (the worst case Apple's documentation
// allows), is reached within one deadline of it: the deadline in force
// when it started listening.
func TestConnectorFindsAGuestThatListensLate(t *testing.T) {
	const listens = 20 * time.Second
	clock := newFakeClock()
	fw := newFramework(t, nil)
	fw.answer = func(int, uint32) (dialResult, bool) {
		if clock.elapsed() < listens {
			return dialResult{}, false // never answered
		}
		conn, _ := fw.conn()
		return dialResult{conn: conn}, true
	}
	sched := vzSchedule()
	c := newConnectorWith(ignoresStop(fw.dial), sched, clock.afterFunc)
	got := connectAsync(context.Background(), c, 1024)

	var deadlines []time.Duration
	for {
		select {
		case r := <-got:
			require.NoError(t, r.err)
			found := clock.elapsed()
			inForce := clock.inForce(listens)
			t.Logf("deadlines %v; the agent listened at %s and was reached at %s (the deadline in force then: %s)", deadlines, listens, found, inForce)
			assert.GreaterOrEqual(t, found, listens)
			assert.LessOrEqual(t, found-listens, inForce, "reached within one deadline of listening")
			assert.LessOrEqual(t, inForce, sched.most)
			for i := 1; i < len(deadlines); i++ {
				assert.GreaterOrEqual(t, deadlines[i], deadlines[i-1], "deadlines grow")
			}
			assert.Equal(t, sched.first, deadlines[0], "short at first")
			_, _, most := fw.counts()
			assert.LessOrEqual(t, most, sched.parked)
			return
		case d := <-clock.set:
			deadlines = append(deadlines, d)
			// The attempt reaches the framework before time moves on.
			fw.awaitCalls(len(deadlines))
			if clock.elapsed() >= listens {
				continue // this attempt is answered: wait for Connect
			}
			clock.fireNext(t)
		case <-time.After(waitBound):
			t.Fatalf("stuck at %s after deadlines %v", clock.elapsed(), deadlines)
		}
	}
}

// At most sched.parked attempts are in flight at once; past that a
// Connect waits for one to end, and says why when its time runs out.
func TestConnectorCapsParkedAttempts(t *testing.T) {
	sched := attemptSchedule{first: time.Second, most: time.Second, parked: 3}
	fw := newFramework(t, func(int, uint32) (dialResult, bool) { return dialResult{}, false })
	clock := newFakeClock()
	c := newConnectorWith(ignoresStop(fw.dial), sched, clock.afterFunc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := connectAsync(ctx, c, 1024)
	for i := range sched.parked {
		clock.nextSet(t)
		fw.awaitCalls(i + 1)
		clock.fireNext(t)
	}
	eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.current[1024] == nil && len(c.inFlight) == 3
	}, "all three abandoned and still parked")
	select {
	case d := <-clock.set:
		t.Fatalf("a fourth attempt (deadline %s) beside three parked", d)
	case r := <-got:
		t.Fatalf("Connect returned %v, %v", r.conn, r.err)
	case <-time.After(50 * time.Millisecond):
	}

	// One parked attempt ends (the framework refuses it at last): a new
	// one takes its place.
	fw.release(1, dialResult{err: errors.New("connection reset by peer")})
	clock.nextSet(t)
	fw.awaitCalls(4)
	attempts, _, most := fw.counts()
	assert.Equal(t, 4, attempts)
	assert.Equal(t, 3, most, "never more than three in flight")

	clock.fireNext(t)
	eventually(t, func() bool { return c.parked() == 3 }, "three parked again")
	cancel()
	r := await(t, got)
	require.ErrorIs(t, r.err, context.Canceled)
	assert.ErrorContains(t, r.err, "3 connection attempts are unanswered, the most a VM keeps in flight")
}

func TestConnectorSharesAnAttempt(t *testing.T) {
	d := newBlockingDial()
	c := patient(d.dial)
	results := make(chan connectResult, 2)
	for range 2 {
		go func() {
			conn, err := c.Connect(context.Background(), 1024)
			results <- connectResult{conn, err}
		}()
	}
	eventually(t, func() bool { return c.waitingOn(1024) == 2 }, "two Connects waiting on one attempt")

	// One connection serves one caller; the other makes the next attempt.
	first, _ := net.Pipe()
	d.release <- dialResult{conn: first}
	r := <-results
	require.NoError(t, r.err)
	assert.Same(t, first, r.conn)
	second, _ := net.Pipe()
	d.release <- dialResult{conn: second}
	r = <-results
	require.NoError(t, r.err)
	assert.Same(t, second, r.conn)
	started, _, most := d.counts()
	assert.Equal(t, 2, started)
	assert.Equal(t, 1, most)

	// An error is every waiter's.
	for range 2 {
		go func() {
			conn, err := c.Connect(context.Background(), 1024)
			results <- connectResult{conn, err}
		}()
	}
	eventually(t, func() bool { return c.waitingOn(1024) == 2 }, "two Connects waiting")
	d.release <- dialResult{err: errors.New("connection reset by peer")}
	for range 2 {
		r := <-results
		assert.EqualError(t, r.err, "connection reset by peer")
		assert.Nil(t, r.conn)
	}
	started, _, _ = d.counts()
	assert.Equal(t, 3, started)
}

// A Connect that gives up leaves its attempt in flight for the next, and
// an attempt that ends with nobody waiting has its connection closed.
func TestConnectorLeftAttempt(t *testing.T) {
	d := newBlockingDial()
	c := patient(d.dial)
	for range 100 {
		_, err := c.Connect(cancelled(), 1024)
		require.ErrorIs(t, err, context.Canceled)
	}
	eventually(t, func() bool { s, _, _ := d.counts(); return s == 1 }, "the attempt made")
	started, inFlight, _ := d.counts()
	assert.Equal(t, 1, started, "one attempt, joined by every Connect")
	assert.Equal(t, 1, inFlight)

	mine, theirs := net.Pipe()
	require.NoError(t, theirs.SetReadDeadline(time.Now().Add(waitBound)))
	d.release <- dialResult{conn: mine}
	_, err := theirs.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "nobody wanted it: closed")
}

// Each port has its own attempt: one parked for a port nothing answers
// does not hold up another's.
func TestConnectorPortsHaveTheirOwnAttempts(t *testing.T) {
	fw := newFramework(t, nil)
	agent, _ := fw.conn()
	fw.answer = func(_ int, port uint32) (dialResult, bool) {
		if port == 1 {
			return dialResult{}, false
		}
		return dialResult{conn: agent}, true
	}
	c := patient(fw.dial)
	_, err := c.Connect(cancelled(), 1)
	require.ErrorIs(t, err, context.Canceled) // port 1's attempt stays in flight
	conn, err := c.Connect(context.Background(), 1024)
	require.NoError(t, err)
	assert.Same(t, agent, conn)
}

func TestConnectWhile(t *testing.T) {
	d := newBlockingDial()
	c := patient(d.dial)
	stopped := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		_, err := c.connectWhile(context.Background(), stopped, 1024)
		errs <- err
	}()
	eventually(t, func() bool { return c.waitingOn(1024) == 1 }, "a Connect waiting")
	close(stopped)
	assert.EqualError(t, <-errs, "the VM has stopped")

	go func() {
		_, err := c.connectWhile(context.Background(), make(chan struct{}), 1024)
		errs <- err
	}()
	eventually(t, func() bool { return c.waitingOn(1024) == 1 }, "a Connect waiting")
	d.release <- dialResult{err: errors.New("connection reset by peer")}
	assert.EqualError(t, <-errs, "vsock port 1024: connection reset by peer")

	_, err := c.connectWhile(cancelled(), make(chan struct{}), 1024)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestConnectRetry(t *testing.T) {
	var attempts atomic.Int32
	c, err := connectRetryEvery(context.Background(), 0, func(ctx context.Context) (net.Conn, error) {
		if attempts.Add(1) <= 3 {
			return nil, errors.New("connection reset by peer")
		}
		a, _ := net.Pipe()
		return a, nil
	})
	require.NoError(t, err)
	assert.NotNil(t, c)
	assert.Equal(t, int32(4), attempts.Load())

	_, err = connectRetry(cancelled(), func(ctx context.Context) (net.Conn, error) {
		return nil, errors.New("connection reset by peer")
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "last attempt: connection reset by peer")

	// An attempt cut short by ctx says so once, not twice.
	_, err = connectRetry(cancelled(), func(ctx context.Context) (net.Conn, error) {
		return nil, fmt.Errorf("%w: 3 connection attempts in a row to vsock port 1024 were unanswered", ctx.Err())
	})
	assert.EqualError(t, err, "context canceled: 3 connection attempts in a row to vsock port 1024 were unanswered")
}

// vzSocketConn has exactly the methods of vz v3.7.1's
// *VirtioSocketConnection (TestVZSocketConnIsVZs checks them against vz's
// source): a net.Conn over a unix socket it keeps to itself, so no
// CloseWrite. closed is closed by the first Close.
type vzSocketConn struct {
	raw    net.Conn
	port   uint32 // the guest's
	once   sync.Once
	closed chan struct{}
}

func newVZSocketConn(raw net.Conn, port uint32) *vzSocketConn {
	return &vzSocketConn{raw: raw, port: port, closed: make(chan struct{})}
}

func (v *vzSocketConn) Read(b []byte) (int, error)  { return v.raw.Read(b) }
func (v *vzSocketConn) Write(b []byte) (int, error) { return v.raw.Write(b) }
func (v *vzSocketConn) Close() error {
	v.once.Do(func() { close(v.closed) })
	return v.raw.Close()
}
func (v *vzSocketConn) LocalAddr() net.Addr                { return v.raw.LocalAddr() }
func (v *vzSocketConn) RemoteAddr() net.Addr               { return v.raw.RemoteAddr() }
func (v *vzSocketConn) SetDeadline(t time.Time) error      { return v.raw.SetDeadline(t) }
func (v *vzSocketConn) SetReadDeadline(t time.Time) error  { return v.raw.SetReadDeadline(t) }
func (v *vzSocketConn) SetWriteDeadline(t time.Time) error { return v.raw.SetWriteDeadline(t) }
func (v *vzSocketConn) DestinationPort() uint32            { return v.port }
func (v *vzSocketConn) SourcePort() uint32                 { return 3000 }

// The double is only as good as its likeness: its exported methods are
// those vz's source declares on VirtioSocketConnection.
func TestVZSocketConnIsVZs(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/Code-Hex/vz/v3").Output()
	require.NoError(t, err)
	var mod struct{ Version, Dir string }
	require.NoError(t, json.Unmarshal(out, &mod))
	require.Equal(t, "v3.7.1", mod.Version, "the version this double was written from")
	require.NotEmpty(t, mod.Dir, "vz's source is not in the module cache: run `go mod download`")

	files, err := filepath.Glob(filepath.Join(mod.Dir, "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	var vzMethods []string
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == "VirtioSocketConnection" {
				vzMethods = append(vzMethods, fn.Name.Name)
			}
		}
	}
	require.NotEmpty(t, vzMethods, "no VirtioSocketConnection in %s", mod.Dir)
	var ours []string
	typ := reflect.TypeOf(&vzSocketConn{})
	for i := range typ.NumMethod() {
		ours = append(ours, typ.Method(i).Name)
	}
	sort.Strings(vzMethods)
	assert.Equal(t, vzMethods, ours)
	assert.NotContains(t, vzMethods, "CloseWrite", "vz's connection cannot be half-closed")
	_, ok := any(&vzSocketConn{}).(closeWriter)
	assert.False(t, ok)
}

// proxied runs proxy between a new client and a new guest end, the guest
// end as vz hands it (or a plain unix socket), and returns the client, the
// agent's end and the proxy's end.
func proxied(t *testing.T, ctx context.Context, asVZ bool, linger time.Duration) (client, agent net.Conn, guestEnd net.Conn, done <-chan struct{}) {
	t.Helper()
	client, hostEnd := unixPair(t)
	guestEnd, agent = unixPair(t)
	if asVZ {
		guestEnd = newVZSocketConn(guestEnd, 1024)
	}
	finished := make(chan struct{})
	go func() {
		proxy(ctx, hostEnd, guestEnd, linger)
		close(finished)
	}()
	for _, c := range []net.Conn{client, agent} {
		require.NoError(t, c.SetDeadline(time.Now().Add(waitBound)))
	}
	return client, agent, guestEnd, finished
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitBound):
		t.Fatalf("%s did not happen", what)
	}
}

func TestProxyCopiesBothWays(t *testing.T) {
	for _, asVZ := range []bool{false, true} {
		client, agent, _, done := proxied(t, context.Background(), asVZ, waitBound)
		go func() { _, _ = io.Copy(agent, agent) }()
		echoes(t, client, "hello agent")
		echoes(t, client, "again")
		// The agent goes away: the client reads the end, and the proxy
		// ends once the client closes too.
		require.NoError(t, agent.Close())
		_, err := client.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF)
		require.NoError(t, client.Close())
		waitClosed(t, done, "the proxy's end")
	}
}

// A client that half-closes after its request gets the answer, whether
// its end of stream can be passed on (a unix socket) or not (vz's
// connection, where the old proxy closed both ends instead).
func TestProxyHalfClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		asVZ bool
	}{{"unix socket", false}, {"vz connection", true}} {
		t.Run(tc.name, func(t *testing.T) {
			client, agent, guestEnd, done := proxied(t, context.Background(), tc.asVZ, waitBound)
			go func() {
				req, err := bufio.NewReader(agent).ReadString('\n')
				if err != nil {
					return
				}
				if vzEnd, ok := guestEnd.(*vzSocketConn); ok {
					// Time for a proxy that reacts to the half-close by
					// closing the guest's end to do so: the answer below
					// would then be lost.
					select {
					case <-vzEnd.closed:
					case <-time.After(200 * time.Millisecond):
					}
				}
				_, _ = agent.Write([]byte("got " + req))
				_ = agent.Close()
			}()
			_, err := client.Write([]byte("request\n"))
			require.NoError(t, err)
			require.NoError(t, client.(*net.UnixConn).CloseWrite())
			answer, err := io.ReadAll(client)
			require.NoError(t, err)
			assert.Equal(t, "got request\n", string(answer))
			waitClosed(t, done, "the proxy's end")
		})
	}
}

// A client that closes entirely cannot be told from one that half-closed
// when the guest's end is vz's: the guest's end is closed after the linger.
func TestProxyLingersThenCloses(t *testing.T) {
	client, _, guestEnd, done := proxied(t, context.Background(), true, 10*time.Millisecond)
	require.NoError(t, client.Close())
	waitClosed(t, guestEnd.(*vzSocketConn).closed, "closing the guest's end")
	waitClosed(t, done, "the proxy's end")
}

func TestProxyEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	client, agent, _, done := proxied(t, ctx, true, waitBound)
	cancel()
	waitClosed(t, done, "the proxy's end with its context")
	_, err := client.Read(make([]byte, 1))
	assert.Error(t, err)
	_, err = agent.Read(make([]byte, 1))
	assert.Error(t, err)
}
