package transport

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal pair and returns its master and the path
// of its slave, which stands in for /dev/hvc0 or /dev/ttyS1.
func openPty(t *testing.T) (*os.File, string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = master.Close() })
	rc, err := master.SyscallConn()
	require.NoError(t, err)
	var n int
	var ioctlErr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		// unlockpt(3) and ptsname(3).
		if ioctlErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioctlErr != nil {
			return
		}
		n, ioctlErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
	}))
	require.NoError(t, ioctlErr)
	return master, fmt.Sprintf("/dev/pts/%d", n)
}

// ttyModes reads the terminal modes of the tty at path through a descriptor
// of its own.
func ttyModes(t *testing.T, path string) *unix.Termios {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	require.NoError(t, err)
	return tio
}

func setCooked(t *testing.T, path string) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	require.NoError(t, err)
	tio.Lflag |= unix.ICANON | unix.ECHO
	tio.Iflag |= unix.ICRNL
	tio.Oflag |= unix.OPOST
	require.NoError(t, unix.IoctlSetTermios(fd, unix.TCSETS, tio))
}

func assertRaw(t *testing.T, tio *unix.Termios) {
	t.Helper()
	assert.Zero(t, tio.Lflag&(unix.ICANON|unix.ECHO|unix.ECHONL|unix.ISIG|unix.IEXTEN), "lflag %#x", tio.Lflag)
	assert.Zero(t, tio.Iflag&(unix.ICRNL|unix.INLCR|unix.IGNCR|unix.IXON|unix.IXOFF|unix.ISTRIP), "iflag %#x", tio.Iflag)
	assert.Zero(t, tio.Oflag&unix.OPOST, "oflag %#x", tio.Oflag)
	assert.Equal(t, uint32(unix.CS8), tio.Cflag&unix.CSIZE, "8 data bits")
	assert.Zero(t, tio.Cflag&unix.PARENB, "no parity")
	assert.Equal(t, uint8(1), tio.Cc[unix.VMIN])
	assert.Equal(t, uint8(0), tio.Cc[unix.VTIME])
}

// allBytes is every byte value: a raw tty must pass each one untouched,
// including CR, ^C, ^S and DEL, which a cooked one would act on.
func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func reversed(b []byte) []byte {
	r := make([]byte, len(b))
	for i, c := range b {
		r[len(b)-1-i] = c
	}
	return r
}

// assertBytesPassBothWays sends every byte value from the master to conn
// and back reversed. Were echo on, the master would read its own bytes first.
func assertBytesPassBothWays(t *testing.T, master *os.File, conn net.Conn) {
	t.Helper()
	require.NoError(t, master.SetDeadline(time.Now().Add(boundedWait)))
	require.NoError(t, conn.SetDeadline(time.Now().Add(boundedWait)))

	_, err := master.Write(allBytes())
	require.NoError(t, err)
	got := make([]byte, 256)
	_, err = io.ReadFull(conn, got)
	require.NoError(t, err)
	assert.Equal(t, allBytes(), got, "master to device")

	_, err = conn.Write(reversed(allBytes()))
	require.NoError(t, err)
	_, err = io.ReadFull(master, got)
	require.NoError(t, err)
	assert.Equal(t, reversed(allBytes()), got, "device to master")
}

func TestSerialListenerRawTTY(t *testing.T) {
	master, slave := openPty(t)
	before := ttyModes(t, slave)
	require.NotZero(t, before.Lflag&unix.ICANON, "a new pty starts cooked")
	require.NotZero(t, before.Lflag&unix.ECHO, "a new pty starts with echo")

	l, err := Listen(context.Background(), Addr{Kind: KindSerial, Path: slave})
	require.NoError(t, err)
	defer l.Close()
	assert.Equal(t, slave, l.Addr().String())
	assertRaw(t, ttyModes(t, slave))

	conn, err := l.Accept()
	require.NoError(t, err)
	assertBytesPassBothWays(t, master, conn)
	require.NoError(t, conn.Close())

	// The peer of a virtio-serial port comes and goes: after a connection
	// closes, the listener opens the device again, in raw mode again.
	setCooked(t, slave)
	require.NotZero(t, ttyModes(t, slave).Lflag&unix.ICANON)
	conn, err = l.Accept()
	require.NoError(t, err)
	defer conn.Close()
	assertRaw(t, ttyModes(t, slave))
	assertBytesPassBothWays(t, master, conn)
}

func TestSerialListenerOneConnectionAtATime(t *testing.T) {
	_, slave := openPty(t)
	l, err := Listen(context.Background(), Addr{Kind: KindSerial, Path: slave})
	require.NoError(t, err)
	defer l.Close()

	first, err := l.Accept()
	require.NoError(t, err)
	defer first.Close()
	next := acceptResult(l)
	select {
	case err := <-next:
		t.Fatalf("second Accept returned %v while the device is in use", err)
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, l.Close())
	select {
	case err := <-next:
		assert.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(boundedWait):
		t.Fatal("Accept still blocked after Close")
	}
	require.NoError(t, first.SetWriteDeadline(time.Now().Add(boundedWait)))
	_, err = first.Write([]byte("x"))
	assert.NoError(t, err, "closing the listener leaves the accepted connection open")
}

func TestSerialDial(t *testing.T) {
	master, slave := openPty(t)
	conn, err := Dial(context.Background(), Addr{Kind: KindSerial, Path: slave})
	require.NoError(t, err)
	defer conn.Close()
	assertRaw(t, ttyModes(t, slave))
	assertBytesPassBothWays(t, master, conn)
}

func TestSerialDeviceThatIsNotATTY(t *testing.T) {
	// A virtio-serial port (/dev/vport0p1) is a character device but not a
	// tty; /dev/null is one too.
	l, err := Listen(context.Background(), Addr{Kind: KindSerial, Path: "/dev/null"})
	require.NoError(t, err)
	defer l.Close()
	conn, err := l.Accept()
	require.NoError(t, err)
	defer conn.Close()
	n, err := conn.Write([]byte("discarded"))
	assert.NoError(t, err)
	assert.Equal(t, len("discarded"), n)
	_, err = conn.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF)
}

func TestSerialMissingDeviceNamesThePath(t *testing.T) {
	const path = "/dev/qoslab-no-such-port"
	for name, open := range map[string]func() error{
		"listen": func() error { _, err := Listen(context.Background(), Addr{Kind: KindSerial, Path: path}); return err },
		"dial":   func() error { _, err := Dial(context.Background(), Addr{Kind: KindSerial, Path: path}); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := open()
			assert.ErrorIs(t, err, fs.ErrNotExist)
			assert.ErrorContains(t, err, path)
		})
	}
}

func TestSerialReopenBackoff(t *testing.T) {
	l := &serialListener{free: make(chan struct{}, 1)}
	release := func(readAny bool) time.Duration {
		l.release(readAny)
		<-l.free
		return l.backoff
	}
	assert.Equal(t, reopenBackoffMin, release(false), "a connection that read nothing")
	assert.Equal(t, 2*reopenBackoffMin, release(false))
	for range 10 {
		release(false)
	}
	assert.Equal(t, reopenBackoffMax, l.backoff, "capped")
	assert.Zero(t, release(true), "a connection that read something resets it")
}
