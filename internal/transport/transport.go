// Package transport gives the agent a net.Listener and the controller a net.Conn over stdio, TCP, unix sockets, serial or virtio-serial devices, and vsock.
package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Kind is the channel an address names.
type Kind string

// The channels the agent and the controller can speak over.
const (
	KindStdio  Kind = "stdio"
	KindTCP    Kind = "tcp"
	KindSerial Kind = "serial"
	KindUnix   Kind = "unix"
	KindVsock  Kind = "vsock"
)

// AddrForms lists the address forms Parse accepts, for flag help and errors.
const AddrForms = "stdio, tcp:HOST:PORT (tcp::PORT is loopback), serial:/dev/PATH, unix:PATH, vsock:PORT (listen), vsock:CID:PORT (dial)"

// VsockAnyCID is the vsock context ID of an address that names only a port:
// a listener on it accepts connections addressed to any of this machine's
// CIDs, and it cannot be dialled.
const VsockAnyCID uint32 = 0xFFFFFFFF

// Addr is a parsed transport address, as given to the agent's --listen flag
// and used by the controller to reach an agent.
type Addr struct {
	Kind Kind
	// Host is the TCP host; empty means the loopback address 127.0.0.1, so
	// that an agent never listens on all interfaces by accident.
	Host string
	// Port is the TCP or vsock port. 0 asks for any free port when listening.
	Port uint32
	// Path is the serial device or the unix socket path.
	Path string
	// CID is the vsock context ID: the peer's when dialling, the local one
	// when listening; VsockAnyCID when the address gives only a port.
	CID uint32
}

// String formats a the way Parse reads it.
func (a Addr) String() string {
	switch a.Kind {
	case KindTCP:
		return "tcp:" + net.JoinHostPort(a.Host, strconv.FormatUint(uint64(a.Port), 10))
	case KindSerial, KindUnix:
		return string(a.Kind) + ":" + a.Path
	case KindVsock:
		if a.CID == VsockAnyCID {
			return fmt.Sprintf("vsock:%d", a.Port)
		}
		return fmt.Sprintf("vsock:%d:%d", a.CID, a.Port)
	default:
		return string(a.Kind)
	}
}

// Parse reads a transport address in one of the forms listed in AddrForms.
func Parse(s string) (Addr, error) {
	a, err := parse(s)
	if err != nil {
		return Addr{}, fmt.Errorf("transport address %q: %w; want one of %s", s, err, AddrForms)
	}
	return a, nil
}

func parse(s string) (Addr, error) {
	if s == string(KindStdio) {
		return Addr{Kind: KindStdio}, nil
	}
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Addr{}, errors.New("no transport kind before ':'")
	}
	switch Kind(kind) {
	case KindTCP:
		host, port, err := net.SplitHostPort(rest)
		if err != nil {
			return Addr{}, err
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return Addr{}, fmt.Errorf("tcp port %q is not a number from 0 to 65535", port)
		}
		return Addr{Kind: KindTCP, Host: host, Port: uint32(p)}, nil
	case KindSerial:
		if !strings.HasPrefix(rest, "/") {
			return Addr{}, fmt.Errorf("serial device %q is not an absolute path", rest)
		}
		return Addr{Kind: KindSerial, Path: rest}, nil
	case KindUnix:
		if rest == "" {
			return Addr{}, errors.New("unix socket path is empty")
		}
		return Addr{Kind: KindUnix, Path: rest}, nil
	case KindVsock:
		return parseVsock(rest)
	case KindStdio:
		return Addr{}, errors.New("stdio takes nothing after it")
	default:
		return Addr{}, fmt.Errorf("unknown transport kind %q", kind)
	}
}

func parseVsock(rest string) (Addr, error) {
	fields := strings.Split(rest, ":")
	if len(fields) > 2 {
		return Addr{}, errors.New("vsock takes a port, or a CID and a port")
	}
	port, err := strconv.ParseUint(fields[len(fields)-1], 10, 32)
	if err != nil {
		return Addr{}, fmt.Errorf("vsock port %q is not a 32-bit unsigned number", fields[len(fields)-1])
	}
	a := Addr{Kind: KindVsock, Port: uint32(port), CID: VsockAnyCID}
	if len(fields) == 2 {
		cid, err := strconv.ParseUint(fields[0], 10, 32)
		if err != nil {
			return Addr{}, fmt.Errorf("vsock CID %q is not a 32-bit unsigned number", fields[0])
		}
		a.CID = uint32(cid)
	}
	return a, nil
}

// loopback is where a TCP address with an empty host listens and dials.
const loopback = "127.0.0.1"

func (a Addr) tcpHostPort() string {
	host := a.Host
	if host == "" {
		host = loopback
	}
	return net.JoinHostPort(host, strconv.FormatUint(uint64(a.Port), 10))
}

// Listen opens the agent's side of a: stdio yields its one connection over
// the process's stdin and stdout and then ends (see SingleConnListener);
// serial yields one connection at a time over the device, reopening it after
// each one closes; tcp, unix and vsock accept as their sockets do.
func Listen(ctx context.Context, a Addr) (net.Listener, error) {
	switch a.Kind {
	case KindStdio:
		c, err := stdioConn()
		if err != nil {
			return nil, fmt.Errorf("listen on stdio: %w", err)
		}
		return SingleConnListener(c), nil
	case KindTCP:
		var lc net.ListenConfig
		return lc.Listen(ctx, "tcp", a.tcpHostPort())
	case KindUnix:
		var lc net.ListenConfig
		return lc.Listen(ctx, "unix", a.Path)
	case KindSerial:
		return listenSerial(a.Path)
	case KindVsock:
		return listenVsock(a.CID, a.Port)
	default:
		return nil, fmt.Errorf("listen on transport kind %q: want one of %s", a.Kind, AddrForms)
	}
}

// Dial opens the controller's side of a. stdio cannot be dialled: the
// controller starts the agent itself and wraps the child's pipes with
// PipeConn. A serial path is a host-side character device or pty (QEMU's
// -chardev pty); QEMU's -chardev socket is dialled as unix:PATH.
func Dial(ctx context.Context, a Addr) (net.Conn, error) {
	switch a.Kind {
	case KindTCP:
		var d net.Dialer
		return d.DialContext(ctx, "tcp", a.tcpHostPort())
	case KindUnix:
		var d net.Dialer
		return d.DialContext(ctx, "unix", a.Path)
	case KindSerial:
		return dialSerial(a.Path)
	case KindVsock:
		if a.CID == VsockAnyCID {
			return nil, fmt.Errorf("dial %s: a vsock dial needs the peer's CID: vsock:CID:PORT (a QEMU guest's guest-cid, 2 for the host)", a)
		}
		return dialAbandoning(ctx, func() (net.Conn, error) { return dialVsock(a.CID, a.Port) })
	case KindStdio:
		return nil, errors.New("dial stdio: stdio is not dialled; start the agent with --listen stdio and wrap its stdout and stdin with transport.PipeConn")
	default:
		return nil, fmt.Errorf("dial transport kind %q: want one of %s", a.Kind, AddrForms)
	}
}

// dialAbandoning runs a dial that cannot take a context and stops waiting for
// it when ctx ends; a connection that arrives after that is closed.
func dialAbandoning(ctx context.Context, dial func() (net.Conn, error)) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		c, err := dial()
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		return r.conn, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.err == nil {
				_ = r.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
