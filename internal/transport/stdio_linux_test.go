package transport

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// blockingPipe is a pipe as a child process inherits it on stdin: blocking,
// so an os.File over it is not served by the poller.
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC))
	r, w = os.NewFile(uintptr(p[0]), "stdin"), os.NewFile(uintptr(p[1]), "stdin-writer")
	t.Cleanup(func() {
		_ = r.Close()
		_ = w.Close()
	})
	return r, w
}

func TestPollableStdinTakesDeadlines(t *testing.T) {
	r, _ := blockingPipe(t)
	require.ErrorIs(t, r.SetReadDeadline(time.Now()), os.ErrNoDeadline, "a blocking pipe is not pollable")
	assert.NoError(t, PipeConn(r, os.Stdout, "stdio").SetReadDeadline(time.Now()), "PipeConn ignores what it cannot set")

	p, err := pollable(r)
	require.NoError(t, err)
	require.NotSame(t, r, p)
	defer p.Close()
	require.NoError(t, p.SetReadDeadline(time.Now().Add(-time.Second)))
	_, err = p.Read(make([]byte, 1))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
}

func TestPollableStdinCloseInterruptsRead(t *testing.T) {
	r, w := blockingPipe(t)
	p, err := pollable(r)
	require.NoError(t, err)

	read := make(chan error, 1)
	go func() {
		_, err := p.Read(make([]byte, 1))
		read <- err
	}()
	require.NoError(t, p.Close())
	select {
	case err := <-read:
		assert.ErrorIs(t, err, os.ErrClosed)
	case <-time.After(boundedWait):
		t.Fatal("Close did not interrupt a pending Read")
	}

	// The duplicate closed, the inherited descriptor still works.
	_, err = w.Write([]byte("x"))
	require.NoError(t, err)
	got := make([]byte, 1)
	_, err = r.Read(got)
	require.NoError(t, err)
	assert.Equal(t, "x", string(got))
}

func TestPollableLeavesATerminalAlone(t *testing.T) {
	_, slave := openPty(t)
	tty, err := os.OpenFile(slave, os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	defer tty.Close()
	p, err := pollable(tty)
	require.NoError(t, err)
	assert.Same(t, tty, p)
}
