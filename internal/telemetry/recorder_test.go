package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingProbe is a Probe that numbers its samples, passes the thread refs
// through, and fails when told to. Its samples always carry rates, as a probe
// primed by an earlier recording's does.
type countingProbe struct {
	calls  atomic.Int64
	failOn int64 // the call (1-based) that returns an error; 0 for none
}

func (p *countingProbe) Name() string { return "counting" }
func (p *countingProbe) Close() error { return nil }

func (p *countingProbe) Sample(ctx context.Context, refs []ThreadRef) (Sample, error) {
	n := p.calls.Add(1)
	if n == p.failOn {
		return Sample{}, errors.New("counter unreadable")
	}
	s := Sample{Sampler: p.Name(), IntervalNs: 1, CPUs: []CPU{{ID: int(n), Busy: Float(0.5), MHz: Float(3000)}}, PackageW: Float(9)}
	for _, r := range refs {
		s.Threads = append(s.Threads, Thread{TID: r.TID, Role: r.Role, Busy: Float(1)})
	}
	return s, nil
}

func waitCalls(t *testing.T, p *countingProbe, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return p.calls.Load() >= n }, 10*time.Second, time.Millisecond)
}

func TestRecorderStop(t *testing.T) {
	p := &countingProbe{failOn: 2}
	var mu sync.Mutex
	var refs []ThreadRef
	register := func(r ThreadRef) {
		mu.Lock()
		defer mu.Unlock()
		refs = append(refs, r)
	}
	cellStart := time.Now().Add(-time.Second)
	r := StartRecorder(context.Background(), p, RecorderOptions{
		Interval:  2 * time.Millisecond,
		CellStart: cellStart,
		Threads: func() []ThreadRef {
			mu.Lock()
			defer mu.Unlock()
			return append([]ThreadRef(nil), refs...)
		},
		Stamp: func(s *Sample) { s.Cell, s.Repeat, s.Target, s.View = "host fp qos=9 threads=1", 2, "host", ViewHost },
	})
	waitCalls(t, p, 3)
	register(ThreadRef{PID: 1, TID: 11, Role: "worker 0"})
	waitCalls(t, p, 6)
	samples, stats := r.Stop()
	calls := p.calls.Load()
	time.Sleep(10 * time.Millisecond)
	assert.Equal(t, calls, p.calls.Load(), "no sample after Stop returns")

	require.GreaterOrEqual(t, len(samples), 6)
	assert.Len(t, samples, int(calls))
	assert.Equal(t, len(samples), stats.Samples)
	assert.Equal(t, 2*time.Millisecond, stats.Target)
	assert.GreaterOrEqual(t, stats.Max, stats.P95)
	assert.GreaterOrEqual(t, stats.P95, stats.P50)
	for i, s := range samples {
		assert.Equal(t, "host fp qos=9 threads=1", s.Cell, "sample %d stamped", i)
		assert.Equal(t, 2, s.Repeat)
		assert.Equal(t, ViewHost, s.View)
		assert.Equal(t, "counting", s.Sampler)
		assert.GreaterOrEqual(t, s.TNs, int64(time.Second), "sample %d: TNs counts from the cell's start", i)
		if i == 1 {
			assert.Contains(t, s.Notes, "counting sample: counter unreadable", "a probe error is a note")
			continue
		}
		require.Len(t, s.CPUs, 1)
		assert.Equal(t, i+1, s.CPUs[0].ID, "samples in the order taken")
		if i > 0 {
			assert.Greater(t, s.TNs, samples[i-1].TNs, "sample %d", i)
		}
	}
	assert.Empty(t, samples[0].Threads)
	last := samples[len(samples)-1]
	assert.Equal(t, []Thread{{TID: 11, Role: "worker 0", Busy: Float(1)}}, last.Threads, "a thread registered mid-run is followed")

	// The first sample primes: rates the probe carried over from before
	// the recording are dropped, the frequency stays.
	assert.Zero(t, samples[0].IntervalNs)
	assert.Nil(t, samples[0].PackageW)
	assert.Equal(t, []CPU{{ID: 1, MHz: Float(3000)}}, samples[0].CPUs)
	assert.Equal(t, int64(1), last.IntervalNs)
	assert.Equal(t, Float(9), last.PackageW)

	again, _ := r.Stop()
	assert.Equal(t, samples, again, "Stop twice returns the same samples")
}

