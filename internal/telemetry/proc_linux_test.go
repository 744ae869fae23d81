package telemetry

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// overlay copies a fixture tree onto root, writing files in place so that a
// probe's open files see the new content, as they would with /proc.
func overlay(t *testing.T, fixture, root string) {
	t.Helper()
	src := filepath.Join(procFixtures, fixture)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	require.NoError(t, err)
}

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644))
}

// fixedClock is a probe clock that moves only when told.
type fixedClock struct{ t time.Time }

func (c *fixedClock) now() time.Time          { return c.t }
func (c *fixedClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// newFixtureProbe opens a probe on a copy of a fixture tree, with a clock the
// test moves.
func newFixtureProbe(t *testing.T, fixture string) (*procProbe, string, *fixedClock) {
	t.Helper()
	root := t.TempDir()
	overlay(t, fixture, root)
	pr, err := newProcProbe(procOptions{Root: root, ClockTicks: 100})
	require.NoError(t, err)
	t.Cleanup(func() { pr.Close() })
	p := pr.(*procProbe)
	clock := &fixedClock{t: time.Unix(1000, 0)}
	p.now = clock.now
	return p, root, clock
}

func cpuBusies(s Sample) map[int]*float64 {
	out := map[int]*float64{}
	for _, c := range s.CPUs {
		out[c.ID] = c.Busy
	}
	return out
}

func TestProcProbeCaptured(t *testing.T) {
	p, root, clock := newFixtureProbe(t, "captured")
	ctx := context.Background()
	refs := []ThreadRef{{PID: 25994, TID: 25994, Role: "worker 0"}}

	first, err := p.Sample(ctx, refs)
	require.NoError(t, err)
	assert.Equal(t, SamplerProc, first.Sampler)
	assert.Zero(t, first.IntervalNs, "a first sample primes")
	require.Len(t, first.CPUs, 2)
	for _, c := range first.CPUs {
		assert.Nil(t, c.Busy, "cpu %d: no rate on a priming sample", c.ID)
		assert.Nil(t, c.MHz, "this VM has no cpufreq")
		assert.Empty(t, c.Type, "both CPUs have capacity 1024")
	}
	assert.Nil(t, first.PackageW)
	assert.Contains(t, first.Notes, "no cpufreq scaling_cur_freq: CPU frequencies not read")
	assert.Contains(t, first.Notes, "no RAPL powercap zones: power not read")
	require.Len(t, first.Threads, 1)
	assert.Equal(t, Thread{TID: 25994, Role: "worker 0", CPU: 1, Policy: "SCHED_OTHER nice=0"}, first.Threads[0])

	overlay(t, "captured-next", root)
	clock.advance(316 * time.Millisecond)
	next, err := p.Sample(ctx, refs)
	require.NoError(t, err)
	assert.Equal(t, int64(316*time.Millisecond), next.IntervalNs)
	assert.Empty(t, next.Notes, "start-up notes are given once")
	require.Len(t, next.CPUs, 2)
	for _, c := range next.CPUs {
		require.NotNil(t, c.Busy, "cpu %d", c.ID)
		assert.Equal(t, 1.0, *c.Busy, "cpu %d: both CPUs were loaded, no idle tick", c.ID)
	}
	require.Len(t, next.Threads, 1)
	require.NotNil(t, next.Threads[0].Busy)
	// 9 ticks of 10 ms in 316 ms.
	assert.InDelta(t, 0.09/0.316, *next.Threads[0].Busy, 1e-9)
}

func TestProcProbeConstructed(t *testing.T) {
	p, root, clock := newFixtureProbe(t, "constructed")
	ctx := context.Background()
	refs := VCPURefs(4242, []int{4250, 4251, 4252})

	first, err := p.Sample(ctx, refs)
	require.NoError(t, err)
	assert.Empty(t, first.Notes, "cpufreq and RAPL are there")
	require.Len(t, first.CPUs, 4)
	var types []string
	for _, c := range first.CPUs {
		types = append(types, c.Type)
		require.NotNil(t, c.MHz)
	}
	assert.Equal(t, []string{"P", "P", "E", "E"}, types)
	assert.Equal(t, 4700.0, *first.CPUs[0].MHz)
	assert.Equal(t, 3400.0, *first.CPUs[3].MHz)
	assert.Nil(t, first.PackageW, "a first sample primes the energy counters")
	assert.Equal(t, []Thread{
		{TID: 4250, Role: "vcpu 0", CPU: 1, Policy: "SCHED_OTHER nice=0"},
		{TID: 4251, Role: "vcpu 1", CPU: 3, Policy: "SCHED_IDLE nice=0"},
		{TID: 4252, Role: "vcpu 2", CPU: 2, Policy: "SCHED_FIFO rtprio=10 nice=0"},
	}, first.Threads)

	overlay(t, "constructed-next", root)
	clock.advance(100 * time.Millisecond)
	next, err := p.Sample(ctx, refs)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"RAPL package-0 energy counter wrapped at 262143328850 µJ (accounted for)",
		"thread 4251 (vcpu 1) exited",
	}, next.Notes)
	want := map[int]float64{0: 0.8, 1: 0, 2: 0.4, 3: 0.5}
	for id, b := range cpuBusies(next) {
		require.NotNil(t, b, "cpu %d", id)
		assert.InDelta(t, want[id], *b, 1e-9, "cpu %d", id)
	}
	assert.Equal(t, 4800.0, *next.CPUs[0].MHz)
	require.NotNil(t, next.PackageW)
	assert.InDelta(t, 10.0, *next.PackageW, 1e-9, "1 J across the wrap in 100 ms")
	require.NotNil(t, next.CPUW)
	assert.InDelta(t, 5.0, *next.CPUW, 1e-9, "the core zone, not dram")
	require.Len(t, next.Threads, 2, "the exited thread is left out")
	assert.Equal(t, 4250, next.Threads[0].TID)
	assert.Equal(t, 0, next.Threads[0].CPU)
	require.NotNil(t, next.Threads[0].Busy)
	assert.InDelta(t, 0.9, *next.Threads[0].Busy, 1e-9, "from schedstat: 90 ms run in 100 ms")
	assert.Equal(t, 4252, next.Threads[1].TID)
	require.NotNil(t, next.Threads[1].Busy)
	assert.InDelta(t, 0.5, *next.Threads[1].Busy, 1e-9, "from stat: 5 ticks in 100 ms")

	// The exited thread is not reported again; a thread id that never
	// existed is named once.
	clock.advance(100 * time.Millisecond)
	third, err := p.Sample(ctx, append(refs, ThreadRef{PID: 4242, TID: 4253, Role: "vcpu 3"}))
	require.NoError(t, err)
	require.Len(t, third.Notes, 1)
	assert.Contains(t, third.Notes[0], "thread 4253 (vcpu 3) not found")
	assert.Len(t, third.Threads, 2)
	clock.advance(100 * time.Millisecond)
	fourth, err := p.Sample(ctx, refs[:1])
	require.NoError(t, err)
	assert.Empty(t, fourth.Notes)
	assert.Len(t, fourth.Threads, 1)
	assert.Len(t, p.threads, 1, "threads no longer asked for are closed")
	assert.Empty(t, p.gone, "and forgotten once gone")
}

