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

// connector turns a dial that cannot be cancelled into Connect(ctx, port),
// with at most one attempt in flight.
//
// vz's VirtioSocketDevice.Connect cannot be cancelled: it parks its caller
// and a cgo handle until the framework answers, which it does once the
// guest's vsock device answers (at once with a reset when nothing listens
// there; not at all while the guest's driver is not up yet). Retrying every
// connectAttempt with a new attempt each time parked a goroutine, a second
// one waiting to close a late connection, and a cgo handle per attempt:
// about 85 over the 3 minutes a macOS guest may take to boot. Here a Connect
// made while an attempt is in flight waits for that attempt instead of
// starting another; when its ctx ends first it leaves the attempt running
// for the next Connect to wait on. An attempt that ends with nobody
// waiting closes the connection it got.
type connector struct {
	dial func(port uint32) (net.Conn, error)

	mu  sync.Mutex
	cur *attempt // in flight, or nil
}

// attempt is one call of dial.
type attempt struct {
	port uint32
	done chan struct{}
	// Set before done closes.
	conn net.Conn
	err  error
	// waiting counts the Connect calls waiting on this attempt; taken is
	// set once one of them has its connection (or it was closed unused).
	waiting int
	taken   bool
}

func newConnector(dial func(port uint32) (net.Conn, error)) *connector {
	return &connector{dial: dial}
}

// Connect returns a connection to port from an attempt made (or already in
// flight) for it, or the error that attempt ended with, or ctx's error.
func (c *connector) Connect(ctx context.Context, port uint32) (net.Conn, error) {
	for {
		c.mu.Lock()
		a := c.cur
		if a == nil {
			a = &attempt{port: port, done: make(chan struct{})}
			c.cur = a
			go c.run(a)
		}
		a.waiting++
		c.mu.Unlock()

		select {
		case <-a.done:
		case <-ctx.Done():
			c.leave(a)
			return nil, ctx.Err()
		}

		c.mu.Lock()
		a.waiting--
		switch {
		case a.port != port:
			// The attempt in flight was for another port; it has ended,
			// so ours may start.
			c.closeUnclaimed(a)
		case a.err != nil:
			c.mu.Unlock()
			return nil, a.err
		case !a.taken:
			a.taken = true
			c.mu.Unlock()
			return a.conn, nil
		}
		// Another Connect has this attempt's connection: make another.
		c.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
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

// run makes attempt a and hands its result to whoever waits.
func (c *connector) run(a *attempt) {
	conn, err := c.dial(a.port)
	if err == nil && conn == nil {
		err = errors.New("no connection and no error")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = nil
	a.conn, a.err = conn, err
	close(a.done)
	c.closeUnclaimed(a)
}

// leave is a waiter giving up on a before it ended, or after.
func (c *connector) leave(a *attempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a.waiting--
	select {
	case <-a.done:
		c.closeUnclaimed(a)
	default:
	}
}

// closeUnclaimed closes an ended attempt's connection that nobody waits
// for any more; c.mu is held.
func (c *connector) closeUnclaimed(a *attempt) {
	if a.waiting == 0 && !a.taken && a.conn != nil {
		a.taken = true
		_ = a.conn.Close()
	}
}

// connectRetry dials until it succeeds or ctx ends, giving each attempt
// connectAttempt and pausing agentRetry between attempts.
func connectRetry(ctx context.Context, dial func(context.Context) (net.Conn, error)) (net.Conn, error) {
	return connectRetryEvery(ctx, connectAttempt, agentRetry, dial)
}

// connectRetryEvery is connectRetry with its timings given.
func connectRetryEvery(ctx context.Context, perAttempt, pause time.Duration, dial func(context.Context) (net.Conn, error)) (net.Conn, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, perAttempt)
		c, err := dial(actx)
		cancel()
		if err == nil {
			return c, nil
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