func TestRecorderStopsOnContextCancel(t *testing.T) {
	p := &countingProbe{}
	ctx, cancel := context.WithCancel(context.Background())
	r := StartRecorder(ctx, p, RecorderOptions{Interval: time.Millisecond})
	waitCalls(t, p, 3)
	cancel()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("recorder still running after its context was cancelled")
	}
	samples, stats := r.Stop()
	assert.Equal(t, int(p.calls.Load()), len(samples), "no final sample after a cancel")
	assert.Equal(t, len(samples), stats.Samples)
}

func TestRecorderDefaultsAndShortStop(t *testing.T) {
	p := &countingProbe{}
	start := time.Now()
	r := StartRecorder(context.Background(), p, RecorderOptions{})
	waitCalls(t, p, 1)
	samples, stats := r.Stop()
	assert.Equal(t, DefaultIntervalMs*time.Millisecond, stats.Target)
	if time.Since(start) < DefaultIntervalMs*time.Millisecond/4 {
		// Stopped well within the first interval: the priming sample
		// alone, no sliver of an interval after it.
		assert.Len(t, samples, 1)
	}
	assert.Zero(t, stats.IntervalsWithin10ms, "no interval to judge")
	assert.GreaterOrEqual(t, samples[0].TNs, int64(0))
}

func TestJitterStats(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		intervals []time.Duration
		want      RecorderStats
	}{
		{name: "none", want: RecorderStats{Target: 100 * ms}},
		{
			name:      "on time",
			intervals: []time.Duration{100 * ms, 100 * ms},
			want:      RecorderStats{Target: 100 * ms, IntervalsWithin10ms: 1},
		},
		{
			// Deviations sorted: 0 0 5 10 15; 10 ms is within.
			name:      "mixed",
			intervals: []time.Duration{100 * ms, 115 * ms, 105 * ms, 90 * ms, 100 * ms},
			want:      RecorderStats{Target: 100 * ms, IntervalsWithin10ms: 0.8, P50: 5 * ms, P95: 15 * ms, Max: 15 * ms},
		},
		{
			// A skipped tick: the interval spans two periods.
			name:      "skipped tick",
			intervals: append(repeatDuration(100*ms, 19), 200*ms),
			want:      RecorderStats{Target: 100 * ms, IntervalsWithin10ms: 0.95, P50: 0, P95: 0, Max: 100 * ms},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, jitterStats(tc.intervals, 100*ms))
		})
	}
}

func repeatDuration(d time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestNearestRank(t *testing.T) {
	sorted := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.5, 5}, {0.95, 10}, {0.9, 9}, {1, 10}} {
		assert.Equal(t, tc.want, nearestRank(sorted, tc.q), fmt.Sprint(tc.q))
	}
}

// A sampler given a class says in its first sample what it got, so a run
// records what the sampling thread was asked and applied.
func TestRecorderClassNoted(t *testing.T) {
	p := &countingProbe{}
	r := StartRecorder(context.Background(), p, RecorderOptions{Interval: time.Millisecond, Class: qos.Utility})
	waitCalls(t, p, 2)
	samples, _ := r.Stop()
	require.NotEmpty(t, samples)
	require.NotEmpty(t, samples[0].Notes)
	assert.Contains(t, samples[0].Notes[len(samples[0].Notes)-1], "sampler thread: utility asked")
	for _, s := range samples[1:] {
		for _, n := range s.Notes {
			assert.NotContains(t, n, "sampler thread", "said once")
		}
	}

	r = StartRecorder(context.Background(), p, RecorderOptions{Interval: time.Millisecond})
	samples, _ = r.Stop()
	for _, n := range samples[0].Notes {
		assert.NotContains(t, n, "sampler thread", "no class asked, none noted")
	}
}