func TestProcProbeCapacityTypes(t *testing.T) {
	p, _, _ := newFixtureProbe(t, "constructed-biglittle")
	s, err := p.Sample(context.Background(), nil)
	require.NoError(t, err)
	var types []string
	for _, c := range s.CPUs {
		types = append(types, c.Type)
	}
	assert.Equal(t, []string{"capacity 446", "capacity 446", "capacity 1024", "capacity 1024"}, types)
}

func TestProcProbeCPUOffline(t *testing.T) {
	const cpu0Only = "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 10 0 10 80 0 0 0 0 0 0\nintr 0\n"
	for _, tc := range []struct {
		name, online, wantNote string
	}{
		{"taken offline", "0\n", "cpu 1 went offline"},
		{"line lost, still online", "0-1\n", "cpu 1 missing from /proc/stat though online"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, root, clock := newFixtureProbe(t, "captured")
			ctx := context.Background()
			_, err := p.Sample(ctx, nil)
			require.NoError(t, err)

			writeFile(t, root, "proc/stat", cpu0Only)
			writeFile(t, root, "sys/devices/system/cpu/online", tc.online)
			clock.advance(100 * time.Millisecond)
			s, err := p.Sample(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, []string{tc.wantNote}, s.Notes)
			require.Len(t, s.CPUs, 1, "the offline CPU is left out")
			assert.Equal(t, 0, s.CPUs[0].ID)

			// Back online: primed, without a rate, and said.
			overlay(t, "captured-next", root)
			clock.advance(100 * time.Millisecond)
			s, err = p.Sample(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"cpu 1 came online"}, s.Notes)
			busy := cpuBusies(s)
			require.Len(t, busy, 2)
			assert.NotNil(t, busy[0])
			assert.Nil(t, busy[1])
		})
	}
}

