package childproc

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/qos"
)

// sleeper is a child that dies when the thread that forked it ends.
func sleeper() *exec.Cmd {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// startOnDyingThread calls Start from a goroutine locked to its thread that
// then ends, which ends the thread: a child forked from that thread would
// get its parent-death signal. It returns the child and the caller's thread
// id. The caller's thread may be the main one, which the runtime parks
// instead of ending; a caller off it is found by trying again.
func startOnDyingThread(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	type res struct {
		tid int
		err error
	}
	for range 3 {
		cmd := sleeper()
		out := make(chan res, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			_, err := Start(cmd, qos.Unspecified)
			out <- res{unix.Gettid(), err}
		}()
		r := <-out
		require.NoError(t, r.err)
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		if r.tid != os.Getpid() {
			return cmd, r.tid
		}
	}
	t.Fatal("no caller off the main thread")
	return nil, 0
}

func TestChildOutlivesTheThreadThatAskedForIt(t *testing.T) {
	cmd, caller := startOnDyingThread(t)
	require.Eventually(t, func() bool {
		_, err := os.Stat("/proc/self/task/" + strconv.Itoa(caller))
		return os.IsNotExist(err)
	}, 10*time.Second, 5*time.Millisecond, "precondition: the caller's thread ended")
	// The parent-death signal would have arrived by now.
	time.Sleep(100 * time.Millisecond)
	assert.NotEqual(t, "Z", childState(t, cmd.Process.Pid), "the child lives")
}

func TestChildStartsAtTheClassAsked(t *testing.T) {
	cmd := sleeper()
	// The caller runs at background; the child must not inherit it.
	type res struct {
		a   qos.Applied
		err error
	}
	out := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: background ends with the thread
		qos.ApplySelf(qos.Background)
		a, err := Start(cmd, qos.Utility)
		out <- res{a, err}
	}()
	r := <-out
	require.NoError(t, r.err)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	assert.Equal(t, qos.Utility, r.a.Asked)
	assert.Equal(t, qos.Utility, r.a.Applied, r.a.Detail)
	c, detail, err := qos.ReadThread(cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, qos.Utility, c, "the child inherits the class its starting thread was given: %s", detail)
	assert.Contains(t, detail, "SCHED_BATCH nice=10")
}

func TestStartLeavesTheReapToWait(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 7")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	_, err := Start(cmd, qos.Unspecified)
	require.NoError(t, err)
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "Wait reaps the child and gets its status")
	assert.Equal(t, 7, exit.ExitCode())
}

func TestStartReportsAFailedStart(t *testing.T) {
	cmd := exec.Command("/nonexistent/qoslab-no-such-binary")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	_, err := Start(cmd, qos.Default)
	assert.ErrorContains(t, err, "/nonexistent/qoslab-no-such-binary")
}

// childState is the state letter of /proc/PID/stat.
func childState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	require.NotEmpty(t, f)
	return f[0]
}
