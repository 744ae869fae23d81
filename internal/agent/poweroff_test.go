package agent

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckPowerOff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		goos    string
		euid    int
		virtual bool
		want    string
	}{
		{"a macOS guest's LaunchDaemon", "darwin", 0, true, ""},
		{"a Mac", "darwin", 0, false, "not a virtual machine (kern.hv_vmm_present=0)"},
		{"not root", "darwin", 501, true, "needs root and the agent runs as uid 501"},
		{"a Linux VM", "linux", 0, true, "this is linux: only a macOS guest's agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			how := "kern.hv_vmm_present=1"
			if !tc.virtual {
				how = "kern.hv_vmm_present=0"
			}
			err := CheckPowerOff(tc.goos, tc.euid, tc.virtual, how)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestPowerOffRunsTheFixedCommand(t *testing.T) {
	var ran [][]string
	run := func(_ context.Context, argv []string) error {
		ran = append(ran, argv)
		return nil
	}
	require.NoError(t, PowerOff(run)(context.Background()))
	assert.Equal(t, [][]string{{"/sbin/shutdown", "-h", "now"}}, ran)

	err := PowerOff(func(context.Context, []string) error { return errors.New("exit status 1") })(context.Background())
	assert.EqualError(t, err, "power off with /sbin/shutdown -h now: exit status 1")
}

// serveAgent runs Serve on a unix socket, with after recording its calls.
func serveAgent(t *testing.T, ctx context.Context, afterErr error) (addr string, calls *atomic.Int32, served <-chan error) {
	t.Helper()
	addr = filepath.Join(t.TempDir(), "agent.sock")
	lis, err := net.Listen("unix", addr)
	require.NoError(t, err)
	calls = &atomic.Int32{}
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, Policy{ScratchDir: t.TempDir()}, lis, func(context.Context) error {
			calls.Add(1)
			return afterErr
		})
	}()
	return addr, calls, done
}

func dialAgent(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", addr)
	require.NoError(t, err)
	return c
}

func waitServed(t *testing.T, served <-chan error) error {
	t.Helper()
	select {
	case err := <-served:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
		return nil
	}
}

func TestServePowersOffAfterAnsweringShutdown(t *testing.T) {
	addr, calls, served := serveAgent(t, context.Background(), errors.New("shutdown: not permitted"))
	c, err := NewClient(DialOnce(dialAgent(t, addr)))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Info(ctx(t))
	require.NoError(t, err)
	assert.Zero(t, calls.Load(), "nothing before a Shutdown")

	require.NoError(t, c.Shutdown(ctx(t)), "the answer comes before the machine goes down")
	assert.EqualError(t, waitServed(t, served), "shutdown: not permitted", "Serve returns what powering off said")
	assert.Equal(t, int32(1), calls.Load())
}

func TestServeEndedByItsContextDoesNotPowerOff(t *testing.T) {
	cctx, cancel := context.WithCancel(context.Background())
	addr, calls, served := serveAgent(t, cctx, nil)
	c, err := NewClient(DialOnce(dialAgent(t, addr)))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Info(ctx(t))
	require.NoError(t, err)
	cancel()
	assert.NoError(t, waitServed(t, served))
	assert.Zero(t, calls.Load(), "a signal stops the agent, never the machine")
}

func TestShutdownOver(t *testing.T) {
	addr, calls, served := serveAgent(t, context.Background(), nil)
	require.NoError(t, ShutdownOver(ctx(t), dialAgent(t, addr)))
	assert.NoError(t, waitServed(t, served))
	assert.Equal(t, int32(1), calls.Load())

	// Nobody answering is an error, not a wait.
	a, b := net.Pipe()
	require.NoError(t, b.Close())
	assert.Error(t, ShutdownOver(ctx(t), a))
}
