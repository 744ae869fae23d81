package workload

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// TestMain lets the test binary act as the procs worker, as the agent does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WorkerArg {
		// The first worker to create this file dies before it is ready,
		// as a worker killed from outside would.
		if p := os.Getenv(failFirstWorkerEnv); p != "" {
			if f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
				f.Close()
				os.Exit(3)
			}
		}
		os.Exit(WorkerMain(os.Args[2:], os.Stdout))
	}
	os.Exit(m.Run())
}

func TestRunFPRecords(t *testing.T) {
	prog := &Progress{}
	res, err := Run(context.Background(), Params{Workload: catalog.FP, QoS: qos.Utility, Threads: 2, Params: catalog.Params{Loops: 3 << 20}}, prog)
	require.NoError(t, err)
	require.Len(t, res.Records, 2)
	for i, r := range res.Records {
		assert.Equal(t, i, r.Index)
		assert.GreaterOrEqual(t, r.StartNs, int64(0))
		assert.Greater(t, r.EndNs, r.StartNs)
		assert.Equal(t, float64(3<<20), r.Work)
		assert.InEpsilon(t, r.Work/(float64(r.EndNs-r.StartNs)/1e9), r.Rate, 1e-12)
		assert.Equal(t, qos.Utility, r.QoS.Asked)
		assert.Equal(t, qos.Utility, r.QoS.Applied, r.QoS.Detail)
		assert.NotEmpty(t, r.CPUs)
		assertCPUTime(t, r)
	}
	assert.Equal(t, 1.0, prog.Fraction())
}

func TestClassAppliedOnMeasuringThreadOnly(t *testing.T) {
	// Threads start as this one runs: default, or no class at all under
	// `nice -n 10`.
	base, _, err := qos.ReadSelf()
	require.NoError(t, err)
	var setupClass, measureClass, checkClass [2]qos.Class
	_, err = runThreads(context.Background(), 2, qos.Background, nil, threadJob{
		setup: func(th *thread) error {
			setupClass[th.index], _, _ = qos.ReadSelf()
			return nil
		},
		measure: func(th *thread) error {
			measureClass[th.index], _, _ = qos.ReadSelf()
			return nil
		},
		check: func(th *thread) error {
			checkClass[th.index], _, _ = qos.ReadSelf()
			return nil
		},
	})
	require.NoError(t, err)
	for i := range 2 {
		assert.Equal(t, base, setupClass[i], "setup runs before the class is applied")
		assert.Equal(t, qos.Background, measureClass[i], "the measured body runs at the class")
		assert.Equal(t, base, checkClass[i], "checks run off the classed threads")
	}
	// The classed threads ended with their goroutines: this one is untouched.
	c, _, err := qos.ReadSelf()
	require.NoError(t, err)
	assert.Equal(t, base, c)
}

func TestClockStartsAfterEveryThreadIsReady(t *testing.T) {
	recs, err := runThreads(context.Background(), 3, qos.Default, nil, threadJob{
		setup: func(th *thread) error {
			// A slow setup on one thread must not eat into anyone's interval.
			if th.index == 2 {
				time.Sleep(400 * time.Millisecond)
			}
			return nil
		},
		measure: func(th *thread) error {
			th.record("", th.begin(), th.now(), 1)
			return nil
		},
	})
	require.NoError(t, err)
	require.Len(t, recs, 3)
	for _, r := range recs {
		assert.Less(t, r.StartNs, int64(200*time.Millisecond), "thread %d started %v after the cell began", r.Index, time.Duration(r.StartNs))
	}
}

