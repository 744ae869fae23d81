package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload/kernel"
)

// This file builds for every OS the agent runs on (make vet cross-compiles
// it for darwin/arm64); the kernel's scheduler accounts it reads are
// Linux's, and the tests that need them skip elsewhere.

// clockLog is a fake cell clock and thread CPU clock that log each read,
// and a kernel that logs each chunk, so a test can say in what order a
// measured interval read them.
type clockLog struct {
	events    []string
	cell, cpu int64
}

func (l *clockLog) thread(deadline int64) *thread {
	return &thread{
		deadline: deadline, done: make(chan struct{}), cpus: newCPUSet(1),
		mono:     func() int64 { l.events = append(l.events, "cell"); return l.cell },
		cpuClock: func() int64 { l.events = append(l.events, "cpu"); return l.cpu },
	}
}

// chunk is a kernel chunk: 3 ms of the cell's clock, 2 ms of CPU.
func (l *clockLog) chunk(uint64) {
	l.events = append(l.events, "work")
	l.cell += 3e6
	l.cpu += 2e6
}

// The thread's CPU clock is read just outside its measured interval: first
// the CPU clock, then the cell's clock at the start; the cell's clock, then
// the CPU clock at the end. Nothing is added inside the interval, and the
// record's CPU time is exactly the chunks' (the fake clocks make it exact).
func TestIntervalReadsTheCPUClockJustOutsideIt(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline int64
		cancel   bool
		run      func(th *thread, l *clockLog) error
		chunks   int
	}{
		{"fixed work", 0, false, func(th *thread, l *clockLog) error { return chunked(th, 3, 1, l.chunk) }, 3},
		{"fixed work, cancelled", 0, true, func(th *thread, l *clockLog) error { return chunked(th, 3, 1, l.chunk) }, 1},
		{"fixed duration", 10e6, false, func(th *thread, l *clockLog) error { return untilDeadline(th, 1, l.chunk) }, 4},
		{"fixed duration, cancelled", 10e6, true, func(th *thread, l *clockLog) error { return untilDeadline(th, 1, l.chunk) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &clockLog{cell: 5e6, cpu: 7e9}
			th := l.thread(tc.deadline)
			th.cellStart = 5e6
			if tc.cancel {
				done := make(chan struct{})
				close(done)
				th.done = done
			}
			err := tc.run(th, l)
			if tc.cancel {
				require.ErrorIs(t, err, context.Canceled)
			} else {
				require.NoError(t, err)
			}
			require.Len(t, th.spans, 1)
			require.GreaterOrEqual(t, len(l.events), 4)
			assert.Equal(t, []string{"cpu", "cell"}, l.events[:2], "CPU clock, then the cell's clock, then the work")
			assert.Equal(t, []string{"cell", "cpu"}, l.events[len(l.events)-2:], "the cell's clock, then the CPU clock")
			cpuReads, chunks := 0, 0
			for _, e := range l.events {
				cpuReads += map[bool]int{true: 1}[e == "cpu"]
				chunks += map[bool]int{true: 1}[e == "work"]
			}
			assert.Equal(t, 2, cpuReads, "no CPU clock read inside the interval: %v", l.events)
			assert.Equal(t, tc.chunks, chunks)
			s := th.spans[0]
			assert.Equal(t, int64(tc.chunks)*2e6, s.cpuNs, "the CPU time of the chunks run in the interval")
			assert.Equal(t, int64(tc.chunks)*3e6, s.end-s.start)
		})
	}
}

// A CPU clock that could not be read leaves the record's CPU time not
// recorded (0), never a difference with a failed read.
func TestCPUSpent(t *testing.T) {
	for _, tc := range []struct{ from, to, want int64 }{
		{100, 350, 250},
		{100, 100, 0},
		{-1, 350, 0},
		{100, -1, 0},
		{-1, -1, 0},
	} {
		assert.Equal(t, tc.want, cpuSpent(tc.from, tc.to), "%d..%d", tc.from, tc.to)
	}
}

