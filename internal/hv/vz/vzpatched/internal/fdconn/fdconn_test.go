package fdconn

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// isOpen reports whether fd is an open descriptor.
func isOpen(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil
}

// socketPair is a connected pair of unix stream sockets, as the framework
// hands a connection's end out; the test closes what it still has at the
// end.
func socketPair(t *testing.T) (framework, guest int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, fd := range fds {
			if isOpen(fd) {
				_ = syscall.Close(fd)
			}
		}
	})
	return fds[0], fds[1]
}

// The descriptor stays the framework's: open after the connection is made
// and after it is closed, so that the framework's own close of it, when
// its VZVirtioSocketConnection is destroyed, closes that socket and
// nothing else.
func TestFromBorrowedLeavesTheDescriptorToItsOwner(t *testing.T) {
	fd, guest := socketPair(t)
	conn, err := FromBorrowed(fd)
	if err != nil {
		t.Fatal(err)
	}
	if !isOpen(fd) {
		t.Fatalf("descriptor %d was closed: it is the framework's, which closes it again", fd)
	}

	// The connection is the socket: both ways.
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if n, err := syscall.Read(guest, buf); err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("the guest read %q, %v", buf[:n], err)
	}
	if _, err := syscall.Write(guest, []byte("pong")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("the connection read %q, %v", buf, err)
	}

	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if !isOpen(fd) {
		t.Fatalf("closing the connection closed descriptor %d, the framework's", fd)
	}
}

// The hazard of closing a descriptor twice: between Go's close and the
// framework's, another goroutine's open may get the number, and the
// framework's close then closes that file. With the descriptor left to
// the framework, the number cannot be handed out again before the
// framework closes it, and a file opened meanwhile survives that close.
func TestFromBorrowedFrameworksCloseHitsNothingElse(t *testing.T) {
	fd, _ := socketPair(t)
	conn, err := FromBorrowed(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Another goroutine opens a file while the connection is in use.
	f, err := os.Create(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if int(f.Fd()) == fd {
		t.Fatalf("the file got descriptor %d, still the framework's", fd)
	}
	// The VZVirtioSocketConnection is destroyed: the framework closes its
	// descriptor, once, and that close succeeds.
	if err := syscall.Close(fd); err != nil {
		t.Fatalf("the framework's close of %d: %v (Go had closed it already)", fd, err)
	}
	if _, err := f.Write([]byte("still mine")); err != nil {
		t.Fatalf("the other file: %v", err)
	}
	if _, err := conn.Write([]byte("x")); err != nil {
		t.Fatalf("the connection after the framework's close: %v", err)
	}
}