// A cell's phases are in order around its measured interval: the slowest
// set-up falls between the threads' start and every thread being ready,
// the cell's clock starts at CellStart, and every record lies between it
// and Finished.
func TestPhasesFrameTheMeasuredInterval(t *testing.T) {
	prog := &Progress{}
	const slow = 30 * time.Millisecond
	recs, err := runThreads(context.Background(), 2, qos.Default, prog, threadJob{
		setup: func(th *thread) error {
			if th.index == 1 {
				time.Sleep(slow)
			}
			return nil
		},
		measure: func(th *thread) error {
			s := th.begin()
			time.Sleep(time.Millisecond)
			th.record("", s, th.now(), 1)
			return nil
		},
	})
	require.NoError(t, err)
	ph := prog.Phases()
	start, ok := prog.CellStart()
	require.True(t, ok)
	assert.Equal(t, start, ph.CellStart)
	assert.True(t, ph.Spawned > 0 && ph.Spawned <= ph.Ready && ph.Ready <= ph.CellStart && ph.CellStart <= ph.Finished, "%+v", ph)
	assert.GreaterOrEqual(t, ph.SetUpNs, int64(slow), "the slowest thread's set-up")
	assert.GreaterOrEqual(t, ph.Ready-ph.Spawned, ph.SetUpNs, "the slowest set-up is part of the threads' start")
	assert.GreaterOrEqual(t, ph.Ready-ph.Spawned, ph.ClassNs, "and so is the slowest class")
	assert.Positive(t, ph.ClassNs, "applying a class takes system calls")
	for _, r := range recs {
		assert.LessOrEqual(t, r.EndNs, ph.Finished-ph.CellStart, "thread %d ended after Finished", r.Index)
	}
	assert.Equal(t, Phases{}, (&Progress{}).Phases(), "none before a cell")
}

func TestCancelStopsThreads(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	began := time.Now()
	res, err := Run(ctx, Params{Workload: catalog.FP, QoS: qos.Default, Threads: 2, Params: catalog.Params{Loops: 1 << 45}}, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(began), 5*time.Second)
	for _, r := range res.Records {
		assert.Less(t, r.Work, float64(1<<45), "a cancelled thread records only what it did")
	}
}

func TestSetupErrorFailsCell(t *testing.T) {
	_, err := runThreads(context.Background(), 2, qos.Default, nil, threadJob{
		setup: func(th *thread) error {
			if th.index == 1 {
				return assert.AnError
			}
			return nil
		},
		measure: func(th *thread) error { return nil },
	})
	assert.ErrorIs(t, err, assert.AnError)
}

func TestPi(t *testing.T) {
	res, err := Run(context.Background(), Params{Workload: catalog.Pi, QoS: qos.Default, Threads: 3, Seed: 7, Params: catalog.Params{Loops: 3e7 + 1}}, nil)
	require.NoError(t, err)
	require.Len(t, res.Records, 3)
	var total float64
	for _, r := range res.Records {
		total += r.Work
		assertCPUTime(t, r)
	}
	assert.Equal(t, 3e7+1, total, "iterations are split over the threads, none lost")
	assert.Less(t, res.Metrics["pi_error"], 2e-3)
	assert.InDelta(t, math.Pi, res.Metrics["pi_estimate"], 2e-3)
}

func TestIntAndMMul(t *testing.T) {
	for _, w := range []string{catalog.Int, catalog.MMul} {
		res, err := Run(context.Background(), Params{Workload: w, QoS: qos.Default, Threads: 1, Params: catalog.Params{Loops: 5000}}, nil)
		require.NoError(t, err, w)
		require.Len(t, res.Records, 1, w)
		assert.Equal(t, 5000.0, res.Records[0].Work, w)
		assertCPUTime(t, res.Records[0])
	}
}

func TestProcs(t *testing.T) {
	res, err := Run(context.Background(), Params{Workload: catalog.Procs, QoS: qos.Utility, Threads: 3, Params: catalog.Params{Loops: 2 << 20}}, nil)
	require.NoError(t, err)
	require.Len(t, res.Records, 3)
	pids := map[int]bool{}
	for i, r := range res.Records {
		assert.Equal(t, i, r.Index)
		assert.NotZero(t, r.PID)
		assert.NotEqual(t, os.Getpid(), r.PID)
		pids[r.PID] = true
		assert.GreaterOrEqual(t, r.StartNs, int64(0), "workers start after the cell began")
		assert.Greater(t, r.EndNs, r.StartNs)
		assert.Equal(t, float64(2<<20), r.Work)
		assert.Equal(t, qos.Utility, r.QoS.Applied, r.QoS.Detail)
		assert.NotEmpty(t, r.CPUs)
		assertCPUTime(t, r)
	}
	assert.Len(t, pids, 3)
}

