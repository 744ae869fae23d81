package procsched

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// On this machine: the nice reads as getpriority says it, under `nice -n
// 10` too.
func TestReadThisProcess(t *testing.T) {
	s := Read()
	assert.Empty(t, s.Unread)
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, 20-prio, s.Nice, "the raw syscall answers 20-nice")
	assert.NotEmpty(t, s.Policy)
}

// PolicyName's numbers are the kernel's: the one table qos, telemetry and
// the controller's record all name policies by.
func TestPolicyNameMatchesTheKernelsNumbers(t *testing.T) {
	for policy, want := range map[int]string{
		unix.SCHED_NORMAL:   "SCHED_OTHER",
		unix.SCHED_FIFO:     "SCHED_FIFO",
		unix.SCHED_RR:       "SCHED_RR",
		unix.SCHED_BATCH:    "SCHED_BATCH",
		unix.SCHED_IDLE:     "SCHED_IDLE",
		unix.SCHED_DEADLINE: "SCHED_DEADLINE",
		unix.SCHED_EXT:      "SCHED_EXT",
		4:                   "policy(4)",
	} {
		assert.Equal(t, want, PolicyName(policy), "policy %d", policy)
	}
}