func TestProcProbeGarbledStat(t *testing.T) {
	p, root, clock := newFixtureProbe(t, "captured")
	ctx := context.Background()
	_, err := p.Sample(ctx, nil)
	require.NoError(t, err)

	// cpu1's line is cut short: cpu1 stays, without a rate, and is not
	// taken for an offline CPU.
	writeFile(t, root, "proc/stat", "cpu  1 1 1 1\ncpu0 362141 53 45180 327908 1483 0 1051 1151 2 0\ncpu1 3523\n")
	clock.advance(100 * time.Millisecond)
	s, err := p.Sample(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{`/proc/stat: garbled line "cpu1 3523": cpu 1 has no busy share`}, s.Notes)
	busy := cpuBusies(s)
	require.Len(t, busy, 2)
	assert.NotNil(t, busy[0])
	assert.Nil(t, busy[1])

	// Whole file garbage, then empty: no CPUs, notes, no panic. The
	// online list still names both CPUs, so they are not called offline.
	for i, junk := range []string{"\x00\xff garbage\n", ""} {
		writeFile(t, root, "proc/stat", junk)
		clock.advance(100 * time.Millisecond)
		s, err = p.Sample(ctx, nil)
		require.NoError(t, err)
		assert.Empty(t, s.CPUs)
		if i == 0 {
			assert.Equal(t, []string{"cpu 0 missing from /proc/stat though online", "cpu 1 missing from /proc/stat though online"}, s.Notes)
		} else {
			assert.Empty(t, s.Notes, "said once")
		}
	}

	// Good again: both primed afresh, no rates yet, then rates.
	overlay(t, "captured", root)
	clock.advance(100 * time.Millisecond)
	s, err = p.Sample(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, s.CPUs, 2)
	overlay(t, "captured-next", root)
	clock.advance(100 * time.Millisecond)
	s, err = p.Sample(ctx, nil)
	require.NoError(t, err)
	for id, b := range cpuBusies(s) {
		assert.NotNil(t, b, "cpu %d", id)
	}
}

func TestProcProbeRAPLBackwardsWithoutRange(t *testing.T) {
	p0, root, _ := newFixtureProbe(t, "constructed")
	require.NoError(t, p0.Close())
	for _, z := range []string{"intel-rapl:0", "intel-rapl:0:0"} {
		require.NoError(t, os.Remove(filepath.Join(root, "sys/class/powercap", z, "max_energy_range_uj")))
	}
	pr, err := newProcProbe(procOptions{Root: root, ClockTicks: 100})
	require.NoError(t, err)
	defer pr.Close()
	p := pr.(*procProbe)
	clock := &fixedClock{t: time.Unix(1000, 0)}
	p.now = clock.now
	ctx := context.Background()
	_, err = p.Sample(ctx, nil)
	require.NoError(t, err)

	overlay(t, "constructed-next", root)
	clock.advance(100 * time.Millisecond)
	s, err := p.Sample(ctx, nil)
	require.NoError(t, err)
	assert.Nil(t, s.PackageW, "the package counter went backwards with no known range")
	require.NotNil(t, s.CPUW, "the core counter went forwards")
	assert.Contains(t, s.Notes, "RAPL package-0: energy counter went backwards and its range is unknown: no power for this interval")

	// The counter is taken up again from the backwards reading.
	writeFile(t, root, "sys/class/powercap/intel-rapl:0/energy_uj", "2671150\n")
	clock.advance(100 * time.Millisecond)
	s, err = p.Sample(ctx, nil)
	require.NoError(t, err)
	require.NotNil(t, s.PackageW)
	assert.InDelta(t, 20.0, *s.PackageW, 1e-9)
}

func TestProcProbeRAPLUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a file whatever its mode")
	}
	root := t.TempDir()
	overlay(t, "constructed", root)
	require.NoError(t, os.Chmod(filepath.Join(root, "sys/class/powercap/intel-rapl:0/energy_uj"), 0))
	pr, err := newProcProbe(procOptions{Root: root, ClockTicks: 100})
	require.NoError(t, err)
	defer pr.Close()
	s, err := pr.Sample(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, s.Notes, 1)
	assert.Contains(t, s.Notes[0], "RAPL energy_uj not readable")
}

