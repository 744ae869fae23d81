package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// ErrHybridVsockRefused is a hybrid vsock connection refused before it
// reached the guest's stream: the host side closed it before answering
// CONNECT, which it does when nothing listens on the port in the guest
// (yet), or when the VM has not set the device up yet (then it closes the
// connection unread, which reads as a reset).
var ErrHybridVsockRefused = errors.New("the guest refused the connection (nothing listens on the port yet)")

// maxHybridReply bounds the handshake's answer, "OK <port>\n".
const maxHybridReply = 32

// DialHybridVsock connects to port in a guest through a hybrid vsock
// socket: the unix socket on which a user-space virtio-vsock device (rust-vmm's
// vhost-device-vsock, Firecracker, cloud-hypervisor) takes host-initiated
// connections. Writing "CONNECT <port>\n" gets "OK <n>\n", after which the
// connection carries the guest's stream, or the connection closed when the
// guest refused (ErrHybridVsockRefused). It is what Virtualization.framework's
// connect(toPort:) gives on a Mac: one call, one stream to a guest port.
//
// The answer is read a byte at a time, so nothing the guest sends right
// after it is taken from the returned connection. ctx bounds the dial and
// the handshake: a guest whose vsock driver has not loaded never answers.
func DialHybridVsock(ctx context.Context, path string, port uint32) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("hybrid vsock %s: %w", path, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	err = hybridHandshake(c, port)
	if !stop() {
		_ = c.Close()
		return nil, fmt.Errorf("hybrid vsock %s port %d: %w", path, port, ctx.Err())
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("hybrid vsock %s port %d: %w", path, port, err)
	}
	return c, nil
}

// hybridHandshake asks c for port and reads the answer.
func hybridHandshake(c io.ReadWriter, port uint32) error {
	if _, err := fmt.Fprintf(c, "CONNECT %d\n", port); err != nil {
		if closedUnread(err) {
			return ErrHybridVsockRefused
		}
		return fmt.Errorf("send CONNECT: %w", err)
	}
	var reply []byte
	b := make([]byte, 1)
	for {
		n, err := c.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			reply = append(reply, b[0])
			if len(reply) > maxHybridReply {
				return fmt.Errorf("answer %q... to CONNECT is not OK <port>", reply)
			}
			continue
		}
		if errors.Is(err, io.EOF) || closedUnread(err) {
			if len(reply) == 0 {
				return ErrHybridVsockRefused
			}
			return fmt.Errorf("connection closed in the answer %q to CONNECT", reply)
		}
		if err != nil {
			return fmt.Errorf("read the answer to CONNECT: %w", err)
		}
	}
	num, ok := strings.CutPrefix(string(reply), "OK ")
	if _, err := strconv.ParseUint(num, 10, 32); !ok || err != nil {
		return fmt.Errorf("answer %q to CONNECT is not OK <port>", reply)
	}
	return nil
}

// closedUnread tells whether err is the peer closing a unix socket with our
// bytes unread (a reset) or before we wrote them (a broken pipe).
func closedUnread(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
