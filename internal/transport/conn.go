package transport

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// namedAddr is the net.Addr of a connection that has no network address of
// its own: a pipe pair, a device, a darwin vsock endpoint.
type namedAddr struct {
	network string
	name    string
}

func (a namedAddr) Network() string { return a.network }
func (a namedAddr) String() string  { return a.name }

type readDeadliner interface{ SetReadDeadline(time.Time) error }
type writeDeadliner interface{ SetWriteDeadline(time.Time) error }

// streamConn is a net.Conn over a reader and a writer that are not a socket.
type streamConn struct {
	r       io.Reader
	w       io.Writer
	closers []io.Closer
	local   net.Addr
	remote  net.Addr

	closeOnce sync.Once
	closeErr  error
}

// PipeConn joins r and w into a net.Conn named name: Read reads r, Write
// writes w and Close closes both. A deadline is passed to r (read) and w
// (write) when they have SetReadDeadline / SetWriteDeadline, as pipes from
// os.Pipe do; a side without them, or an *os.File the poller does not serve
// (which reports os.ErrNoDeadline), ignores the deadline and the setter
// returns nil, so a deadline on such a conn never fires.
func PipeConn(r io.ReadCloser, w io.WriteCloser, name string) net.Conn {
	a := namedAddr{network: "pipe", name: name}
	return &streamConn{r: r, w: w, closers: []io.Closer{r, w}, local: a, remote: a}
}

// newFileConn is a net.Conn over one file that is both ends: a device or a
// socket that package net cannot wrap.
func newFileConn(f *os.File, local, remote net.Addr) net.Conn {
	return &streamConn{r: f, w: f, closers: []io.Closer{f}, local: local, remote: remote}
}

func (c *streamConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *streamConn) Write(b []byte) (int, error) { return c.w.Write(b) }
func (c *streamConn) LocalAddr() net.Addr         { return c.local }
func (c *streamConn) RemoteAddr() net.Addr        { return c.remote }

// Close closes both ends once; later calls report net.ErrClosed.
func (c *streamConn) Close() error {
	err := net.ErrClosed
	c.closeOnce.Do(func() {
		var errs []error
		for _, cl := range c.closers {
			errs = append(errs, cl.Close())
		}
		c.closeErr = errors.Join(errs...)
		err = c.closeErr
	})
	return err
}

func (c *streamConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

func (c *streamConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.r.(readDeadliner); ok {
		return ignoreNoDeadline(d.SetReadDeadline(t))
	}
	return nil
}

func (c *streamConn) SetWriteDeadline(t time.Time) error {
	if d, ok := c.w.(writeDeadliner); ok {
		return ignoreNoDeadline(d.SetWriteDeadline(t))
	}
	return nil
}

func ignoreNoDeadline(err error) error {
	if errors.Is(err, os.ErrNoDeadline) {
		return nil
	}
	return err
}

// watchedConn reports the end of a connection to the listener that handed it
// out: when it is closed, and (for onEOF) when its peer has gone.
type watchedConn struct {
	net.Conn
	onEOF   func()
	onClose func(readAny bool)

	readAny   atomic.Bool
	closeOnce sync.Once
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.readAny.Store(true)
	}
	if errors.Is(err, io.EOF) && c.onEOF != nil {
		c.onEOF()
	}
	return n, err
}

func (c *watchedConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() { c.onClose(c.readAny.Load()) })
	return err
}

// singleConnListener hands out one connection, then reports itself closed.
type singleConnListener struct {
	addr    net.Addr
	pending chan net.Conn // holds the connection until the first Accept
	done    chan struct{} // closed when the listener or the connection ends
	end     func()
}

// SingleConnListener is a net.Listener whose first Accept returns c and whose
// later Accepts block until the listener is closed, c is closed, or a Read on
// c has returned io.EOF, and then return an error that errors.Is
// net.ErrClosed. That makes grpc.Server.Serve return once the peer on the
// other end of stdio goes away, so the agent exits with its controller.
// Closing the listener closes c only if it was never accepted.
func SingleConnListener(c net.Conn) net.Listener {
	l := &singleConnListener{
		addr:    c.LocalAddr(),
		pending: make(chan net.Conn, 1),
		done:    make(chan struct{}),
	}
	l.end = sync.OnceFunc(func() { close(l.done) })
	l.pending <- &watchedConn{Conn: c, onEOF: l.end, onClose: func(bool) { l.end() }}
	return l
}

func (l *singleConnListener) Accept() (net.Conn, error) {
	// Checked first so that a closed listener never hands out its
	// connection, whatever select would pick.
	select {
	case <-l.done:
		return nil, l.closedErr()
	default:
	}
	select {
	case c := <-l.pending:
		return c, nil
	case <-l.done:
		return nil, l.closedErr()
	}
}

func (l *singleConnListener) Close() error {
	l.end()
	select {
	case c := <-l.pending:
		return c.Close()
	default:
		return nil
	}
}

func (l *singleConnListener) Addr() net.Addr { return l.addr }

func (l *singleConnListener) closedErr() error {
	return &net.OpError{Op: "accept", Net: l.addr.Network(), Addr: l.addr, Err: net.ErrClosed}
}
