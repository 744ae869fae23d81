package transport

// AF_VSOCK on darwin exists inside a Virtualization.framework guest.
// golang.org/x/sys/unix has SockaddrVM on darwin and makes socket, bind,
// listen, accept and connect through libSystem, the only supported way into
// the darwin kernel, so this needs no cgo. Package net cannot wrap an
// AF_VSOCK descriptor, so connections are os.Files served by the poller.

import (
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

func listenVsock(cid, port uint32) (net.Listener, error) {
	fd, err := vsockSocket(true)
	if err != nil {
		return nil, fmt.Errorf("vsock listen on port %d: %w", port, err)
	}
	if port == 0 {
		port = unix.VMADDR_PORT_ANY
	}
	if err := unix.Bind(fd, &unix.SockaddrVM{CID: cid, Port: port}); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("vsock listen on port %d: %w", port, os.NewSyscallError("bind", err))
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("vsock listen on port %d: %w", port, os.NewSyscallError("listen", err))
	}
	local, err := vsockName(unix.Getsockname(fd))
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("vsock listen on port %d: %w", port, err)
	}
	f := os.NewFile(uintptr(fd), "vsock-listener")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &vsockListener{f: f, rc: rc, addr: local}, nil
}

// dialVsock connects with a blocking connect and then hands the socket to
// the poller; Dial's caller bounds the wait.
func dialVsock(cid, port uint32) (net.Conn, error) {
	fd, err := vsockSocket(false)
	if err != nil {
		return nil, fmt.Errorf("vsock dial %d:%d: %w", cid, port, err)
	}
	if err := unix.Connect(fd, &unix.SockaddrVM{CID: cid, Port: port}); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("vsock dial %d:%d: %w", cid, port, os.NewSyscallError("connect", err))
	}
	local, err := vsockName(unix.Getsockname(fd))
	if err == nil {
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("vsock dial %d:%d: %w", cid, port, err)
	}
	remote := namedAddr{network: string(KindVsock), name: fmt.Sprintf("%d:%d", cid, port)}
	return newFileConn(os.NewFile(uintptr(fd), "vsock"), local, remote), nil
}

// vsockSocket makes a close-on-exec AF_VSOCK stream socket; darwin has no
// SOCK_CLOEXEC, so ForkLock keeps a concurrent fork from inheriting it.
func vsockSocket(nonblocking bool) (int, error) {
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	if err := unix.SetNonblock(fd, nonblocking); err != nil {
		_ = unix.Close(fd)
		return -1, os.NewSyscallError("fcntl", err)
	}
	return fd, nil
}

func vsockName(sa unix.Sockaddr, err error) (net.Addr, error) {
	if err != nil {
		return nil, err
	}
	vm, ok := sa.(*unix.SockaddrVM)
	if !ok {
		return nil, fmt.Errorf("socket address %T is not AF_VSOCK", sa)
	}
	return namedAddr{network: string(KindVsock), name: fmt.Sprintf("%d:%d", vm.CID, vm.Port)}, nil
}

type vsockListener struct {
	f      *os.File
	rc     syscall.RawConn
	addr   net.Addr
	closed atomic.Bool
}

func (l *vsockListener) Accept() (net.Conn, error) {
	var (
		nfd       int
		sa        unix.Sockaddr
		acceptErr error
	)
	err := l.rc.Read(func(fd uintptr) bool {
		syscall.ForkLock.RLock()
		nfd, sa, acceptErr = unix.Accept(int(fd))
		if acceptErr == nil {
			unix.CloseOnExec(nfd)
		}
		syscall.ForkLock.RUnlock()
		// false: wait until the socket is readable and try again.
		return acceptErr != unix.EAGAIN && acceptErr != unix.ECONNABORTED && acceptErr != unix.EINTR
	})
	if l.closed.Load() {
		if err == nil && acceptErr == nil {
			_ = unix.Close(nfd)
		}
		return nil, &net.OpError{Op: "accept", Net: l.addr.Network(), Addr: l.addr, Err: net.ErrClosed}
	}
	if err == nil {
		err = acceptErr
	}
	if err != nil {
		return nil, &net.OpError{Op: "accept", Net: l.addr.Network(), Addr: l.addr, Err: os.NewSyscallError("accept", err)}
	}
	remote, err := vsockName(sa, nil)
	if err == nil {
		// Set, not assumed: accept(2) on darwin copies the listener's
		// O_NONBLOCK, but NewFile must see it to use the poller.
		err = unix.SetNonblock(nfd, true)
	}
	if err != nil {
		_ = unix.Close(nfd)
		return nil, &net.OpError{Op: "accept", Net: l.addr.Network(), Addr: l.addr, Err: err}
	}
	return newFileConn(os.NewFile(uintptr(nfd), "vsock"), l.addr, remote), nil
}

func (l *vsockListener) Close() error {
	l.closed.Store(true)
	return l.f.Close()
}

func (l *vsockListener) Addr() net.Addr { return l.addr }
