package contention

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload"
)

// stuckSpinnerEnv, set to a file's path, makes the test binary a spinner
// process that never says it is ready: it writes its pid to the file and
// waits.
const stuckSpinnerEnv = "QOSLAB_TEST_STUCK_SPINNER"

// TestMain lets the test binary be the spinner process, as qoslab is.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == SpinnerCommand {
		if path := os.Getenv(stuckSpinnerEnv); path != "" {
			tmp := path + ".tmp"
			if os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o600) != nil || os.Rename(tmp, path) != nil {
				os.Exit(3)
			}
			time.Sleep(time.Hour)
			os.Exit(4)
		}
		if err := SpinnerMain(context.Background(), os.Args[2:], os.Stdin, os.Stdout); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Spinners that die mid-run (killed, or taken down by a parent thread's
// exit through Pdeathsig, which once happened) must be noticed: the cells
// after would measure without contention.
func TestContentionDeathIsNoticed(t *testing.T) {
	c, err := Start(context.Background(), 1)
	require.NoError(t, err)
	defer c.Stop()
	require.Len(t, c.Spinners, 1)
	for range 3 {
		runtime.GC()
	}
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, c.Running(), "spinning")

	require.NoError(t, syscall.Kill(c.PID, syscall.SIGKILL))
	require.Eventually(t, func() bool { return c.Running() != nil }, 5*time.Second, 10*time.Millisecond)
	err = c.Running()
	assert.Contains(t, err.Error(), fmt.Sprintf("pid %d", c.PID))
	assert.Contains(t, err.Error(), "ended mid-run")
	assert.NotPanics(t, c.Stop, "Stop after the process is gone")
}

// Ctrl-C while the spinner process has not said it is ready (here a
// stand-in that never says so) ends the start at once, as an interruption,
// with the process killed and reaped: nothing is left behind.
func TestStartReturnsWhenCancelledBeforeReady(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv(stuckSpinnerEnv, pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		c   *Contention
		err error
	}
	out := make(chan result, 1)
	go func() {
		c, err := Start(ctx, 1)
		out <- result{c, err}
	}()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "precondition: the stand-in runs")
	select {
	case r := <-out:
		t.Fatalf("Start returned before the spinner process was ready: %v", r.err)
	case <-time.After(200 * time.Millisecond):
	}

	cancel()
	select {
	case r := <-out:
		assert.Nil(t, r.c)
		require.ErrorIs(t, r.err, context.Canceled, "an interruption, as the controller tells one")
		assert.Contains(t, r.err.Error(), "spinner process")
	case <-time.After(5 * time.Second):
		t.Fatal("Start still waiting 5 s after it was cancelled")
	}
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the spinner process (pid %d) is killed and reaped", pid)
}

// Text names the CPUs the spinners are pinned to, and for those not
// pinned the CPUs they were meant for and why not: the error pinning them,
// or the affinity they read back.
func TestContentionText(t *testing.T) {
	at := func(cpu int, pinned bool, reason string, allowed ...int) workload.Spinner {
		return workload.Spinner{CPU: cpu, Pinned: pinned, Reason: reason, Allowed: allowed, QoS: qos.Applied{Applied: qos.Default}}
	}
	for _, tc := range []struct {
		name     string
		spinners []workload.Spinner
		want     string
	}{
		{"all pinned", []workload.Spinner{at(0, true, "", 0), at(1, true, "", 1)},
			"2 spinner threads at default, pinned to CPUs 0,1 (pid 7)"},
		{"some pinned", []workload.Spinner{at(0, true, "", 0), at(1, false, "", 0, 1), at(2, false, "", 0, 1)},
			"3 spinner threads at default, 1 of 3 pinned (to CPUs 0); not pinned (meant for CPUs 1,2): its affinity read back as CPUs 0,1 (pid 7)"},
		{"none pinned", []workload.Spinner{at(0, false, "no affinity here"), at(1, false, "no affinity here")},
			"2 spinner threads at default, not pinned (meant for CPUs 0,1): no affinity here (pid 7)"},
		{"none recorded", nil, "2 spinner threads at default, not pinned (pid 7)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Contention{Asked: 2, Threads: 2, PID: 7, Spinners: tc.spinners}
			if tc.spinners != nil {
				c.Threads = len(tc.spinners)
			}
			assert.Equal(t, tc.want, c.Text())
		})
	}
	c := &Contention{Asked: All, Threads: 2, PID: 7, AllowedCPUs: []int{0, 1}, Spinners: []workload.Spinner{at(0, true, "", 0), at(1, true, "", 1)}}
	assert.Equal(t, "2 spinner threads at default, pinned to CPUs 0,1, one per allowed CPU (0,1) (pid 7)", c.Text())
	assert.Empty(t, c.UnpinnedNote())
	c.Spinners[1] = at(1, false, "", 0, 1)
	assert.Equal(t, "contention spinner for CPU 1 is not pinned (its affinity read back as CPUs 0,1): the scheduler places it, so a cell may run beside no spinner", c.UnpinnedNote())
}
