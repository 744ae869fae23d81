package telemetry

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/qoslab/qoslab/internal/qos"
)

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	// Interval is the sampling period; 0 is DefaultIntervalMs.
	Interval time.Duration
	// CellStart is when the cell run began: a sample's TNs is the time
	// since then, on the monotonic clock (so CellStart should come from
	// time.Now). Zero means the recorder's own start.
	CellStart time.Time
	// Threads lists the threads to follow; it may be nil. It is called
	// from the recorder's goroutine before every sample, so that workers
	// are followed from the first tick after they register, and must be
	// safe to call concurrently with whatever registers them.
	Threads func() []ThreadRef
	// Stamp fills what the probe leaves to the caller: Cell, Repeat,
	// Target, View. It may be nil.
	Stamp func(*Sample)
	// Class, when set, is given to the sampling thread, so that on a
	// contended machine it wakes on time rather than queueing behind the
	// contention; what was applied is noted in the first sample.
	Class qos.Class
}

// RecorderStats describe how well a Recorder kept its schedule and what it
// cost.
type RecorderStats struct {
	Samples int
	Target  time.Duration
	// IntervalsWithin10ms is the share (0..1) of the intervals between
	// scheduled samples that were within 10 ms of Target.
	IntervalsWithin10ms float64
	// Jitter is |interval - Target| over those intervals.
	P50, P95, Max time.Duration
	// CPUTime is the sampling goroutine's own CPU time, read on the OS
	// thread it is locked to (Linux: CLOCK_THREAD_CPUTIME_ID; 0
	// elsewhere). It leaves out the Go runtime's work of waking it.
	CPUTime time.Duration
}

// jitterWindow is the goal a sample interval is measured against.
const jitterWindow = 10 * time.Millisecond

// recorderPrealloc is how many samples a Recorder has room for before it
// grows: a minute at the default interval, which covers most cells.
const recorderPrealloc = 600

// Recorder samples a Probe at a fixed interval on a goroutine of its own
// while a cell runs.
type Recorder struct {
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	// Written by the sampling goroutine until done is closed, read after.
	samples []Sample
	stats   RecorderStats
}

// StartRecorder starts sampling p: a first, priming sample at once (without
// rates even when p was primed by an earlier recording), then one
// every o.Interval on absolute deadlines (start + k·interval), so a late
// wake-up does not push the samples after it. The loop runs until Stop or
// until ctx is done. It reads only what the probe reads, never writes, and a
// probe's error becomes a note in the sample, not the end of the recording.
//
// The sampling goroutine needs a P to run on when its timer fires. A process
// whose workers hold every P (GOMAXPROCS workers, each locked to its thread
// and running non-preemptible kernels) leaves it waiting for the Go
// scheduler's 10 ms preemption and beyond; such a process must run with
// GOMAXPROCS at least one above its workers, so that only the kernel's
// scheduler stands between a deadline and its sample.
func StartRecorder(ctx context.Context, p Probe, o RecorderOptions) *Recorder {
	r := &Recorder{stop: make(chan struct{}), done: make(chan struct{})}
	if o.Interval <= 0 {
		o.Interval = DefaultIntervalMs * time.Millisecond
	}
	go r.run(ctx, p, o)
	return r
}

// Stop ends the recording and returns the samples in the order taken, with
// the schedule's statistics. When stopped by Stop (not by ctx) a last sample
// covers the time since the previous tick, unless that is under a quarter of
// the interval, too short for tick-based rates. Stop may be called more than
// once and after ctx is done.
func (r *Recorder) Stop() ([]Sample, RecorderStats) {
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
	return r.samples, r.stats
}

