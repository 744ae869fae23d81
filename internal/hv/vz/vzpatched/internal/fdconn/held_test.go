package fdconn

import (
	"io"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeConnection is the framework's VZVirtioSocketConnection as far as its
// descriptor goes: reference counted, and freeing it closes the
// descriptor, as the framework does.
type fakeConnection struct {
	fd int

	mu       sync.Mutex
	refs     int
	releases int
	freed    bool
}

func (f *fakeConnection) retain() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.freed {
		panic("retain of a freed connection")
	}
	f.refs++
}

func (f *fakeConnection) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.freed {
		panic("release of a freed connection")
	}
	f.refs--
	if f.refs == 0 {
		f.freed = true
		_ = syscall.Close(f.fd)
	}
}

// heldRelease is the hold the connection under test takes: its release
// counted.
func (f *fakeConnection) heldRelease() {
	f.mu.Lock()
	f.releases++
	f.mu.Unlock()
	f.release()
}

func (f *fakeConnection) state() (releases int, freed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.releases, f.freed
}

// fakeConnect is the framework answering connectToPort: it makes the
// connection object (one reference, its own), calls the completion
// handler, and drops its reference once the handler returns. handler
// gets the object and retains it or not.
func fakeConnect(fd int, handler func(*fakeConnection)) *fakeConnection {
	obj := &fakeConnection{fd: fd, refs: 1}
	handler(obj)
	obj.release()
	return obj
}

// pingPong sends a message each way between conn and the guest's end.
func pingPong(t *testing.T, conn interface {
	io.ReadWriter
	SetDeadline(time.Time) error
}, guest int) {
	t.Helper()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatalf("write: %v", err)
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
}

// The connection object outlives the completion handler: the framework
// drops its own reference when the handler returns, and the hold keeps it
// (and its descriptor) until Close, which releases it exactly once.
func TestFromHeldReleasesOnceOnClose(t *testing.T) {
	fd, guest := socketPair(t)
	var conn io.ReadWriteCloser
	var held interface {
		io.ReadWriteCloser
		SetDeadline(time.Time) error
	}
	obj := fakeConnect(fd, func(o *fakeConnection) {
		o.retain()
		c, err := FromHeld(o.fd, o.heldRelease)
		if err != nil {
			t.Fatal(err)
		}
		conn, held = c, c
	})
	if n, freed := obj.state(); n != 0 || freed {
		t.Fatalf("after the handler returned: %d releases, freed %v; want the object held", n, freed)
	}
	if !isOpen(fd) {
		t.Fatal("the framework's descriptor was closed before Close")
	}
	for i := 0; i < 100; i++ {
		pingPong(t, held, guest)
	}
	if n, freed := obj.state(); n != 0 || freed {
		t.Fatalf("after 100 calls: %d releases, freed %v; want none before Close", n, freed)
	}

	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if n, freed := obj.state(); n != 1 || !freed {
		t.Fatalf("after Close: %d releases, freed %v; want one release, and the object freed", n, freed)
	}
	// The guest sees the end once both the duplicate and the framework's
	// descriptor are closed.
	buf := make([]byte, 1)
	if n, err := syscall.Read(guest, buf); n != 0 || err != nil {
		t.Fatalf("the guest read %d bytes, %v after Close; want the end of the stream", n, err)
	}

	_ = conn.Close()
	if n, _ := obj.state(); n != 1 {
		t.Fatalf("a second Close released again: %d releases", n)
	}
}

// Closes from several goroutines at once release once.
func TestFromHeldConcurrentClosesReleaseOnce(t *testing.T) {
	fd, _ := socketPair(t)
	var conn io.Closer
	obj := fakeConnect(fd, func(o *fakeConnection) {
		o.retain()
		c, err := FromHeld(o.fd, o.heldRelease)
		if err != nil {
			t.Fatal(err)
		}
		conn = c
	})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = conn.Close()
		}()
	}
	wg.Wait()
	if n, freed := obj.state(); n != 1 || !freed {
		t.Fatalf("%d releases, freed %v; want one", n, freed)
	}
}

// A descriptor that cannot be duplicated makes no connection, and the
// hold is given back at once: nothing would ever Close it.
func TestFromHeldReleasesWhenNoConnection(t *testing.T) {
	released := 0
	conn, err := FromHeld(-1, func() { released++ })
	if err == nil {
		_ = conn.Close()
		t.Fatal("FromHeld(-1) made a connection")
	}
	if released != 1 {
		t.Fatalf("%d releases; want 1 when no connection is made", released)
	}
}

// What the hold prevents: without it the framework frees the object, and
// closes its descriptor, as soon as the handler returns, while Go's
// duplicate is still in use (in the framework the vsock connection behind
// the socket goes with the object; the fake shows only the descriptor).
func TestWithoutAHoldTheObjectDiesWithTheHandler(t *testing.T) {
	fd, _ := socketPair(t)
	var conn io.Closer
	obj := fakeConnect(fd, func(o *fakeConnection) {
		c, err := FromBorrowed(o.fd)
		if err != nil {
			t.Fatal(err)
		}
		conn = c
	})
	defer conn.Close()
	if _, freed := obj.state(); !freed {
		t.Fatal("the fake framework kept an object nobody retained")
	}
	if isOpen(fd) {
		t.Fatal("the freed object's descriptor is still open")
	}
}
