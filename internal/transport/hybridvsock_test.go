package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hybridHost is the host side of a user-space vsock device as
// vhost-device-vsock serves it: it reads "CONNECT <port>\n" and does what
// answer says with the connection.
func hybridHost(t *testing.T, answer func(c net.Conn, request string)) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hvsock-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "v.vsock")
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					return
				}
				answer(c, line)
			}()
		}
	}()
	return path
}

const waitLimit = 10 * time.Second

func TestDialHybridVsock(t *testing.T) {
	requests := make(chan string, 1)
	path := hybridHost(t, func(c net.Conn, request string) {
		requests <- request
		// The answer and the guest's first bytes in one write, as they may
		// come: the first bytes must stay on the connection.
		_, _ = io.WriteString(c, "OK 1024\nPRI * HTTP/2.0")
		buf := make([]byte, 5)
		if _, err := io.ReadFull(c, buf); err == nil {
			_, _ = c.Write(buf)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, err := DialHybridVsock(ctx, path, 1024)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, "CONNECT 1024\n", <-requests)
	got := make([]byte, len("PRI * HTTP/2.0"))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, "PRI * HTTP/2.0", string(got), "what followed OK is the stream's start")
	_, err = c.Write([]byte("hello"))
	require.NoError(t, err)
	echo := make([]byte, 5)
	_, err = io.ReadFull(c, echo)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(echo))
	_, ok := c.(interface{ CloseWrite() error })
	assert.True(t, ok, "the stream can be half-closed, as a proxy needs")
}

// vhost-device-vsock closes a connection unread while the VM has not set
// the device up: a reset, which is a refusal too.
func TestDialHybridVsockClosedUnread(t *testing.T) {
	dir, err := os.MkdirTemp("", "hvsock-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "v.vsock")
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Closed without reading: before the request arrives (the
			// dialler's write fails) or after (its read is reset).
			_ = c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err = DialHybridVsock(ctx, path, 1024)
	assert.ErrorIs(t, err, ErrHybridVsockRefused)
}

func TestDialHybridVsockFails(t *testing.T) {
	tests := []struct {
		name   string
		answer string // then the host closes
		is     error
		says   string
	}{
		{"refused: closed at once", "", ErrHybridVsockRefused, "nothing listens on the port"},
		{"not OK", "FAILED\n", nil, `answer "FAILED" to CONNECT is not OK <port>`},
		{"OK without a port", "OK\n", nil, `answer "OK" to CONNECT is not OK <port>`},
		{"closed mid-answer", "OK 10", nil, `connection closed in the answer "OK 10"`},
		{"an endless answer", "OK 1111111111111111111111111111111111111111", nil, "is not OK <port>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := hybridHost(t, func(c net.Conn, _ string) { _, _ = io.WriteString(c, tt.answer) })
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			c, err := DialHybridVsock(ctx, path, 1024)
			require.Error(t, err)
			assert.Nil(t, c)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.ErrorContains(t, err, tt.says)
			assert.ErrorContains(t, err, path, "the error names the socket")
		})
	}
}

// A guest whose vsock driver has not loaded never answers: the dial ends
// with its context.
func TestDialHybridVsockEndsWithItsContext(t *testing.T) {
	asked := make(chan struct{})
	path := hybridHost(t, func(c net.Conn, _ string) {
		close(asked)
		_, _ = io.Copy(io.Discard, c) // never answers
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := DialHybridVsock(ctx, path, 1024)
		done <- err
	}()
	select {
	case <-asked:
	case <-time.After(waitLimit):
		t.Fatal("CONNECT never arrived")
	}
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(waitLimit):
		t.Fatal("the dial did not end with its context")
	}
}

func TestDialHybridVsockNoSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.vsock")
	_, err := DialHybridVsock(context.Background(), path, 1024)
	require.Error(t, err)
	assert.ErrorContains(t, err, path)
	assert.False(t, errors.Is(err, ErrHybridVsockRefused), "no device is not a refusal by the guest")
}
