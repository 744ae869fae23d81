package workload

import (
	"context"
	"fmt"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// WithDefaults fills what a request may leave empty.
func (p Params) WithDefaults() Params {
	if catalog.IsCompression(p.Workload) {
		if p.Ratio == 0 {
			p.Ratio = catalog.DefaultRatio
		}
		if p.Codec == "" {
			p.Codec = catalog.DefaultCodec
		}
		if p.Sink == "" {
			p.Sink = catalog.DefaultSink
		}
	}
	return p
}

// Validate checks a request against what the workloads accept and the limits
// the agent enforces; errors name the bad value and what is allowed.
func (p Params) Validate() error {
	w, err := catalog.Get(p.Workload)
	if err != nil {
		return err
	}
	if !p.QoS.Valid() {
		return fmt.Errorf("unknown QoS class %d: allowed %s", int(p.QoS), qos.Allowed)
	}
	maxThreads, what := w.MaxCount()
	if p.Threads < 1 || p.Threads > maxThreads {
		return fmt.Errorf("%d %s: allowed 1..%d", p.Threads, what, maxThreads)
	}
	if p.Duration != 0 {
		if p.Loops != 0 {
			return fmt.Errorf("%d loops and a duration of %s: give one, not both", p.Loops, p.Duration)
		}
		return catalog.CheckDuration(w, p.Duration)
	}
	switch p.Workload {
	case catalog.Compress, catalog.Decompress:
		if p.SizeBytes < int64(p.Threads) || p.SizeBytes > catalog.MaxDataBytes {
			return fmt.Errorf("size %d bytes: allowed %d (one per thread) .. %d", p.SizeBytes, p.Threads, int64(catalog.MaxDataBytes))
		}
		return validateCodecParams(p)
	case catalog.Pi:
		if p.Loops < uint64(p.Threads) || p.Loops > catalog.MaxLoops {
			return fmt.Errorf("%d pi iterations for %d threads: allowed %d..%d in total", p.Loops, p.Threads, p.Threads, uint64(catalog.MaxLoops))
		}
	default:
		if p.Loops < 1 || p.Loops > catalog.MaxLoops {
			return fmt.Errorf("%d loops: allowed 1..%d per thread", p.Loops, uint64(catalog.MaxLoops))
		}
	}
	return nil
}

// Run measures one cell. Records hold what finished even when err is not nil.
func Run(ctx context.Context, p Params, prog *Progress) (Result, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	var (
		res Result
		err error
	)
	switch p.Workload {
	case catalog.FP:
		res, err = runFP(ctx, p, prog)
	case catalog.Int:
		res, err = runInt(ctx, p, prog)
	case catalog.MMul:
		res, err = runMMul(ctx, p, prog)
	case catalog.Pi:
		res, err = runPi(ctx, p, prog)
	case catalog.Compress, catalog.Decompress:
		res, err = runCodec(ctx, p, prog)
	case catalog.Procs:
		res, err = runProcs(ctx, p, prog)
	}
	if err != nil {
		err = fmt.Errorf("%s at %s on %d: %w", p.Workload, p.QoS, p.Threads, err)
	}
	return res, err
}
