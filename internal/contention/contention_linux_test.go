package contention

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/qos"
)

// allowedHere reads this process's CPUs with sched_getaffinity directly, not
// through the code under test.
func allowedHere(t *testing.T) []int {
	var set unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &set))
	var out []int
	for cpu := 0; cpu < 1024; cpu++ {
		if set.IsSet(cpu) {
			out = append(out, cpu)
		}
	}
	return out
}

// cpusAllowed reads a thread's Cpus_allowed_list from /proc, as the kernel
// reports it to anyone: "0", "0-3", "0,2-3".
func cpusAllowed(t *testing.T, pid, tid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		var out []int
		for _, part := range strings.Split(strings.TrimSpace(v), ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, err := strconv.Atoi(lo)
			require.NoError(t, err, line)
			b := a
			if isRange {
				b, err = strconv.Atoi(hi)
				require.NoError(t, err, line)
			}
			for c := a; c <= b; c++ {
				out = append(out, c)
			}
		}
		return out
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%d/task/%d/status", pid, tid)
	return nil
}

// Every spinner is pinned to allowed CPU i mod the count of allowed CPUs,
// one per CPU and wrapping around: the kernel's own view of each spinner
// thread (read from /proc) says so, not only the spinners' report.
func TestContentionPinsOneSpinnerPerCPU(t *testing.T) {
	allowed := allowedHere(t)
	for _, n := range []int{len(allowed), 2 * len(allowed)} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			c, err := Start(context.Background(), n)
			require.NoError(t, err)
			defer c.Stop()
			assert.Equal(t, allowed, c.AllowedCPUs)
			require.Len(t, c.Spinners, n)
			tids := map[int]bool{}
			for i, sp := range c.Spinners {
				want := allowed[i%len(allowed)]
				assert.Equal(t, want, sp.CPU, "spinner %d", i)
				assert.True(t, sp.Pinned, "spinner %d: %s", i, sp.Reason)
				assert.Equal(t, qos.Default, sp.QoS.Applied, "spinner %d", i)
				require.NotZero(t, sp.TID)
				assert.False(t, tids[sp.TID], "spinner %d shares thread %d", i, sp.TID)
				tids[sp.TID] = true
				assert.Equal(t, []int{want}, cpusAllowed(t, c.PID, sp.TID), "spinner %d (tid %d) as /proc reports it", i, sp.TID)
			}
			// Each CPU carries n/len(allowed) spinners: none is left out.
			for _, cpu := range allowed {
				got := 0
				for _, sp := range c.Spinners {
					if sp.CPU == cpu {
						got++
					}
				}
				assert.Equal(t, n/len(allowed), got, "spinners on CPU %d", cpu)
			}
			assert.Contains(t, c.Text(), "pinned to CPUs "+intsText(wantSpinnerCPUs(n, allowed)))
		})
	}
}

// wantSpinnerCPUs is the CPU list the test expects in Contention.Text.
func wantSpinnerCPUs(n int, allowed []int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = allowed[i%len(allowed)]
	}
	return out
}

// "all" resolves to the CPUs this process may use, so a taskset around
// qoslab narrows the contention with it.
func TestContentionAllCountsAllowedCPUs(t *testing.T) {
	n, err := All.Resolve()
	require.NoError(t, err)
	assert.Equal(t, len(allowedHere(t)), n)
	n, err = SpinnerCount(3).Resolve()
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}

// The spinner process starts at the default class whatever the class of the
// thread that asked for it: nothing is inherited by accident.
func TestContentionStartsAtDefaultWhateverTheCaller(t *testing.T) {
	type res struct {
		c   *Contention
		err error
	}
	out := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: utility ends with the thread
		require.Equal(t, qos.Utility, qos.ApplySelf(qos.Utility).Applied)
		c, err := Start(context.Background(), 1)
		out <- res{c, err}
	}()
	r := <-out
	require.NoError(t, r.err)
	defer r.c.Stop()
	assert.Equal(t, qos.Default, r.c.StartClass.Asked)
	assert.Equal(t, qos.Default, r.c.StartClass.Applied, r.c.StartClass.Reason)
	// The process's main thread, read by the kernel's account.
	c, detail, err := qos.ReadThread(r.c.PID)
	require.NoError(t, err)
	assert.Equal(t, qos.Default, c, detail)
}