// spinCPU runs fp chunks until the calling thread's own CPU clock has
// advanced by d: CPU work of a known amount, however busy the machine.
func spinCPU(d time.Duration) {
	start := threadCPUNow()
	for threadCPUNow()-start < int64(d) {
		kernel.FP(1 << 12)
	}
}

// The CPU a thread spends before the cell's start barrier (its setup:
// generating input, allocating) is not in its record, and neither is what
// it does after its record ends (its check, on the caller's goroutine).
func TestCPUTimeLeavesOutWorkOutsideTheInterval(t *testing.T) {
	const setupCPU = 200 * time.Millisecond
	recs, err := runThreads(context.Background(), 2, qos.Default, nil, threadJob{
		setup: func(*thread) error { spinCPU(setupCPU); return nil },
		measure: func(th *thread) error {
			th.record("", th.begin(), th.now(), 1)
			spinCPU(setupCPU) // after the interval: not in it either
			return nil
		},
	})
	require.NoError(t, err)
	require.Len(t, recs, 2)
	for _, r := range recs {
		assert.Positive(t, r.CPUNs, "thread %d: the clock reads themselves take CPU", r.Index)
		assert.Less(t, r.CPUNs, int64(setupCPU/10), "thread %d: none of the %v of setup, nor the %v after", r.Index, setupCPU, setupCPU)
	}
}

// A thread that sleeps most of its interval reports little CPU time; one
// that computes for a known CPU time, then sleeps, reports that time.
func TestCPUTimeOfASleepingThread(t *testing.T) {
	const sleep, work = 300 * time.Millisecond, 100 * time.Millisecond
	recs, err := runThreads(context.Background(), 2, qos.Default, nil, threadJob{
		measure: func(th *thread) error {
			m := th.begin()
			if th.index == 1 {
				spinCPU(work)
			}
			time.Sleep(sleep)
			th.record("", m, th.now(), 1)
			return nil
		},
	})
	require.NoError(t, err)
	require.Len(t, recs, 2)
	for _, r := range recs {
		wall := r.EndNs - r.StartNs
		require.GreaterOrEqual(t, wall, int64(sleep), "thread %d", r.Index)
		assert.LessOrEqual(t, r.CPUNs, wall, "thread %d: never more CPU than wall time on one thread", r.Index)
	}
	assert.Positive(t, recs[0].CPUNs)
	assert.Less(t, recs[0].CPUNs, int64(sleep/10), "asleep for %v: a few clock reads and a timer", sleep)
	assert.GreaterOrEqual(t, recs[1].CPUNs, int64(work), "the %v it computed", work)
	assert.Less(t, recs[1].CPUNs, int64(work+sleep/10), "and not the %v it slept", sleep)
}

// schedAccount is the kernel's account of one thread (Linux,
// /proc/self/task/TID/schedstat and status): the CPU time it ran (the
// same counter as its CPU clock), the time it waited on a run queue, and
// how often it gave up the CPU itself (slept).
type schedAccount struct {
	execNs, waitNs, sleeps int64
}

func readSchedAccount(tid int) (schedAccount, error) {
	if tid == 0 {
		return schedAccount{}, errors.New("no thread id off Linux")
	}
	dir := fmt.Sprintf("/proc/self/task/%d/", tid)
	b, err := os.ReadFile(dir + "schedstat")
	if err != nil {
		return schedAccount{}, err
	}
	var a schedAccount
	if _, err := fmt.Sscan(string(b), &a.execNs, &a.waitNs); err != nil {
		return schedAccount{}, fmt.Errorf("%sschedstat %q: %w", dir, b, err)
	}
	st, err := os.ReadFile(dir + "status")
	if err != nil {
		return schedAccount{}, err
	}
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
			a.sleeps, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return a, err
		}
	}
	return schedAccount{}, fmt.Errorf("%sstatus has no voluntary_ctxt_switches", dir)
}

// stealNs is the time the hypervisor kept this machine's CPUs from
// running, all CPUs together (Linux /proc/stat, in clock ticks of 10 ms):
// 0 on a machine that is not a guest.
func stealNs() (int64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat begins %q, not the cpu line with steal", line)
	}
	ticks, err := strconv.ParseInt(f[8], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/stat steal %q: %w", f[8], err)
	}
	return ticks * 10e6, nil
}