// failFirstWorkerEnv names a file whose creation makes a procs worker of
// this test binary exit before it is ready (see TestMain).
const failFirstWorkerEnv = "QOSLAB_TEST_FAIL_FIRST_WORKER"

func TestProcsWorkerDyingBeforeReadyEndsTheCell(t *testing.T) {
	t.Setenv(failFirstWorkerEnv, filepath.Join(t.TempDir(), "failed"))
	done := make(chan error, 1)
	go func() {
		// Enough loops that released workers would run for minutes.
		_, err := Run(context.Background(), Params{Workload: catalog.Procs, QoS: qos.Default, Threads: 4, Params: catalog.Params{Loops: 1 << 40}}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "ended without a report")
	case <-time.After(60 * time.Second):
		t.Fatal("the cell waited for workers still held at the start pipe")
	}
}

func TestCompressAndDecompress(t *testing.T) {
	for _, w := range []string{catalog.Compress, catalog.Decompress} {
		for _, sink := range []string{"file", "null"} {
			t.Run(w+"/"+sink, func(t *testing.T) {
				dir := t.TempDir()
				res, err := Run(context.Background(), Params{Workload: w, QoS: qos.Default, Threads: 2, Seed: 1, Params: catalog.Params{SizeBytes: 8 << 20, Sink: sink, SinkPath: dir}}, nil)
				require.NoError(t, err)
				require.Len(t, res.Records, 2)
				var total float64
				for _, r := range res.Records {
					assert.Equal(t, w, r.Phase)
					assert.Greater(t, r.EndNs, r.StartNs)
					assertCPUTime(t, r)
					total += r.Work
				}
				assert.Equal(t, float64(8<<20), total)
				assert.Equal(t, 1.0, res.Metrics["verified"])
				assert.InDelta(t, 3.0, res.Metrics["compression_ratio"], 0.75, "the default input compresses about 3:1 under zstd")
				left, _ := os.ReadDir(dir)
				assert.Empty(t, left, "scratch output is removed")
				require.Len(t, res.Notes, 1)
				if sink == "null" {
					assert.Contains(t, res.Notes[0], "nothing is written or synced")
					assert.NotContains(t, res.Notes[0], "fsync", "the null sink syncs nothing")
				} else {
					assert.Contains(t, res.Notes[0], "+ fsync")
				}
			})
		}
	}
}

