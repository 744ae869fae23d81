package guestinit

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent"
)

func unixListener(t *testing.T, path string) net.Listener {
	t.Helper()
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func dialAgent(t *testing.T, path string) *agent.Client {
	t.Helper()
	c, err := agent.NewClient(func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

type serveResult struct {
	err    error
	failed []error
}

// startServe runs serve in the background.
func startServe(ctx context.Context, t *testing.T, policy agent.Policy, ls ...net.Listener) <-chan serveResult {
	t.Helper()
	done := make(chan serveResult, 1)
	go func() {
		var mu sync.Mutex
		var failed []error
		err := serve(ctx, policy, ls, func(_ net.Listener, err error) {
			mu.Lock()
			failed = append(failed, err)
			mu.Unlock()
		})
		mu.Lock()
		defer mu.Unlock()
		done <- serveResult{err, failed}
	}()
	return done
}

func waitServe(t *testing.T, done <-chan serveResult, within time.Duration) serveResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(within):
		t.Fatalf("serve still running after %s", within)
		return serveResult{}
	}
}

func TestServeOnEveryChannelUntilShutdown(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.sock"), filepath.Join(dir, "b.sock")
	done := startServe(context.Background(), t, agent.Policy{ScratchDir: dir}, unixListener(t, a), unixListener(t, b))

	ctx, cancel := context.WithTimeout(context.Background(), boundedWait)
	defer cancel()
	for _, path := range []string{a, b} {
		info, err := dialAgent(t, path).Info(ctx)
		require.NoError(t, err, "Info over %s", path)
		assert.NotEmpty(t, info.GetAgentVersion())
	}
	require.NoError(t, dialAgent(t, b).Shutdown(ctx), "the Shutdown reply arrives")

	r := waitServe(t, done, boundedWait)
	assert.NoError(t, r.err)
	assert.Empty(t, r.failed)
}

func TestServeStopsWithItsContextDespiteAWaitingHandshake(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := startServe(ctx, t, agent.Policy{ScratchDir: dir}, unixListener(t, path))

	// A peer that connects and says nothing, as a virtio-serial port whose
	// host side is not connected: gRPC waits up to 120 s for its preface.
	silent, err := net.Dial("unix", path)
	require.NoError(t, err)
	defer silent.Close()
	// Let the server accept it and start the handshake.
	time.Sleep(50 * time.Millisecond)
	cancel()

	r := waitServe(t, done, gracefulStopWait-time.Second)
	assert.NoError(t, r.err)
}

// failingListener fails its first Accept for good, as a device that vanished.
type failingListener struct {
	addr   net.Addr
	closed chan struct{}
	once   sync.Once
}

func newFailingListener() *failingListener {
	return &failingListener{addr: &net.UnixAddr{Name: "broken", Net: "unix"}, closed: make(chan struct{})}
}

func (l *failingListener) Accept() (net.Conn, error) { return nil, errors.New("device gone") }
func (l *failingListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}
func (l *failingListener) Addr() net.Addr { return l.addr }

func TestServeGoesOnWhenOneChannelFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.sock")
	done := startServe(context.Background(), t, agent.Policy{ScratchDir: dir}, newFailingListener(), unixListener(t, path))

	ctx, cancel := context.WithTimeout(context.Background(), boundedWait)
	defer cancel()
	c := dialAgent(t, path)
	_, err := c.Info(ctx)
	require.NoError(t, err, "the working channel still serves")
	require.NoError(t, c.Shutdown(ctx))

	r := waitServe(t, done, boundedWait)
	assert.NoError(t, r.err, "a requested shutdown is a clean end")
	require.Len(t, r.failed, 1)
	assert.Contains(t, r.failed[0].Error(), "broken")
	assert.Contains(t, r.failed[0].Error(), "device gone")
}

func TestServeFailsWhenEveryChannelFails(t *testing.T) {
	done := startServe(context.Background(), t, agent.Policy{}, newFailingListener(), newFailingListener())
	r := waitServe(t, done, boundedWait)
	require.ErrorIs(t, r.err, errAllChannelsClosed)
	assert.Contains(t, r.err.Error(), "device gone")
	assert.Len(t, r.failed, 2)
}
