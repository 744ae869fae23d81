package workload

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/qoslab/qoslab/internal/qos"
)

// span is one timed interval of a thread, in ns since the cell began, and
// the CPU time the thread consumed in it (0: not recorded).
type span struct {
	phase      string
	start, end int64
	work       float64
	cpuNs      int64
}

// thread is what a measured body sees: its index, the cell's clock, and the
// between-chunks hook. Everything in it is allocated before the cell starts.
type thread struct {
	index     int
	cellStart int64
	// deadline ends a fixed-duration cell: ns since the cell began, the
	// same for every thread; 0 for a fixed amount of work.
	deadline int64
	// mono is the clock (monoNow; tests give their own).
	mono func() int64
	// cpuClock is the thread's own CPU clock (threadCPUNow; tests give
	// their own), read just outside each measured interval.
	cpuClock func() int64
	ctx      context.Context
	done     <-chan struct{}
	progress *Progress
	cpus     cpuSet
	spans    []span
	// began, setUp and classed are when the thread's goroutine started,
	// finished its set-up and had its class applied (CLOCK_MONOTONIC):
	// the cell's Phases, outside its measured interval.
	began, setUp, classed int64
}

// now is ns since the cell began.
func (t *thread) now() int64 { return t.mono() - t.cellStart }

// between runs between chunks of measured work, never inside a kernel: it notes
// the CPU, adds to progress and reports whether the cell was cancelled.
func (t *thread) between(n uint64) bool {
	t.cpus.sample()
	t.progress.add(n)
	select {
	case <-t.done:
		return false
	default:
		return true
	}
}

// mark is where a measured interval began: the thread's CPU clock and the
// cell's clock, read in that order.
type mark struct{ cpu, start int64 }

// begin opens a measured interval: the thread's CPU clock first, then the
// cell's clock, so the CPU clock's read (a system call on Linux) lies
// before the interval, not in it.
func (t *thread) begin() mark {
	cpu := t.cpuClock()
	return mark{cpu: cpu, start: t.now()}
}

// record keeps the interval begun at m and ended at end, the cell's clock
// as the caller read it last, with the work done in it. Its first act is
// to read the thread's CPU clock, so the interval ends where it did and
// its CPU time spans it whole; only the two clock reads outside it are
// counted beyond it (about a microsecond).
func (t *thread) record(phase string, m mark, end int64, work float64) {
	cpu := t.cpuClock()
	t.spans = append(t.spans, span{phase: phase, start: m.start, end: end, work: work, cpuNs: cpuSpent(m.cpu, cpu)})
}

// threadJob is one workload's per-thread code. setup runs on the thread
// before its class is applied (untimed: generating input at background class
// under contention would take all day); measure runs after every thread is
// ready and records its own spans; check runs after every thread has
// finished, on the caller's goroutine, not on the classed threads (untimed),
// and may verify results; cleanup always runs last.
type threadJob struct {
	setup   func(t *thread) error
	measure func(t *thread) error
	check   func(t *thread) error
	cleanup func(t *thread)
}

// runThreads runs n threads of job at class c: each goroutine locks its OS
// thread for good (so the class dies with the thread), sets up, applies c,
// waits for every other thread, and only then is the cell's clock started.
func runThreads(ctx context.Context, n int, c qos.Class, prog *Progress, job threadJob) ([]Record, error) {
	return runThreadsFor(ctx, n, c, 0, prog, job)
}