func TestCompressUnwritableSink(t *testing.T) {
	_, err := Run(context.Background(), Params{Workload: catalog.Compress, QoS: qos.Default, Threads: 1, Params: catalog.Params{SizeBytes: 1 << 20, Sink: "file", SinkPath: "/no/such/dir"}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/no/such/dir")
}

// A fixed-duration thread stops at the first chunk boundary at or after the
// deadline, never before, and records the work of every chunk it ran. The
// clock is a fake one that each chunk moves on by 3 ms, so the test says
// exactly where it must stop, whatever the machine's load.
func TestUntilDeadlineStopsWithinOneChunk(t *testing.T) {
	var clock, cpu int64
	th := &thread{deadline: 100e6, mono: func() int64 { return clock }, cpuClock: func() int64 { return cpu }, done: make(chan struct{}), cpus: newCPUSet(1)}
	chunks := 0
	require.NoError(t, untilDeadline(th, 1000, func(n uint64) {
		assert.Equal(t, uint64(1000), n)
		chunks++
		clock += 3e6
		cpu += 2e6
	}))
	require.Len(t, th.spans, 1)
	s := th.spans[0]
	assert.Equal(t, 34, chunks, "33 chunks end at 99 ms, before the deadline; the 34th ends at 102 ms")
	assert.Equal(t, int64(102e6), s.end)
	assert.Less(t, s.end-th.deadline, int64(3e6), "stopped within one chunk of the deadline")
	assert.Equal(t, float64(34*1000), s.work)
	assert.Equal(t, int64(34*2e6), s.cpuNs, "the CPU time of every chunk, and none of anything else")
}

// A real fixed-duration fp cell: every thread runs to the deadline (not a
// loop count), no thread ends before it, the work is whole chunks, and the
// fraction done follows the clock.
func TestRunFPForADuration(t *testing.T) {
	prog := &Progress{}
	const d = 60 * time.Millisecond
	res, err := Run(context.Background(), Params{Workload: catalog.FP, QoS: qos.Default, Threads: 2, Params: catalog.Params{Duration: d}}, prog)
	require.NoError(t, err)
	require.Len(t, res.Records, 2)
	chunk := float64(loopChunk / durationChunkDiv)
	for _, r := range res.Records {
		assert.GreaterOrEqual(t, r.EndNs, int64(d), "thread %d ended before the deadline", r.Index)
		assert.Positive(t, r.Work)
		assert.Zero(t, math.Mod(r.Work, chunk), "work is whole chunks")
		assert.InEpsilon(t, r.Work/(float64(r.EndNs-r.StartNs)/1e9), r.Rate, 1e-12)
		assertCPUTime(t, r)
	}
	assert.Equal(t, 1.0, prog.Fraction(), "a finished duration cell is all done")
}

func TestValidate(t *testing.T) {
	cases := []struct {
		p   Params
		msg string
	}{
		{Params{Workload: "nope", QoS: qos.Default, Threads: 1, Params: catalog.Params{Loops: 1}}, `unknown workload "nope"`},
		{Params{Workload: catalog.FP, QoS: 3, Threads: 1, Params: catalog.Params{Loops: 1}}, "unknown QoS class 3"},
		{Params{Workload: catalog.FP, QoS: qos.Default, Threads: 0, Params: catalog.Params{Loops: 1}}, "0 threads: allowed 1..1024"},
		{Params{Workload: catalog.Procs, QoS: qos.Default, Threads: 300, Params: catalog.Params{Loops: 1}}, "300 processes: allowed 1..256"},
		{Params{Workload: catalog.FP, QoS: qos.Default, Threads: 1, Params: catalog.Params{Loops: catalog.MaxLoops + 1}}, "loops: allowed 1.."},
		{Params{Workload: catalog.Pi, QoS: qos.Default, Threads: 4, Params: catalog.Params{Loops: 3}}, "3 pi iterations for 4 threads"},
		{Params{Workload: catalog.Compress, QoS: qos.Default, Threads: 1, Params: catalog.Params{SizeBytes: 0}}, "size 0 bytes"},
		{Params{Workload: catalog.Compress, QoS: qos.Default, Threads: 1, Params: catalog.Params{SizeBytes: 10, Codec: "rar"}}, `"rar"`},
		{Params{Workload: catalog.Compress, QoS: qos.Default, Threads: 1, Params: catalog.Params{SizeBytes: 10, Sink: "tape"}}, `"tape"`},
		{Params{Workload: catalog.Compress, QoS: qos.Default, Threads: 1, Params: catalog.Params{SizeBytes: 10, Level: 99}}, "99"},
		{Params{Workload: catalog.FP, QoS: qos.Default, Threads: 1, Params: catalog.Params{Loops: 5, Duration: time.Second}}, "5 loops and a duration of 1s: give one, not both"},
		{Params{Workload: catalog.FP, QoS: qos.Default, Threads: 1, Params: catalog.Params{Duration: time.Millisecond}}, "duration 1ms: allowed 10ms..1h0m0s"},
		{Params{Workload: catalog.FP, QoS: qos.Default, Threads: 1, Params: catalog.Params{Duration: 2 * time.Hour}}, "duration 2h0m0s: allowed 10ms..1h0m0s"},
		{Params{Workload: catalog.Pi, QoS: qos.Default, Threads: 1, Params: catalog.Params{Duration: time.Second}}, "pi does not take a duration: allowed for fp, int, mmul"},
		{Params{Workload: catalog.Compress, QoS: qos.Default, Threads: 1, Params: catalog.Params{SizeBytes: 10, Duration: time.Second}}, "compress does not take a duration"},
	}
	for _, c := range cases {
		err := c.p.WithDefaults().Validate()
		require.Error(t, err, c.msg)
		assert.Contains(t, err.Error(), c.msg)
	}
	assert.NoError(t, Params{Workload: catalog.FP, QoS: qos.Default, Threads: 1, Params: catalog.Params{Loops: 1}}.Validate())
}

func TestCheckMemory(t *testing.T) {
	assert.NoError(t, checkMemory(1<<20, catalog.Compress))
	err := checkMemory(math.MaxInt64, catalog.Compress)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "held in memory")
}

func TestCPUSet(t *testing.T) {
	s := newCPUSet(4)
	for _, c := range []int{3, 0, 65, 3, -1, 1 << 20} {
		s.add(c)
	}
	assert.Equal(t, []int{0, 3}, s.list(), "out-of-range CPUs are ignored")
	s = newCPUSet(130)
	s.add(129)
	s.add(64)
	assert.Equal(t, []int{64, 129}, s.list())
}

// A codec thread's record is the cell's clock read just before Run and just
// after it returns. The clock here is the real one, but the first reading
// comes late, as when the thread loses its CPU at the start's clock read (a
// background thread under contention): the record's end must still be no
// later than the instant the test reads after the call returns.
func TestCodecRecordIsTheCellClockAroundRun(t *testing.T) {
	p := Params{Workload: catalog.Compress, QoS: qos.Default, Threads: 1, Seed: 1, Params: catalog.Params{SizeBytes: 1 << 20, Sink: "null"}}.WithDefaults()
	j, err := codecPlan(p).NewJob(0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	require.NoError(t, j.Prepare(context.Background()))

	// The thread's CPU clock is the calling OS thread's: stay on one, as
	// a measuring thread does.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const late = 200 * time.Millisecond
	cellStart := monoNow()
	reads := 0
	// Each clock read is logged: the thread's CPU clock must be read just
	// outside the cell's clock, never between its two reads.
	var order []string
	th := &thread{cellStart: cellStart, ctx: context.Background(), done: make(chan struct{}), cpus: newCPUSet(1)}
	th.mono = func() int64 {
		order = append(order, "cell")
		if reads++; reads == 1 {
			time.Sleep(late)
		}
		return monoNow()
	}
	th.cpuClock = func() int64 {
		order = append(order, "cpu")
		return threadCPUNow()
	}
	before := time.Now()
	res, codecNs, err := measureCodec(th, j, p.Workload)
	after := monoNow() - cellStart
	elapsed := time.Since(before)
	require.NoError(t, err)
	require.Len(t, th.spans, 1)
	s := th.spans[0]
	assert.Equal(t, 2, reads, "one clock reading before Run, one after")
	assert.Equal(t, []string{"cpu", "cell", "cell", "cpu"}, order, "the CPU clock is read just outside the interval")
	assert.Positive(t, s.cpuNs, "the codec's CPU time is the thread's")
	assert.Equal(t, p.Workload, s.phase)
	assert.Equal(t, float64(1<<20), s.work)
	assert.GreaterOrEqual(t, s.start, int64(late), "the start is the late reading")
	assert.LessOrEqual(t, s.end, after, "the record ends before the test's own reading after the call")
	assert.Less(t, s.start, s.end)
	assert.Positive(t, codecNs)
	assert.Less(t, codecNs, elapsed.Nanoseconds(), "the codec phase lies within the call (both on Go's clock)")
	assert.Equal(t, int64(1<<20), res.BytesIn)
}

// The memory the GC's limit is set from is the runtime's own account of
// what it mapped, as ReadMemStats says it, read without stopping the world.
func TestRuntimeSysIsMemStatsSys(t *testing.T) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	got := runtimeSys()
	assert.InEpsilon(t, float64(ms.Sys), float64(got), 0.05, "ReadMemStats %d, metrics %d", ms.Sys, got)
}
