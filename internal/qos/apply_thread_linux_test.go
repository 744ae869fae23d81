package qos

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The host side of a VM: give another process's thread (a vCPU thread) a
// class, and read it back independently.
func TestApplyThreadToAnotherProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	tid := cmd.Process.Pid // a single-threaded process: its thread id is its pid

	a := ApplyThread(tid, Background)
	assert.Equal(t, Background, a.Applied, a.Reason)
	attr, err := unix.SchedGetAttr(tid, 0)
	require.NoError(t, err)
	assert.Equal(t, uint32(unix.SCHED_IDLE), attr.Policy)

	a = ApplyThread(tid, Utility)
	assert.Equal(t, Utility, a.Applied, a.Reason)
	attr, err = unix.SchedGetAttr(tid, 0)
	require.NoError(t, err)
	assert.Equal(t, uint32(unix.SCHED_BATCH), attr.Policy)
	assert.Equal(t, int32(10), attr.Nice)

	c, detail, err := ReadThread(tid)
	require.NoError(t, err)
	assert.Equal(t, Utility, c)
	assert.Contains(t, detail, "SCHED_BATCH nice=10")

	self, _, err := ReadSelf()
	require.NoError(t, err)
	assert.NotEqual(t, Utility, self, "the caller's own thread is untouched")
}

func TestApplyThreadNoSuchThread(t *testing.T) {
	a := ApplyThread(1<<30, Background)
	assert.False(t, a.OK())
	assert.Contains(t, a.Reason, "sched_setattr")
}