// A thread spinning through a real fp cell (fixed work and fixed duration)
// reports the CPU time the kernel accounted to that thread over its
// interval, never more than its wall time; and whatever of its wall time
// it did not get as CPU, it spent waiting on a run queue or lost to the
// hypervisor (steal), by the kernel's own account: the CPU time is its
// wall time on a quiet machine, and a busy machine cannot fool the check.
// Rounds where the thread slept (Go's scheduler handing a preempted locked
// thread's CPU over and back: no account says for how long) check the
// first two only; the test runs rounds until one has a thread that never
// slept.
func TestCPUTimeOfASpinningThread(t *testing.T) {
	if _, err := readSchedAccount(currentTID()); err != nil {
		t.Skipf("no scheduler account of threads here: %v", err)
	}
	type window struct {
		before, after schedAccount
		err           error
	}
	const slack = 2 * time.Millisecond
	checked := 0
	for round := 0; round < 8 && checked == 0; round++ {
		for _, tc := range []struct {
			name     string
			duration time.Duration
			loops    uint64
		}{{"fixed duration", 200 * time.Millisecond, 0}, {"fixed work", 0, 24 << 20}} {
			var win [2]window
			stealBefore, err := stealNs()
			require.NoError(t, err)
			recs, err := runThreadsFor(context.Background(), 2, qos.Default, tc.duration, nil, threadJob{
				measure: func(th *thread) error {
					w := &win[th.index]
					w.before, w.err = readSchedAccount(currentTID())
					err := measure(th, tc.loops, loopChunk, func(n uint64) { kernel.FP(n) })
					if w.err == nil {
						w.after, w.err = readSchedAccount(currentTID())
					}
					return err
				},
			})
			require.NoError(t, err)
			stealAfter, err := stealNs()
			require.NoError(t, err)
			require.Len(t, recs, 2)
			for _, r := range recs {
				w := win[r.Index]
				require.NoError(t, w.err)
				wall := r.EndNs - r.StartNs
				ran, waited, slept := w.after.execNs-w.before.execNs, w.after.waitNs-w.before.waitNs, w.after.sleeps-w.before.sleeps
				t.Logf("round %d %s thread %d: wall %v, cpu %v, kernel: ran %v, waited %v, slept %d times; steal on all CPUs %v",
					round, tc.name, r.Index, time.Duration(wall), time.Duration(r.CPUNs), time.Duration(ran), time.Duration(waited), slept, time.Duration(stealAfter-stealBefore))
				assert.Positive(t, r.CPUNs)
				assert.LessOrEqual(t, r.CPUNs, wall+int64(slack), "never more CPU than wall time on one thread")
				assert.InDelta(t, ran, r.CPUNs, float64(5*time.Millisecond), "the thread's own CPU time over its interval (the kernel's count, read just outside)")
				if slept == 0 {
					checked++
					// A tick of steal on each CPU either side of the window.
					lost := stealAfter - stealBefore + 2*10e6*int64(runtime.NumCPU())
					assert.LessOrEqual(t, wall-r.CPUNs, waited+lost+int64(slack),
						"what a spinning thread did not get of its wall time it waited for (%v) or lost to the hypervisor (%v)", time.Duration(waited), time.Duration(lost))
				}
			}
		}
	}
	if checked == 0 {
		t.Skip("in every round each thread slept at least once: its shortfall of CPU against wall time cannot be told from sleep here")
	}
}

// assertCPUTime checks a real record's CPU time: recorded, and no more than
// its wall time but for the clock reads just outside the interval (a few
// microseconds; a millisecond allowed).
func assertCPUTime(t *testing.T, r Record) {
	t.Helper()
	assert.Positive(t, r.CPUNs, "record %d phase %q: CPU time recorded", r.Index, r.Phase)
	assert.LessOrEqual(t, r.CPUNs, r.EndNs-r.StartNs+int64(time.Millisecond), "record %d phase %q: no more CPU than wall time", r.Index, r.Phase)
}
