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
