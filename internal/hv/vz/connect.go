package vz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// connector turns a dial that cannot be cancelled into Connect(ctx, port):
// each attempt gets a deadline, and an attempt that passes it is abandoned
// (left to finish on its own) and a new one is made.
//
// vz's VirtioSocketDevice.Connect cannot be cancelled: it parks its caller
// and a cgo handle until the framework answers. The framework answers at
// once once the guest's vsock driver is up (a connection, or a reset when
// nothing listens on the port), but an attempt made before that may get no
// answer at all: Apple documents that connect(toPort:) "does nothing" while
// the guest does not listen, vz's own test waits 5 s after the VM runs
// before it connects because the call "does not seem to have a connection
// timeout", and the host connects the moment the VM reports it runs, long
// before the guest's driver exists. Waiting on that first attempt for good
// (this connector's old rule: one attempt in flight, every Connect waiting
// on it) could wait for the whole boot deadline on an attempt that will
// never be answered, however soon the agent listens.
//
// So, per port: Connect calls share the attempt in flight, which has its
// deadline (short at first, doubling after every attempt that passes its
// own, up to a longest; an answer, even a refusal, starts again from the
// shortest); once it passes, the attempt is abandoned and the next Connect
// (those waiting on it included) makes a new one. A guest whose agent
// starts listening while an attempt is parked is reached within one
// deadline of it, whether or not the parked attempt is ever answered. An
// abandoned attempt that is answered late with a connection has it closed:
// nobody waits for it. And at most sched.parked attempts are in flight at
// once (each is a goroutine and a cgo handle for as long as the framework
// keeps it): past that a Connect waits for one of them to end. Once the
// VM has stopped (close), the attempts still parked are given up: dial
// gets a channel closed then, and returns, so that a controller that lives
// on after its VM keeps none of their goroutines.
type connector struct {
	dial      dialFunc
	sched     attemptSchedule
	afterFunc afterFunc

	mu sync.Mutex
	// current is each port's attempt within its deadline.
	current map[uint32]*attempt
	// inFlight holds every attempt whose dial has not returned, the
	// abandoned ones included.
	inFlight map[*attempt]struct{}
	// unanswered counts, per port, the attempts in a row that passed their
	// deadline: the next one's deadline grows with it.
	unanswered map[uint32]int
	// ended is closed, and replaced, whenever an attempt in flight returns.
	ended chan struct{}
	// lateClosed counts the connections of abandoned attempts, closed.
	lateClosed int
	// stop is closed by close, once.
	stop     chan struct{}
	stopOnce sync.Once
}

// dialFunc is one connection attempt to port; it returns soon after stop
// is closed (the VM has stopped), answered or not.
type dialFunc func(port uint32, stop <-chan struct{}) (net.Conn, error)

// errStopped is a Connect's error once the connector is closed.
var errStopped = errors.New("the VM has stopped")

// attemptSchedule paces a connector's attempts.
type attemptSchedule struct {
	// first is the deadline of an attempt after an answer (or of the first
	// one); each attempt after one that passed its deadline gets twice the
	// one before, up to most.
	first, most time.Duration
	// parked is the most attempts in flight at once.
	parked int
}

// The schedule of vz's connections.
const (
	// firstAttempt: a guest whose driver is up answers in milliseconds,
	// so an attempt unanswered after this is likely parked.
	firstAttempt = 500 * time.Millisecond
	// longestAttempt bounds the time between the agent starting to
	// listen and a new attempt reaching it, when the parked ones are never
	// answered.
	longestAttempt = 8 * time.Second
	// mostParked: the attempts of hv's longest default boot deadline (5
	// minutes, a first macOS boot) made every longestAttempt are about 40;
	// room beyond that, and a bound for a host that runs for days beside a
	// hung guest.
	mostParked = 48
)

// vzSchedule is the schedule of vz's connections.
func vzSchedule() attemptSchedule {
	return attemptSchedule{first: firstAttempt, most: longestAttempt, parked: mostParked}
}

// deadline is the deadline of an attempt made after n attempts in a row
// passed theirs.
func (s attemptSchedule) deadline(n int) time.Duration {
	d := s.first
	for i := 0; i < n && d < s.most; i++ {
		d *= 2
	}
	return min(d, s.most)
}

// afterFunc runs f once d has passed, unless the stop it returns is called
// first: time.AfterFunc's, or a test's clock.
type afterFunc func(d time.Duration, f func()) (stop func() bool)

func realAfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// attempt is one call of dial.
type attempt struct {
	port     uint32
	deadline time.Duration
	// done is closed once dial has returned, conn and err then set;
	// expired once the deadline passed before that.
	done, expired chan struct{}
	stopTimer     func() bool
	conn          net.Conn
	err           error
	// waiting counts the Connect calls waiting on this attempt; taken is
	// set once one of them has its connection (or it was closed unused);
	// abandoned once its deadline passed unanswered.
	waiting          int
	taken, abandoned bool
}

func newConnector(dial dialFunc) *connector {
	return newConnectorWith(dial, vzSchedule(), realAfterFunc)
}

// newConnectorWith is newConnector with its schedule and clock given.
func newConnectorWith(dial dialFunc, sched attemptSchedule, after afterFunc) *connector {
	return &connector{
		dial: dial, sched: sched, afterFunc: after,
		current: map[uint32]*attempt{}, inFlight: map[*attempt]struct{}{},
		unanswered: map[uint32]int{}, ended: make(chan struct{}),
		stop: make(chan struct{}),
	}
}

// stopped says whether close was called.
func (c *connector) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// close gives up every attempt in flight and makes no more: the VM has
// stopped, and the framework may never answer what is parked.
func (c *connector) close() {
	c.stopOnce.Do(func() { close(c.stop) })
}

// Connect returns a connection to port from an attempt made (or already in
// flight) for it, or the error the attempt was answered with, or ctx's
// error once ctx ends first.
func (c *connector) Connect(ctx context.Context, port uint32) (net.Conn, error) {
	for {
		if c.stopped() {
			return nil, errStopped
		}
		a, full := c.join(port)
		if a == nil {
			select {
			case <-full:
				continue
			case <-c.stop:
				return nil, errStopped
			case <-ctx.Done():
				return nil, c.gaveUp(ctx, port)
			}
		}
		select {
		case <-a.done:
		case <-a.expired:
		case <-ctx.Done():
			c.leave(a)
			return nil, c.gaveUp(ctx, port)
		}
		conn, err, again := c.collect(a)
		if err != nil && c.stopped() {
			// The attempt was given up because the VM stopped.
			return nil, errStopped
		}
		if !again {
			return conn, err
		}
		if ctx.Err() != nil {
			return nil, c.gaveUp(ctx, port)
		}
	}
}

// join returns port's attempt within its deadline, made now when there is
// none, counting the caller as waiting on it; or, when sched.parked
// attempts are in flight, nil and a channel closed once one of them ends.
func (c *connector) join(port uint32) (*attempt, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.current[port]
	if a == nil {
		if len(c.inFlight) >= c.sched.parked {
			return nil, c.ended
		}
		a = &attempt{port: port, deadline: c.sched.deadline(c.unanswered[port]), done: make(chan struct{}), expired: make(chan struct{})}
		c.current[port] = a
		c.inFlight[a] = struct{}{}
		a.stopTimer = c.afterFunc(a.deadline, func() { c.expire(a) })
		go c.run(a)
	}
	a.waiting++
	return a, nil
}

// collect is a waiter's share of a once a has ended or expired: its
// connection (when no other waiter has it) or its error, or again when
// the caller must make or join another attempt.
func (c *connector) collect(a *attempt) (conn net.Conn, err error, again bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a.waiting--
	switch {
	case a.abandoned:
		return nil, nil, true
	case a.err != nil:
		return nil, a.err, false
	case !a.taken:
		a.taken = true
		return a.conn, nil, false
	}
	// Another Connect has this attempt's connection.
	return nil, nil, true
}

// gaveUp is the error of a Connect whose ctx ended first.
func (c *connector) gaveUp(ctx context.Context, port uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, parked := c.unanswered[port], len(c.inFlight)
	switch {
	case parked >= c.sched.parked:
		return fmt.Errorf("%w: %d connection attempts are unanswered, the most a VM keeps in flight: the guest's vsock device does not answer", ctx.Err(), parked)
	case n > 0:
		return fmt.Errorf("%w: %d connection attempts in a row to vsock port %d were unanswered", ctx.Err(), n, port)
	}
	return ctx.Err()
}

