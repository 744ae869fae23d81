package transport

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// stdioConn is the agent's end of the stdio transport. When stdin and stdout
// are pipes or sockets, as when the controller starts the agent, it serves
// non-blocking duplicates of them through Go's poller, so that closing the
// conn interrupts a pending Read (gRPC's Stop does not wait for the peer) and
// deadlines work. A terminal is used as it is. Nothing else may use stdin or
// stdout meanwhile: they share the non-blocking flag with the duplicates.
func stdioConn() (net.Conn, error) {
	r, err := pollable(os.Stdin)
	if err != nil {
		return nil, err
	}
	w, err := pollable(os.Stdout)
	if err != nil {
		if r != os.Stdin {
			_ = r.Close()
		}
		return nil, err
	}
	return PipeConn(r, w, "stdio"), nil
}

// pollable returns a non-blocking duplicate of f served by Go's poller when f
// is a pipe or a socket, and f itself otherwise.
func pollable(f *os.File) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	if fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	dup := -1
	var dupErr error
	if err := rc.Control(func(fd uintptr) {
		dup, dupErr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	if dupErr != nil {
		return nil, fmt.Errorf("duplicate %s: %w", f.Name(), dupErr)
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		_ = unix.Close(dup)
		return nil, fmt.Errorf("%s: set non-blocking: %w", f.Name(), err)
	}
	// NewFile sees the non-blocking flag and registers the descriptor with
	// the poller.
	return os.NewFile(uintptr(dup), f.Name()), nil
}
