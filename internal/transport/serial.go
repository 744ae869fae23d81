package transport

import (
	"net"
	"os"
	"sync"
	"time"
)

// Waits before reopening a device whose last connection ended without a
// byte read: a virtio-serial port whose host side is not connected reads as
// EOF at once, and without a pause Accept and the gRPC server would spin.
const (
	reopenBackoffMin = 50 * time.Millisecond
	reopenBackoffMax = time.Second
)

// serialListener yields one connection at a time over a character device and
// reopens the device after each one closes, because the host side of a
// virtio-serial port can disconnect and reconnect.
type serialListener struct {
	path      string
	addr      net.Addr
	closed    chan struct{}
	closeOnce sync.Once
	// free holds a token while no connection is out; Accept takes it and
	// the connection's Close puts it back.
	free chan struct{}

	mu      sync.Mutex
	opened  *os.File // opened by listenSerial, handed out by the first Accept
	backoff time.Duration
}

// listenSerial opens the device at once so that a wrong path fails here,
// with the path named, rather than at the first Accept.
func listenSerial(path string) (net.Listener, error) {
	f, err := openSerial(path)
	if err != nil {
		return nil, err
	}
	l := &serialListener{
		path:   path,
		addr:   namedAddr{network: string(KindSerial), name: path},
		closed: make(chan struct{}),
		free:   make(chan struct{}, 1),
		opened: f,
	}
	l.free <- struct{}{}
	return l, nil
}

func dialSerial(path string) (net.Conn, error) {
	f, err := openSerial(path)
	if err != nil {
		return nil, err
	}
	a := namedAddr{network: string(KindSerial), name: path}
	return newFileConn(f, a, a), nil
}

func (l *serialListener) Accept() (net.Conn, error) {
	select {
	case <-l.closed:
		return nil, l.closedErr()
	default:
	}
	select {
	case <-l.closed:
		return nil, l.closedErr()
	case <-l.free:
	}
	f, err := l.open()
	if err != nil {
		l.free <- struct{}{}
		return nil, &net.OpError{Op: "accept", Net: l.addr.Network(), Addr: l.addr, Err: err}
	}
	select {
	case <-l.closed:
		// Closed while the device was being reopened.
		_ = f.Close()
		l.free <- struct{}{}
		return nil, l.closedErr()
	default:
	}
	return &watchedConn{Conn: newFileConn(f, l.addr, l.addr), onClose: l.release}, nil
}

// open returns the device opened by listenSerial, or reopens it after a
// pause when the previous connection read nothing.
func (l *serialListener) open() (*os.File, error) {
	l.mu.Lock()
	f, wait := l.opened, l.backoff
	l.opened = nil
	l.mu.Unlock()
	if f != nil {
		return f, nil
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-l.closed:
			return nil, net.ErrClosed
		case <-t.C:
		}
	}
	return openSerial(l.path)
}

func (l *serialListener) release(readAny bool) {
	l.mu.Lock()
	switch {
	case readAny:
		l.backoff = 0
	case l.backoff == 0:
		l.backoff = reopenBackoffMin
	default:
		l.backoff = min(2*l.backoff, reopenBackoffMax)
	}
	l.mu.Unlock()
	l.free <- struct{}{}
}

// Close stops Accept; a connection already handed out stays open.
func (l *serialListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	l.mu.Lock()
	f := l.opened
	l.opened = nil
	l.mu.Unlock()
	if f != nil {
		return f.Close()
	}
	return nil
}

func (l *serialListener) Addr() net.Addr { return l.addr }

func (l *serialListener) closedErr() error {
	return &net.OpError{Op: "accept", Net: l.addr.Network(), Addr: l.addr, Err: net.ErrClosed}
}