func TestNewProcProbeWithoutProc(t *testing.T) {
	_, err := newProcProbe(procOptions{Root: t.TempDir()})
	var unavailable *UnavailableError
	require.ErrorAs(t, err, &unavailable)
	assert.Equal(t, SamplerProc, unavailable.Sampler)
	assert.Contains(t, unavailable.Reason, "proc/stat: no such file or directory")
	assert.Contains(t, unavailable.Fix, "mount")
}

func TestProcProbeCancelled(t *testing.T) {
	p, _, _ := newFixtureProbe(t, "captured")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Sample(ctx, nil)
	assert.ErrorIs(t, err, context.Canceled)
}

// lockedThread starts a goroutine locked to its own OS thread and returns its
// thread id and a function that ends it; ending it without unlocking makes
// the Go runtime end the OS thread too. The process's main thread is the
// exception (the runtime never ends it), so a goroutine that lands there
// stays parked on it until the test ends, and another one is started, which
// cannot land there.
func lockedThread(t *testing.T) (tid int, end func()) {
	t.Helper()
	type start struct {
		tid  int
		quit chan struct{}
	}
	for range 10 {
		started := make(chan start)
		quit := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			started <- start{unix.Gettid(), quit}
			<-quit
		}()
		st := <-started
		if st.tid != unix.Getpid() {
			return st.tid, func() { close(quit) }
		}
		t.Cleanup(func() { close(quit) })
	}
	t.Fatal("no locked goroutine off the main thread")
	return 0, nil
}

func TestProcProbeThisMachine(t *testing.T) {
	pr, err := newProcProbe(procOptions{})
	require.NoError(t, err)
	defer pr.Close()
	ctx := context.Background()
	tid, end := lockedThread(t)
	refs := []ThreadRef{{PID: os.Getpid(), TID: tid, Role: "worker 0"}}

	first, err := pr.Sample(ctx, refs)
	require.NoError(t, err)
	require.NotEmpty(t, first.CPUs)
	require.Len(t, first.Threads, 1)
	// The thread runs as this process's threads start (nice 10 under
	// `nice -n 10`), read here independently of the probe.
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("SCHED_OTHER nice=%d", 20-prio), first.Threads[0].Policy)

	time.Sleep(20 * time.Millisecond)
	next, err := pr.Sample(ctx, refs)
	require.NoError(t, err)
	assert.Positive(t, next.IntervalNs)
	require.Len(t, next.Threads, 1)
	require.NotNil(t, next.Threads[0].Busy)
	assert.Less(t, *next.Threads[0].Busy, 0.5, "a thread blocked on a channel")

	// The thread exits: the open stat file now fails with ESRCH.
	end()
	require.Eventually(t, func() bool {
		s, err := pr.Sample(ctx, refs)
		require.NoError(t, err)
		return assert.ObjectsAreEqual([]string{"thread " + strconv.Itoa(tid) + " (worker 0) exited"}, s.Notes) && len(s.Threads) == 0
	}, 5*time.Second, 10*time.Millisecond)
}

// A thread's busy share is over the time between its own two readings:
// when the sampler is held up between a sample's start and a thread's
// reading (a busy machine), the thread's run time covers more than the
// samples' interval, and dividing by that gave shares over 100%.
func TestThreadBusyIsOverItsOwnReadings(t *testing.T) {
	p, root, _ := newFixtureProbe(t, "constructed")
	base := time.Unix(1000, 0)
	// The clock as the probe reads it: at each sample's start, then before
	// each thread's reading (vcpu 0, 1, 2).
	calls := []time.Duration{0, 0, 0, 0, 100, 148, 148, 148}
	n := 0
	p.now = func() time.Time {
		d := calls[min(n, len(calls)-1)]
		n++
		return base.Add(d * time.Millisecond)
	}
	refs := VCPURefs(4242, []int{4250, 4251, 4252})
	_, err := p.Sample(context.Background(), refs)
	require.NoError(t, err)
	overlay(t, "constructed-next", root)
	// vcpu 0 ran all the 148 ms from its first reading to its second.
	writeFile(t, root, "proc/4242/task/4250/schedstat", "5348000000 1010 51\n")
	next, err := p.Sample(context.Background(), refs)
	require.NoError(t, err)
	assert.Equal(t, int64(100*time.Millisecond), next.IntervalNs, "the sample's interval")
	require.NotNil(t, next.Threads[0].Busy)
	assert.InDelta(t, 1.0, *next.Threads[0].Busy, 1e-9, "148 ms run in its own 148 ms, not 148%")
	for _, th := range next.Threads {
		if th.Busy != nil {
			assert.LessOrEqual(t, *th.Busy, 1.0, "thread %d", th.TID)
		}
	}
}
