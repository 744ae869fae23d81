package childproc

import (
	"bufio"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/qos"
)

// exitedWithin waits for p's Exited, failing the test after d.
func exitedWithin(t *testing.T, p *Piped, d time.Duration) {
	t.Helper()
	select {
	case <-p.Exited():
	case <-time.After(d):
		t.Fatalf("pid %d: not reaped after %s", p.Pid(), d)
	}
}

// gone reports whether no process pid exists, not even a zombie: it was
// reaped.
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func TestStartPipedSpeaksOverItsPipes(t *testing.T) {
	p, err := StartPiped(exec.Command("cat"), qos.Default)
	require.NoError(t, err)
	t.Cleanup(p.Kill)
	_, err = p.Stdin.Write([]byte("ready\n"))
	require.NoError(t, err)
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "ready\n", line, "what went in on stdin came back on stdout")
	select {
	case <-p.Exited():
		t.Fatal("exited with its stdin open")
	default:
	}
	require.NoError(t, p.Stdin.Close())
	exitedWithin(t, p, 10*time.Second)
	assert.NoError(t, p.Err(), "cat ends well once its stdin closes")
	assert.True(t, gone(p.Pid()), "reaped")
}

func TestStartPipedReapsAndTellsHowItEnded(t *testing.T) {
	p, err := StartPiped(exec.Command("sh", "-c", "exit 3"), qos.Unspecified)
	require.NoError(t, err)
	exitedWithin(t, p, 10*time.Second)
	var exit *exec.ExitError
	require.ErrorAs(t, p.Err(), &exit)
	assert.Equal(t, 3, exit.ExitCode())
	assert.True(t, gone(p.Pid()), "reaped without anyone calling Wait")
	assert.NotPanics(t, p.Kill, "Kill after the child is gone")
}

func TestPipedKillReaps(t *testing.T) {
	p, err := StartPiped(exec.Command("sleep", "60"), qos.Unspecified)
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		p.Kill()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Kill did not return")
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Kill returned before the child was reaped")
	}
	var exit *exec.ExitError
	require.ErrorAs(t, p.Err(), &exit)
	assert.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())
	assert.True(t, gone(p.Pid()), "reaped")
}

// The child leads a process group of its own, so a terminal's Ctrl-C (sent
// to the foreground group) does not reach it.
func TestStartPipedGivesTheChildItsOwnGroup(t *testing.T) {
	p, err := StartPiped(exec.Command("sleep", "60"), qos.Unspecified)
	require.NoError(t, err)
	t.Cleanup(p.Kill)
	pgid, err := syscall.Getpgid(p.Pid())
	require.NoError(t, err)
	assert.Equal(t, p.Pid(), pgid)
	assert.NotEqual(t, syscall.Getpgrp(), pgid)
}

func TestStartPipedReportsAFailedStart(t *testing.T) {
	_, err := StartPiped(exec.Command("/nonexistent/qoslab-no-such-helper"), qos.Default)
	assert.ErrorContains(t, err, "/nonexistent/qoslab-no-such-helper")
}
