//go:build darwin

package hostview

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This process's CPU time through proc_pidinfo grows by about the CPU
// time spent, which checks the timebase: read as nanoseconds, Apple
// silicon's ticks would be 41.67 times short.
func TestProcessCPUTimeOnThisMac(t *testing.T) {
	before, err := ProcessCPUTime(os.Getpid())
	require.NoError(t, err)
	l, err := loadLibproc()
	require.NoError(t, err)
	t.Logf("mach_timebase_info: %d/%d", l.timebase.Numer, l.timebase.Denom)
	spin := 200 * time.Millisecond
	x := 0
	for start := time.Now(); time.Since(start) < spin; {
		x++
	}
	after, err := ProcessCPUTime(os.Getpid())
	require.NoError(t, err)
	t.Logf("spun %v (%d loops): CPU time %d ns -> %d ns", spin, x, before, after)
	assert.GreaterOrEqual(t, after-before, int64(spin)/2, "at least half the spin counted: the units are nanoseconds")
	assert.Less(t, after-before, int64(spin)*20, "not inflated either")

	_, err = ProcessCPUTime(0)
	assert.Error(t, err)
	_, err = ProcessCPUTime(1 << 30)
	assert.ErrorContains(t, err, "no such process")
}
