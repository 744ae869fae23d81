package workload

import (
	"context"
	"math"

	"github.com/qoslab/qoslab/internal/workload/kernel"
)

// Chunk sizes keep each kernel call in the low milliseconds, so the work
// between chunks (getcpu, a progress counter) costs well under 0.1%.
const (
	loopChunk = 1 << 20
	mmulChunk = 1 << 10
)

// durationChunkDiv shrinks a kernel's chunk for fixed-duration cells: a
// thread checks the clock between chunks, so it stops within one chunk of
// the deadline, and a starved background thread (200x slower under
// contention) must not overrun a 1 s cell by most of a second. fp's chunk is
// then 2^17 loops: about 0.4 ms at full speed, 90 ms when starved.
const durationChunkDiv = 8

// measure runs the kernel on t: total units in chunks for a fixed amount of
// work, or chunks until t's deadline for a fixed duration.
func measure(t *thread, total, chunk uint64, kernelFn func(n uint64)) error {
	if t.deadline > 0 {
		return untilDeadline(t, max(1, chunk/durationChunkDiv), kernelFn)
	}
	return chunked(t, total, chunk, kernelFn)
}

// untilDeadline runs chunks of kernel on t until the cell's clock reaches
// t.deadline, recording one span with the work done. The clock is read
// between chunks only, never inside one.
func untilDeadline(t *thread, chunk uint64, kernelFn func(n uint64)) error {
	m := t.begin()
	var done uint64
	for {
		kernelFn(chunk)
		done += chunk
		if !t.between(chunk) {
			t.record("", m, t.now(), float64(done))
			return context.Canceled
		}
		if now := t.now(); now >= t.deadline {
			t.record("", m, now, float64(done))
			return nil
		}
	}
}

// chunked runs total units of kernel in chunks on t, recording one span.
func chunked(t *thread, total, chunk uint64, kernelFn func(n uint64)) error {
	m := t.begin()
	var done uint64
	for done < total {
		n := min(chunk, total-done)
		kernelFn(n)
		done += n
		if !t.between(n) {
			t.record("", m, t.now(), float64(done))
			return context.Canceled
		}
	}
	t.record("", m, t.now(), float64(done))
	return nil
}

func runFP(ctx context.Context, p Params, prog *Progress) (Result, error) {
	setProgress(prog, p)
	sums := make([]float64, p.Threads)
	recs, err := runThreadsFor(ctx, p.Threads, p.QoS, p.Duration, prog, threadJob{
		measure: func(t *thread) error {
			return measure(t, p.Loops, loopChunk, func(n uint64) { sums[t.index] += kernel.FP(n) })
		},
	})
	return Result{Records: recs}, err
}

func runInt(ctx context.Context, p Params, prog *Progress) (Result, error) {
	setProgress(prog, p)
	sums := make([]uint64, p.Threads)
	recs, err := runThreadsFor(ctx, p.Threads, p.QoS, p.Duration, prog, threadJob{
		measure: func(t *thread) error {
			return measure(t, p.Loops, loopChunk, func(n uint64) { sums[t.index] += kernel.Int(n) })
		},
	})
	return Result{Records: recs}, err
}

func runMMul(ctx context.Context, p Params, prog *Progress) (Result, error) {
	if err := kernel.MMulInit(); err != nil {
		return Result{}, err
	}
	setProgress(prog, p)
	type operands struct{ a, b, c kernel.Matrix16 }
	ops := make([]*operands, p.Threads)
	recs, err := runThreadsFor(ctx, p.Threads, p.QoS, p.Duration, prog, threadJob{
		setup: func(t *thread) error {
			o := &operands{}
			// The reference's A and B: every element 1.234.
			for i := range o.a {
				o.a[i], o.b[i] = 1.234, 1.234
			}
			ops[t.index] = o
			return nil
		},
		measure: func(t *thread) error {
			o := ops[t.index]
			return measure(t, p.Loops, mmulChunk, func(n uint64) { kernel.MMul(n, &o.c, &o.a, &o.b) })
		},
	})
	return Result{Records: recs, Notes: []string{"mmul kernel: " + kernel.MMulImpl()}}, err
}

// setProgress makes prog count work, or time for a fixed-duration cell.
func setProgress(prog *Progress, p Params) {
	if p.Duration > 0 {
		prog.setDuration(p.Duration)
		return
	}
	prog.setTotal(p.Loops * uint64(p.Threads))
}

func runPi(ctx context.Context, p Params, prog *Progress) (Result, error) {
	prog.setTotal(p.Loops)
	hits := make([]uint64, p.Threads)
	share := func(i int) uint64 {
		n := p.Loops / uint64(p.Threads)
		if uint64(i) < p.Loops%uint64(p.Threads) {
			n++
		}
		return n
	}
	recs, err := runThreads(ctx, p.Threads, p.QoS, prog, threadJob{
		measure: func(t *thread) error {
			rng := kernel.NewPiRNG(p.Seed, t.index)
			return chunked(t, share(t.index), loopChunk, func(n uint64) { hits[t.index] += kernel.PiHits(&rng, n) })
		},
	})
	var total, in uint64
	for i, h := range hits {
		in += h
		total += share(i)
	}
	res := Result{Records: recs}
	if err == nil && total > 0 {
		est := kernel.PiEstimate(in, total)
		res.Metrics = map[string]float64{"pi_estimate": est, "pi_error": math.Abs(est - math.Pi)}
	}
	return res, err
}
