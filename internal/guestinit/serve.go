package guestinit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/qoslab/qoslab/internal/agent"
)

// gracefulStopWait bounds how long a stop waits for RPCs in flight (a Run
// streaming a cell) before cutting them off.
const gracefulStopWait = 5 * time.Second

// errAllChannelsClosed is serve's answer when every listener ended on its
// own, leaving the agent unreachable.
var errAllChannelsClosed = errors.New("every channel the agent served on has closed")

// serve runs one agent on every listener until a Shutdown request has been
// answered or ctx ends (nil then), or every listener has failed. A listener
// that fails while others still serve is reported through failed and the
// others go on.
func serve(ctx context.Context, policy agent.Policy, listeners []net.Listener, failed func(net.Listener, error)) error {
	tracked := make([]*trackingListener, len(listeners))
	for i, l := range listeners {
		tracked[i] = &trackingListener{Listener: l, conns: map[*trackedConn]bool{}}
	}
	var g *grpc.Server
	stopping := make(chan struct{})
	stop := sync.OnceFunc(func() {
		close(stopping)
		// Both of gRPC's stops wait for connections still in their
		// handshake, which on a device whose host side is not connected
		// means until the 120 s handshake timeout: those are closed here.
		for _, l := range tracked {
			_ = l.Close()
			l.closeConns(false)
		}
		done := make(chan struct{})
		go func() {
			g.GracefulStop()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(gracefulStopWait):
			for _, l := range tracked {
				l.closeConns(true)
			}
			g.Stop()
		}
	})
	srv := agent.NewServer(policy, stop)
	g = srv.GRPCServer()
	defer srv.Close()

	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-watchDone:
		}
	}()

	var wg sync.WaitGroup
	errs := make([]error, len(listeners))
	for i, l := range tracked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := g.Serve(l)
			select {
			case <-stopping:
				return
			default:
			}
			if err == nil {
				err = net.ErrClosed
			}
			errs[i] = fmt.Errorf("serve on %s: %w", l.Addr(), err)
			if failed != nil {
				failed(l, errs[i])
			}
		}()
	}
	wg.Wait()
	select {
	case <-stopping:
		// Serve returns as soon as its listener closes; the stop (and so the
		// Shutdown reply) may still be finishing.
		stop()
		return nil
	default:
	}
	g.Stop()
	return fmt.Errorf("%w: %w", errAllChannelsClosed, errors.Join(errs...))
}

// trackingListener knows the connections it handed out, so that a stop can
// close the ones gRPC would otherwise wait for.
type trackingListener struct {
	net.Listener

	mu     sync.Mutex
	closed bool
	conns  map[*trackedConn]bool
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, owner: l}
	l.mu.Lock()
	closed := l.closed
	if !closed {
		l.conns[tc] = true
	}
	l.mu.Unlock()
	if closed {
		// Accepted as the listener closed: it has not been read yet.
		_ = c.Close()
		return nil, &net.OpError{Op: "accept", Net: l.Addr().Network(), Addr: l.Addr(), Err: net.ErrClosed}
	}
	return tc, nil
}

func (l *trackingListener) Close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return l.Listener.Close()
}

// closeConns closes the connections that have read nothing (a handshake
// still waiting for its peer) or, with all, every one.
func (l *trackingListener) closeConns(all bool) {
	l.mu.Lock()
	var victims []*trackedConn
	for c := range l.conns {
		if all || !c.readAny.Load() {
			victims = append(victims, c)
		}
	}
	l.mu.Unlock()
	for _, c := range victims {
		_ = c.Close()
	}
}

type trackedConn struct {
	net.Conn
	owner   *trackingListener
	readAny atomic.Bool
}

func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.readAny.Store(true)
	}
	return n, err
}

func (c *trackedConn) Close() error {
	c.owner.mu.Lock()
	delete(c.owner.conns, c)
	c.owner.mu.Unlock()
	return c.Conn.Close()
}
