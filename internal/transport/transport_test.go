package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundedWait is how long a test waits for something that should happen at
// once; it only bounds a failure.
const boundedWait = 5 * time.Second

func TestParse(t *testing.T) {
	good := []struct {
		in   string
		want Addr
	}{
		{"stdio", Addr{Kind: KindStdio}},
		{"tcp:127.0.0.1:7000", Addr{Kind: KindTCP, Host: "127.0.0.1", Port: 7000}},
		{"tcp::7000", Addr{Kind: KindTCP, Port: 7000}},
		{"tcp:localhost:0", Addr{Kind: KindTCP, Host: "localhost", Port: 0}},
		{"tcp:[::1]:65535", Addr{Kind: KindTCP, Host: "::1", Port: 65535}},
		{"tcp:0.0.0.0:7000", Addr{Kind: KindTCP, Host: "0.0.0.0", Port: 7000}},
		{"serial:/dev/hvc0", Addr{Kind: KindSerial, Path: "/dev/hvc0"}},
		{"serial:/dev/virtio-ports/qoslab.agent", Addr{Kind: KindSerial, Path: "/dev/virtio-ports/qoslab.agent"}},
		{"unix:/run/qoslab/agent.sock", Addr{Kind: KindUnix, Path: "/run/qoslab/agent.sock"}},
		{"unix:agent.sock", Addr{Kind: KindUnix, Path: "agent.sock"}},
		{"vsock:1024", Addr{Kind: KindVsock, CID: VsockAnyCID, Port: 1024}},
		{"vsock:3:1024", Addr{Kind: KindVsock, CID: 3, Port: 1024}},
		{"vsock:2:4294967295", Addr{Kind: KindVsock, CID: 2, Port: 4294967295}},
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			back, err := Parse(got.String())
			require.NoError(t, err, "String() = %q does not parse", got.String())
			assert.Equal(t, got, back, "String() = %q", got.String())
		})
	}

	bad := []struct {
		in     string
		reason string
	}{
		{"", "no transport kind"},
		{"STDIO", "no transport kind"},
		{"stdio:", "stdio takes nothing"},
		{"tcp:7000", "missing port"},
		{"tcp:127.0.0.1:", "tcp port"},
		{"tcp::http", "tcp port \"http\""},
		{"tcp::65536", "tcp port \"65536\""},
		{"tcp:::1:7000", "too many colons"},
		{"serial:", "not an absolute path"},
		{"serial:ttyS1", "not an absolute path"},
		{"unix:", "path is empty"},
		{"vsock:", "vsock port \"\""},
		{"vsock:port", "vsock port \"port\""},
		{"vsock:-1", "vsock port \"-1\""},
		{"vsock:4294967296", "vsock port \"4294967296\""},
		{"vsock:x:1024", "vsock CID \"x\""},
		{"vsock:1:2:3", "a port, or a CID and a port"},
		{"udp:127.0.0.1:53", "unknown transport kind \"udp\""},
		{"/dev/hvc0", "no transport kind"},
	}
	for _, tc := range bad {
		t.Run("bad/"+tc.in, func(t *testing.T) {
			_, err := Parse(tc.in)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.reason)
			assert.ErrorContains(t, err, `"`+tc.in+`"`, "the error names the bad value")
			assert.ErrorContains(t, err, AddrForms, "the error lists the allowed forms")
		})
	}
}

func TestListenTCPEmptyHostIsLoopback(t *testing.T) {
	ctx := context.Background()
	a, err := Parse("tcp::0")
	require.NoError(t, err)
	l, err := Listen(ctx, a)
	require.NoError(t, err)
	defer l.Close()

	la, ok := l.Addr().(*net.TCPAddr)
	require.True(t, ok, "listener address %T", l.Addr())
	assert.Equal(t, "127.0.0.1", la.IP.String(), "an empty host must not listen on all interfaces")

	c, err := Dial(ctx, Addr{Kind: KindTCP, Port: uint32(la.Port)})
	require.NoError(t, err)
	defer c.Close()
	assertEcho(t, l, c)
}

func TestUnixSocketDial(t *testing.T) {
	ctx := context.Background()
	a := Addr{Kind: KindUnix, Path: filepath.Join(t.TempDir(), "agent.sock")}
	l, err := Listen(ctx, a)
	require.NoError(t, err)
	defer l.Close()

	c, err := Dial(ctx, a)
	require.NoError(t, err)
	defer c.Close()
	assertEcho(t, l, c)

	_, err = Dial(ctx, Addr{Kind: KindUnix, Path: filepath.Join(t.TempDir(), "absent.sock")})
	assert.ErrorContains(t, err, "absent.sock")
}

// assertEcho accepts one connection on l, echoes what c sends through it,
// and checks that c gets it back.
func assertEcho(t *testing.T, l net.Listener, c net.Conn) {
	t.Helper()
	served := make(chan error, 1)
	go func() {
		s, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		defer s.Close()
		buf := make([]byte, 5)
		if _, err := io.ReadFull(s, buf); err != nil {
			served <- err
			return
		}
		_, err = s.Write(buf)
		served <- err
	}()
	require.NoError(t, c.SetDeadline(time.Now().Add(boundedWait)))
	_, err := c.Write([]byte("hello"))
	require.NoError(t, err)
	got := make([]byte, 5)
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	assert.NoError(t, <-served)
}

func TestDialRefusesWhatCannotBeDialled(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		addr Addr
		want string
	}{
		{Addr{Kind: KindStdio}, "PipeConn"},
		{Addr{Kind: KindVsock, CID: VsockAnyCID, Port: 1024}, "vsock:CID:PORT"},
		{Addr{Kind: "udp"}, AddrForms},
	} {
		t.Run(tc.addr.String(), func(t *testing.T) {
			c, err := Dial(ctx, tc.addr)
			assert.Nil(t, c)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestDialAbandoningClosesALateConnection(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	late, peer := net.Pipe()
	defer peer.Close()

	result := make(chan error, 1)
	go func() {
		c, err := dialAbandoning(ctx, func() (net.Conn, error) {
			<-release
			return late, nil
		})
		if c != nil {
			err = errors.New("got a connection after cancelling")
		}
		result <- err
	}()
	cancel()
	select {
	case err := <-result:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(boundedWait):
		t.Fatal("dialAbandoning did not return when its context was cancelled")
	}

	// The deadline is set before the late connection arrives: net.Pipe
	// refuses SetReadDeadline once the other end is closed.
	require.NoError(t, peer.SetReadDeadline(time.Now().Add(boundedWait)))
	close(release)
	_, err := peer.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the connection that arrived late is closed")
}

func TestDialAbandoningPassesTheDialResult(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c2.Close()
	got, err := dialAbandoning(context.Background(), func() (net.Conn, error) { return c1, nil })
	require.NoError(t, err)
	assert.Same(t, c1, got)

	wantErr := errors.New("connection refused")
	// A dialer that fails with a typed nil, as vsock.Dial's *Conn does.
	got, err = dialAbandoning(context.Background(), func() (net.Conn, error) { return (*net.TCPConn)(nil), wantErr })
	assert.ErrorIs(t, err, wantErr)
	assert.True(t, got == nil, "a failed dial yields a nil net.Conn, got %#v", got)
}