// connectWhile is Connect that also gives up once stopped is closed (the
// VM has stopped), saying so.
func (c *connector) connectWhile(ctx context.Context, stopped <-chan struct{}, port uint32) (net.Conn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	conn, err := c.Connect(ctx, port)
	if err == nil {
		return conn, nil
	}
	select {
	case <-stopped:
		return nil, errors.New("the VM has stopped")
	default:
	}
	if ctx.Err() != nil {
		return nil, err
	}
	return nil, fmt.Errorf("vsock port %d: %w", port, err)
}

// run makes attempt a and hands its result to whoever waits; the
// connection of an attempt abandoned meanwhile is closed.
func (c *connector) run(a *attempt) {
	conn, err := c.dial(a.port, c.stop)
	if err == nil && conn == nil {
		err = errors.New("no connection and no error")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a.stopTimer()
	delete(c.inFlight, a)
	if c.current[a.port] == a {
		delete(c.current, a.port)
	}
	// An answer, even late or a refusal: the guest's device answers now.
	delete(c.unanswered, a.port)
	a.conn, a.err = conn, err
	close(a.done)
	if a.abandoned && conn != nil {
		a.taken = true
		c.lateClosed++
		_ = conn.Close()
	}
	c.closeUnclaimed(a)
	close(c.ended)
	c.ended = make(chan struct{})
}

// expire abandons a when its deadline passes before its answer.
func (c *connector) expire(a *attempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-a.done:
		return
	default:
	}
	a.abandoned = true
	if c.current[a.port] == a {
		delete(c.current, a.port)
	}
	c.unanswered[a.port]++
	close(a.expired)
}

// leave is a waiter giving up on a before it ended, or after.
func (c *connector) leave(a *attempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a.waiting--
	c.closeUnclaimed(a)
}

// closeUnclaimed closes an ended attempt's connection that nobody waits
// for any more; c.mu is held.
func (c *connector) closeUnclaimed(a *attempt) {
	select {
	case <-a.done:
	default:
		return
	}
	if a.waiting == 0 && !a.taken && a.conn != nil {
		a.taken = true
		_ = a.conn.Close()
	}
}

// connectRetry dials until it succeeds or ctx ends, pausing agentRetry
// after each failed attempt (a refusal: nothing listens on the port yet).
// dial bounds nothing itself: the connector gives each attempt its deadline.
func connectRetry(ctx context.Context, dial func(context.Context) (net.Conn, error)) (net.Conn, error) {
	return connectRetryEvery(ctx, agentRetry, dial)
}

// connectRetryEvery is connectRetry with its pause given.
func connectRetryEvery(ctx context.Context, pause time.Duration, dial func(context.Context) (net.Conn, error)) (net.Conn, error) {
	for {
		c, err := dial(ctx)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			if errors.Is(err, ctx.Err()) {
				return nil, err
			}
			return nil, fmt.Errorf("%w (last attempt: %w)", ctx.Err(), err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (last attempt: %w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// halfOpenLinger bounds how long a proxied connection stays up after one
// of its directions has ended cleanly: the other may still carry an
// answer, but when the end could not be passed on (vz's connection cannot
// be half-closed) nothing tells the far side to finish, and a client that
// closed entirely must not hold the guest's end for the VM's whole life.
const halfOpenLinger = time.Minute

// closeWriter is a connection that can be half-closed: a unix socket can;
// vz v3.7.1's VirtioSocketConnection cannot (it has no CloseWrite, and
// keeps the unix socket it wraps unexported).
type closeWriter interface{ CloseWrite() error }

// proxy copies between a and b until both directions have ended, or ctx
// has, and closes both. A direction whose source ends cleanly half-closes
// its destination when the destination can, and otherwise leaves it alone:
// either way the other direction goes on, for at most linger, so that a
// client that half-closes after its request still gets the answer. A
// direction that fails (a reset, a write to a closed end) ends both at
// once.
func proxy(ctx context.Context, a, b net.Conn, linger time.Duration) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			_ = a.Close()
			_ = b.Close()
		})
	}
	stop := context.AfterFunc(ctx, closeBoth)
	defer stop()
	finished := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		if err != nil {
			closeBoth()
		} else if cw, ok := dst.(closeWriter); ok {
			if cw.CloseWrite() != nil {
				closeBoth()
			}
		}
		finished <- struct{}{}
	}
	go pipe(a, b)
	go pipe(b, a)
	<-finished
	t := time.NewTimer(linger)
	select {
	case <-finished:
	case <-t.C:
		closeBoth()
		<-finished
	}
	t.Stop()
	closeBoth()
}