// runThreadsFor is runThreads with a deadline: a fixed-duration cell's
// length (0: fixed work), the same for every thread from the cell's start.
func runThreadsFor(ctx context.Context, n int, c qos.Class, d time.Duration, prog *Progress, job threadJob) ([]Record, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Every worker must hold a P of its own, or Go's scheduler, blind to QoS,
	// would time-slice workers that the kernel should be arbitrating; one
	// more keeps the telemetry sampler and the transport from waiting for a
	// worker to be preempted. Set before any worker starts, so the
	// stop-the-world it costs is outside the measured interval.
	if want := n + 1; runtime.GOMAXPROCS(0) < want {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(want))
	}

	threads := make([]*thread, n)
	applied := make([]qos.Applied, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var ready, finished sync.WaitGroup
	ready.Add(n)
	finished.Add(n)
	ncpu := runtime.NumCPU()
	for i := range threads {
		threads[i] = &thread{index: i, deadline: int64(d), mono: monoNow, cpuClock: threadCPUNow, ctx: ctx, done: ctx.Done(), progress: prog, cpus: newCPUSet(ncpu), spans: make([]span, 0, 4)}
	}
	spawned := monoNow()
	for _, t := range threads {
		go func() {
			defer finished.Done()
			applied[t.index], errs[t.index] = t.run(c, job, &ready, start, cancel)
		}()
	}

	ready.Wait()
	readyAt := monoNow()
	restoreGC := quietGC()
	cellStart := monoNow()
	prog.setCellStart(cellStart)
	for _, t := range threads {
		t.cellStart = cellStart
	}
	close(start)
	finished.Wait()
	finishedAt := monoNow()
	restoreGC()
	prog.setPhases(threadPhases(threads, spawned, readyAt, cellStart, finishedAt))

	checkAndCleanUp(ctx, threads, errs, job)
	return threadRecords(ctx, threads, applied, errs)
}

// run is a measuring thread's life on its goroutine: lock the OS thread for
// good (never unlocked: the goroutine's exit ends the OS thread and its
// class), register, set up, apply c, say ready, wait for the cell's start
// (or its end) and measure. It returns the class as applied and the first
// error.
func (t *thread) run(c qos.Class, job threadJob, ready *sync.WaitGroup, start <-chan struct{}, cancel context.CancelFunc) (qos.Applied, error) {
	t.began = monoNow()
	runtime.LockOSThread()
	t.progress.addWorker(Worker{PID: os.Getpid(), TID: currentTID(), Role: fmt.Sprintf("worker %d", t.index)})
	var err error
	if job.setup != nil {
		err = job.setup(t)
	}
	t.setUp = monoNow()
	applied := qos.ApplySelf(c)
	t.classed = monoNow()
	ready.Done()
	if err != nil {
		cancel()
		return applied, err
	}
	select {
	case <-start:
	case <-t.done:
		return applied, nil
	}
	return applied, job.measure(t)
}

// threadPhases are a cell's Phases from its threads' marks and the
// instants runThreadsFor took.
func threadPhases(threads []*thread, spawned, ready, cellStart, finished int64) Phases {
	ph := Phases{Spawned: spawned, Ready: ready, CellStart: cellStart, Finished: finished}
	for _, t := range threads {
		ph.SetUpNs = max(ph.SetUpNs, t.setUp-t.began)
		ph.ClassNs = max(ph.ClassNs, t.classed-t.setUp)
	}
	return ph
}

// checkAndCleanUp runs job's check on every thread that measured without
// error in a cell that was not cancelled, then its cleanup on every thread.
// Both run on the caller's goroutine, after every thread has finished.
func checkAndCleanUp(ctx context.Context, threads []*thread, errs []error, job threadJob) {
	if job.check != nil {
		for i, t := range threads {
			if errs[i] == nil && ctx.Err() == nil {
				errs[i] = job.check(t)
			}
		}
	}
	if job.cleanup != nil {
		for _, t := range threads {
			job.cleanup(t)
		}
	}
}

// threadRecords turns every thread's spans into records, and returns the
// first thread's error, or ctx's if the cell was cancelled.
func threadRecords(ctx context.Context, threads []*thread, applied []qos.Applied, errs []error) ([]Record, error) {
	var recs []Record
	var firstErr error
	for i, t := range threads {
		if errs[i] != nil && firstErr == nil {
			firstErr = fmt.Errorf("thread %d: %w", i, errs[i])
		}
		for _, s := range t.spans {
			recs = append(recs, newRecord(i, s, applied[i], t.cpus.list()))
		}
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return recs, firstErr
}

func newRecord(index int, s span, applied qos.Applied, cpus []int) Record {
	r := Record{Index: index, Phase: s.phase, StartNs: s.start, EndNs: s.end, Work: s.work, CPUNs: s.cpuNs, QoS: applied, CPUs: cpus}
	if d := s.end - s.start; d > 0 {
		r.Rate = s.work / (float64(d) / 1e9)
	}
	return r
}
