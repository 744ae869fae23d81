// Package fdconn makes a net.Conn of a socket descriptor that belongs to
// someone else, who will close it: Virtualization.framework's
// VZVirtioSocketConnection owns its fileDescriptor and closes it when it
// is destroyed, so Go may use the socket only through a duplicate of its
// own, and must never close the original.
package fdconn

import (
	"net"
	"os"
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
