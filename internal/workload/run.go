package workload

import (
	"context"
	"fmt"

	"github.com/qoslab/qoslab/internal/qos"
)

// Defaults for the compression workloads.
const (
	DefaultRatio = 3.0
	DefaultCodec = "zstd"
	DefaultSink  = "file"
)

// WithDefaults fills what a request may leave empty.
func (p Params) WithDefaults() Params {
	if p.Workload == Compress || p.Workload == Decompress {
		if p.Ratio == 0 {
			p.Ratio = DefaultRatio
		}
		if p.Codec == "" {
			p.Codec = DefaultCodec
		}
		if p.Sink == "" {
			p.Sink = DefaultSink
		}
	}
	return p
}

// Validate checks a request against what the workloads accept and the limits
// the agent enforces; errors name the bad value and what is allowed.
func (p Params) Validate() error {
	if err := CheckName(p.Workload); err != nil {
		return err
	}
	if !p.QoS.Valid() {
		return fmt.Errorf("unknown QoS class %d: allowed %s", int(p.QoS), qos.Allowed)
	}
	maxThreads := MaxThreads
	what := "threads"
	if p.Workload == Procs {
		maxThreads, what = MaxProcs, "processes"
	}
	if p.Threads < 1 || p.Threads > maxThreads {
		return fmt.Errorf("%d %s: allowed 1..%d", p.Threads, what, maxThreads)
	}
	switch p.Workload {
	case Compress, Decompress:
		if p.Size < int64(p.Threads) || p.Size > MaxDataBytes {
			return fmt.Errorf("size %d bytes: allowed %d (one per thread) .. %d", p.Size, p.Threads, int64(MaxDataBytes))
		}
		return validateCodecParams(p)
	case Pi:
		if p.Loops < uint64(p.Threads) || p.Loops > MaxLoops {
			return fmt.Errorf("%d pi iterations for %d threads: allowed %d..%d in total", p.Loops, p.Threads, p.Threads, uint64(MaxLoops))
		}
	default:
		if p.Loops < 1 || p.Loops > MaxLoops {
			return fmt.Errorf("%d loops: allowed 1..%d per thread", p.Loops, uint64(MaxLoops))
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
	case FP:
		res, err = runFP(ctx, p, prog)
	case Int:
		res, err = runInt(ctx, p, prog)
	case MMul:
		res, err = runMMul(ctx, p, prog)
	case Pi:
		res, err = runPi(ctx, p, prog)
	case Compress, Decompress:
		res, err = runCodec(ctx, p, prog)
	case Procs:
		res, err = runProcs(ctx, p, prog)
	}
	if err != nil {
		err = fmt.Errorf("%s at %s on %d: %w", p.Workload, p.QoS, p.Threads, err)
	}
	return res, err
}
