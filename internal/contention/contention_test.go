package contention

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary be the spinner process, as qoslab is.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == SpinnerCommand {
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