func (r *Recorder) run(ctx context.Context, p Probe, o RecorderOptions) {
	defer close(r.done)
	// A thread of its own: its CPU time is then the sampler's alone, and it
	// never shares an OS thread with a measured worker (which lock theirs).
	runtime.LockOSThread()
	var classNote string
	if o.Class != qos.Unspecified {
		// The thread now has a class of its own, so it must never go back
		// to Go's pool, where another goroutine would run at that class:
		// it stays locked and ends with this goroutine. Nothing forks from
		// it, so its end takes no child with it (see childproc).
		classNote = applySamplerClass(o.Class)
	} else {
		defer runtime.UnlockOSThread()
	}
	cpu0 := threadCPUTime()

	rec := &recording{ctx: ctx, p: p, o: o, samples: make([]Sample, 0, recorderPrealloc)}
	intervals := make([]time.Duration, 0, recorderPrealloc)
	start := time.Now()
	rec.cellStart = o.CellStart
	if rec.cellStart.IsZero() {
		rec.cellStart = start
	}

	last := start
	rec.take(start)
	primeOnly(&rec.samples[0])
	if classNote != "" {
		rec.samples[0].Notes = append(rec.samples[0].Notes, classNote)
	}
	timer := time.NewTimer(o.Interval)
	defer timer.Stop()
	for k := int64(1); ; k++ {
		next := start.Add(time.Duration(k) * o.Interval)
		if now := time.Now(); !now.Before(next) {
			// The last sample overran one or more deadlines: skip to the
			// next one ahead rather than firing a burst.
			behind := int64(now.Sub(start)/o.Interval) + 1 - k
			rec.skipped += behind
			k += behind
			next = start.Add(time.Duration(k) * o.Interval)
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			r.finish(rec.samples, intervals, o.Interval, cpu0)
			return
		case <-r.stop:
			if at := time.Now(); at.Sub(last) >= o.Interval/4 {
				rec.take(at)
			}
			r.finish(rec.samples, intervals, o.Interval, cpu0)
			return
		case <-timer.C:
		}
		at := time.Now()
		intervals = append(intervals, at.Sub(last))
		last = at
		rec.take(at)
	}
}

// recording is what Recorder.run's samples are taken with, and the samples
// taken so far.
type recording struct {
	ctx       context.Context
	p         Probe
	o         RecorderOptions
	cellStart time.Time
	samples   []Sample
	// skipped counts the ticks skipped since the last sample, for its note.
	skipped int64
}

// take asks the probe for a sample of the followed threads, and stamps it
// at, relative to the cell's start. A probe's error is a note on the sample.
func (rec *recording) take(at time.Time) {
	var refs []ThreadRef
	if rec.o.Threads != nil {
		refs = rec.o.Threads()
	}
	s, err := rec.p.Sample(rec.ctx, refs)
	if err != nil {
		s.Sampler = rec.p.Name()
		s.Notes = append(s.Notes, fmt.Sprintf("%s sample: %v", rec.p.Name(), err))
	}
	if rec.skipped > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("sampler fell behind: %d ticks skipped", rec.skipped))
		rec.skipped = 0
	}
	s.TNs = int64(at.Sub(rec.cellStart))
	if rec.o.Stamp != nil {
		rec.o.Stamp(&s)
	}
	rec.samples = append(rec.samples, s)
}

// primeOnly makes a recording's first sample a priming one, as a probe's
// first is: a probe kept across cells reports rates since its previous call,
// the last sample of the cell before, which says nothing about this cell.
// What is instantaneous stays (placement, policy, frequency); rates go.
func primeOnly(s *Sample) {
	s.IntervalNs = 0
	s.PackageW, s.CPUW = nil, nil
	for i := range s.CPUs {
		s.CPUs[i].Busy = nil
	}
	for i := range s.Clusters {
		s.Clusters[i].Busy, s.Clusters[i].Power = nil, nil
	}
	for i := range s.Threads {
		s.Threads[i].Busy = nil
	}
}

func (r *Recorder) finish(samples []Sample, intervals []time.Duration, target, cpu0 time.Duration) {
	r.samples = samples
	r.stats = jitterStats(intervals, target)
	r.stats.Samples = len(samples)
	r.stats.CPUTime = threadCPUTime() - cpu0
}

// jitterStats summarizes how far each interval strayed from target: the
// share within jitterWindow, and the median, 95th percentile (nearest rank)
// and largest deviation.
func jitterStats(intervals []time.Duration, target time.Duration) RecorderStats {
	st := RecorderStats{Target: target}
	if len(intervals) == 0 {
		return st
	}
	dev := make([]time.Duration, len(intervals))
	within := 0
	for i, iv := range intervals {
		d := iv - target
		if d < 0 {
			d = -d
		}
		dev[i] = d
		if d <= jitterWindow {
			within++
		}
	}
	slices.Sort(dev)
	st.IntervalsWithin10ms = float64(within) / float64(len(dev))
	st.P50 = nearestRank(dev, 0.50)
	st.P95 = nearestRank(dev, 0.95)
	st.Max = dev[len(dev)-1]
	return st
}

// nearestRank is the q-quantile of sorted values by the nearest-rank method.
func nearestRank(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// applySamplerClass gives the calling, locked thread class c and returns
// the note for the first sample. The thread is not given its old class
// back: the class it had may be none of the five (a controller run under
// nice 10 reads back as unspecified), so it could not always be; the
// thread ends with its goroutine instead.
func applySamplerClass(c qos.Class) string {
	a := qos.ApplySelf(c)
	note := fmt.Sprintf("sampler thread: %s asked, %s applied (%s)", a.Asked, a.Applied, a.Detail)
	if a.Reason != "" {
		note += ": " + a.Reason
	}
	return note
}
