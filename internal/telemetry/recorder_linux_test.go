package telemetry

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// BenchmarkProcProbeSample is the cost of one sample of this machine
// following four threads. %core-at-100ms is that cost as a share of one
// core when paid every 100 ms.
func BenchmarkProcProbeSample(b *testing.B) {
	pr, err := newProcProbe(procOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer pr.Close()
	var refs []ThreadRef
	for i := range 4 {
		tid, end := lockedThreadB(b)
		defer end()
		refs = append(refs, ThreadRef{PID: os.Getpid(), TID: tid, Role: "worker " + strconv.Itoa(i)})
	}
	ctx := context.Background()
	if _, err := pr.Sample(ctx, refs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s, err := pr.Sample(ctx, refs)
		if err != nil || len(s.Threads) != len(refs) {
			b.Fatalf("sample: %v, %d threads, notes %q", err, len(s.Threads), s.Notes)
		}
	}
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(100*time.Millisecond)*100, "%core-at-100ms")
}

// lockedThreadB parks a goroutine on an OS thread of its own, as a measured
// worker would be, and returns its thread id.
func lockedThreadB(b *testing.B) (tid int, end func()) {
	tids := make(chan int)
	quit := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		tids <- unix.Gettid()
		<-quit
	}()
	return <-tids, func() { close(quit) }
}

// BenchmarkRecorder records this machine at the default 100 ms for
// QOSLAB_TELEMETRY_BENCH_SECONDS (default 2) while
// QOSLAB_TELEMETRY_BENCH_SPINNERS (default 2) goroutines spin on threads of
// their own and are followed, and reports the schedule kept and the CPU it
// cost. scripts/bench-telemetry.sh runs it for 20 s and checks the goals;
// nothing here asserts timing, which a loaded machine would make flaky.
//
// sampler-%core is the sampling thread's own CPU time over the wall time.
// rest-%core is the whole process's CPU time less the spinners' (each
// measured on its own thread, over the same window): the sampler plus what it
// makes the Go runtime do (timers, handing it a P), plus the test harness,
// an upper bound.
//
// Run it with GOMAXPROCS above the spinners, as the agent must run with
// GOMAXPROCS above its workers: with every P held by a spinner the sampling
// goroutine waits for the Go scheduler to preempt one (10 ms and more), and
// the schedule shows it.
func BenchmarkRecorder(b *testing.B) {
	seconds := envFloat(b, "QOSLAB_TELEMETRY_BENCH_SECONDS", 2)
	spinners := int(envFloat(b, "QOSLAB_TELEMETRY_BENCH_SPINNERS", 2))
	for range b.N {
		pr, err := newProcProbe(procOptions{})
		if err != nil {
			b.Fatal(err)
		}
		// Each spinner reads its thread's CPU clock when told to start
		// (after the process clock is read) and when told to stop (before
		// it is read again), so both cover the same window.
		var begin, stop atomic.Bool
		spun := make(chan time.Duration, spinners)
		tids := make(chan int, spinners)
		for range spinners {
			go func() {
				runtime.LockOSThread()
				tids <- unix.Gettid()
				for !begin.Load() {
				}
				t0 := threadCPUTime()
				for !stop.Load() {
				}
				spun <- threadCPUTime() - t0
			}()
		}
		var refs []ThreadRef
		for i := range spinners {
			refs = append(refs, ThreadRef{PID: os.Getpid(), TID: <-tids, Role: "spinner " + strconv.Itoa(i)})
		}

		proc0 := processCPUTime(b)
		begin.Store(true)
		start := time.Now()
		r := StartRecorder(context.Background(), pr, RecorderOptions{
			CellStart: start,
			Threads:   func() []ThreadRef { return refs },
		})
		time.Sleep(time.Duration(seconds * float64(time.Second)))
		samples, st := r.Stop()
		wall := time.Since(start)
		stop.Store(true)
		var spinCPU time.Duration
		for range spinners {
			spinCPU += <-spun
		}
		procCPU := processCPUTime(b) - proc0 - spinCPU
		pr.Close()

		withBusy := 0
		for _, s := range samples {
			for _, t := range s.Threads {
				if t.Busy != nil {
					withBusy++
				}
			}
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(float64(st.Samples), "samples")
		b.ReportMetric(float64(withBusy)/float64(max(1, spinners)), "thread-rates")
		b.ReportMetric(float64(st.CPUTime)/float64(wall)*100, "sampler-%core")
		b.ReportMetric(float64(procCPU)/float64(wall)*100, "rest-%core")
		b.ReportMetric(st.IntervalsWithin10ms*100, "%within-10ms")
		b.ReportMetric(ms(st.P50), "p50-jitter-ms")
		b.ReportMetric(ms(st.P95), "p95-jitter-ms")
		b.ReportMetric(ms(st.Max), "max-jitter-ms")
	}
}

func processCPUTime(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

func envFloat(b *testing.B, name string, def float64) float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		b.Fatalf("%s=%q: want a number", name, v)
	}
	return f
}

// tidProbe is a Probe that notes the thread it samples on.
type tidProbe struct{ tid atomic.Int64 }

func (p *tidProbe) Name() string { return "tid" }
func (p *tidProbe) Close() error { return nil }
func (p *tidProbe) Sample(context.Context, []ThreadRef) (Sample, error) {
	p.tid.Store(int64(unix.Gettid()))
	return Sample{Sampler: p.Name()}, nil
}

// A sampler thread that took a class of its own never goes back to Go's
// pool: it ends with its goroutine, so no other goroutine ever runs at that
// class, whatever class the thread had before (under nice 10 it was none
// of the five and could not be restored), and it forks nothing, so its end
// takes no child with it.
func TestSamplerThreadWithAClassEnds(t *testing.T) {
	// The runtime never ends the main thread (it parks it for good
	// instead), so a recording that lands there is done again; the next
	// cannot land there.
	want := "sampler thread: utility asked, utility applied (SCHED_BATCH nice=10 uclamp=" + samplerUclamp(t) + ")"
	var tid int64
	for range 3 {
		p := &tidProbe{}
		r := StartRecorder(context.Background(), p, RecorderOptions{Interval: time.Millisecond, Class: qos.Utility})
		require.Eventually(t, func() bool { return p.tid.Load() != 0 }, 10*time.Second, time.Millisecond)
		samples, _ := r.Stop()
		require.NotEmpty(t, samples)
		require.Contains(t, samples[0].Notes, want)
		if tid = p.tid.Load(); tid != int64(os.Getpid()) {
			break
		}
	}
	require.NotEqual(t, int64(os.Getpid()), tid, "a recording off the main thread")
	task := "/proc/self/task/" + strconv.FormatInt(tid, 10)
	assert.Eventually(t, func() bool {
		_, err := os.Stat(task)
		return os.IsNotExist(err)
	}, 10*time.Second, 5*time.Millisecond, "the sampler's thread %d ended", tid)
}

// samplerUclamp is how a Utility thread's clamps read back on this kernel.
func samplerUclamp(t *testing.T) string {
	t.Helper()
	out := make(chan string, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the class ends with the thread
		out <- qos.ApplySelf(qos.Utility).Detail
	}()
	_, uc, found := strings.Cut(<-out, "uclamp=")
	require.True(t, found)
	return uc
}
