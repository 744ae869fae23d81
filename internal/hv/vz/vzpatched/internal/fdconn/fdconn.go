// Package fdconn makes a net.Conn of a socket descriptor that belongs to
// someone else, who will close it: Virtualization.framework's
// VZVirtioSocketConnection owns its fileDescriptor and closes it when it
// is destroyed, so Go may use the socket only through a duplicate of its
// own, and must never close the original.
package fdconn

import (
	"net"
	"os"
	"sync"
	"syscall"
)

// FromBorrowed returns a connection over a duplicate of fd. fd itself is
// left open, its owner's to close; closing the connection closes only the
// duplicate. The duplicate is close-on-exec, made under ForkLock so that
// no child started meanwhile inherits it.
func FromBorrowed(fd int) (net.Conn, error) {
	syscall.ForkLock.RLock()
	own, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(own)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, os.NewSyscallError("dup", err)
	}
	f := os.NewFile(uintptr(own), "")
	// net.FileConn duplicates f's descriptor again for the connection, so
	// ours is closed here, and only ours.
	defer f.Close()
	return net.FileConn(f)
}

// FromHeld is FromBorrowed for a descriptor whose owner must also stay
// alive while the duplicate is used: the caller has taken a hold on the
// owner (a retain of the VZVirtioSocketConnection), and release gives it
// back. The returned connection's Close closes the duplicate and then
// calls release, once, however often Close is called; nothing else calls
// it, so the owner outlives every use of the connection. When no
// connection can be made, release is called before FromHeld returns.
//
// The framework's completion handler hands the VZVirtioSocketConnection
// over without a retain of vz's: left alone, the framework frees it once
// the handler returns, and freeing it closes its descriptor and ends the
// vsock connection behind the duplicate too. apple/containerization keeps
// the connection object for as long as its duplicate is used, and tart
// holds the object and closes through it.
func FromHeld(fd int, release func()) (net.Conn, error) {
	conn, err := FromBorrowed(fd)
	if err != nil {
		release()
		return nil, err
	}
	return &heldConn{Conn: conn, release: release}, nil
}

// heldConn is a connection whose Close also gives back the hold on its
// descriptor's owner.
type heldConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close closes the duplicate first, so that nothing reads or writes the
// socket once its owner may close it, then releases the owner once.
func (c *heldConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
