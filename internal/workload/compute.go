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

// chunked runs total units of kernel in chunks on t, recording one span.
func chunked(t *thread, total, chunk uint64, kernelFn func(n uint64)) error {
	start := t.now()
	var done uint64
	for done < total {
		n := min(chunk, total-done)
		kernelFn(n)
		done += n
		if !t.between(n) {
			t.record("", start, t.now(), float64(done))
			return context.Canceled
		}
	}
	t.record("", start, t.now(), float64(done))
	return nil
}

func runFP(ctx context.Context, p Params, prog *Progress) (Result, error) {
	prog.setTotal(p.Loops * uint64(p.Threads))
	sums := make([]float64, p.Threads)
	recs, err := runThreads(ctx, p.Threads, p.QoS, prog, threadJob{
		measure: func(t *thread) error {
			return chunked(t, p.Loops, loopChunk, func(n uint64) { sums[t.index] += kernel.FP(n) })
		},
	})
	return Result{Records: recs}, err
}

func runInt(ctx context.Context, p Params, prog *Progress) (Result, error) {
	prog.setTotal(p.Loops * uint64(p.Threads))
	sums := make([]uint64, p.Threads)
	recs, err := runThreads(ctx, p.Threads, p.QoS, prog, threadJob{
		measure: func(t *thread) error {
			return chunked(t, p.Loops, loopChunk, func(n uint64) { sums[t.index] += kernel.Int(n) })
		},
	})
	return Result{Records: recs}, err
}

func runMMul(ctx context.Context, p Params, prog *Progress) (Result, error) {
	if err := kernel.MMulInit(); err != nil {
		return Result{}, err
	}
	prog.setTotal(p.Loops * uint64(p.Threads))
	type operands struct{ a, b, c kernel.Matrix16 }
	ops := make([]*operands, p.Threads)
	recs, err := runThreads(ctx, p.Threads, p.QoS, prog, threadJob{
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
			return chunked(t, p.Loops, mmulChunk, func(n uint64) { kernel.MMul(n, &o.c, &o.a, &o.b) })
		},
	})
	return Result{Records: recs, Notes: []string{"mmul kernel: " + kernel.MMulImpl()}}, err
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
