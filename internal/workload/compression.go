package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/qoslab/qoslab/internal/workload/catalog"
	"github.com/qoslab/qoslab/internal/workload/codec"
)

func codecPlan(p Params) codec.Plan {
	op := codec.Compress
	if p.Workload == catalog.Decompress {
		op = codec.Decompress
	}
	return codec.Plan{
		Operation: op, Codec: p.Codec, Level: p.Level, Size: p.SizeBytes, Seed: p.Seed, Ratio: p.Ratio,
		Threads: p.Threads, Sink: codec.SinkSpec{Kind: p.Sink, Path: p.SinkPath, Root: p.SinkRoot},
	}
}

func validateCodecParams(p Params) error { return codecPlan(p).Validate() }

// runCodec measures compress or decompress: every thread works on its own part
// of the generated file as an independent stream. Generation (and for
// decompress, compressing the input) happens before the class is applied and
// the clock starts; the timed interval is the codec work, the sink writes and
// the fsync; verification happens after every thread has finished.
func runCodec(ctx context.Context, p Params, prog *Progress) (Result, error) {
	plan := codecPlan(p)
	if err := checkMemory(p.SizeBytes, p.Workload); err != nil {
		return Result{}, err
	}
	if err := plan.CheckSink(); err != nil {
		return Result{}, err
	}
	prog.setTotal(uint64(p.SizeBytes))
	jobs := make([]*codec.Job, p.Threads)
	runs := make([]codec.RunResult, p.Threads)
	codecNs := make([]int64, p.Threads)
	recs, err := runThreads(ctx, p.Threads, p.QoS, prog, threadJob{
		setup: func(t *thread) error {
			j, err := plan.NewJob(t.index)
			if err != nil {
				return err
			}
			jobs[t.index] = j
			j.Progress = func(n int64) {
				t.cpus.sample()
				t.progress.add(uint64(n))
			}
			return j.Prepare(t.ctx)
		},
		measure: func(t *thread) error {
			var err error
			runs[t.index], codecNs[t.index], err = measureCodec(t, jobs[t.index], p.Workload)
			return err
		},
		check: func(t *thread) error { return jobs[t.index].Verify(t.ctx) },
		cleanup: func(t *thread) {
			if j := jobs[t.index]; j != nil {
				_ = j.Close()
			}
		},
	})
	res := Result{Records: recs}
	if err != nil {
		return res, err
	}
	res.Metrics = codecMetrics(p, runs, codecNs)
	res.Notes = []string{codecNote(p)}
	return res, nil
}

// codecMetrics sums the threads' bytes and takes the slowest thread's codec
// and fsync phases.
func codecMetrics(p Params, runs []codec.RunResult, codecNs []int64) map[string]float64 {
	var in, out int64
	var codecMax, syncMax float64
	for i, r := range runs {
		in += r.BytesIn
		out += r.BytesOut
		codecMax = max(codecMax, float64(codecNs[i])/1e9)
		syncMax = max(syncMax, r.SyncDone.Sub(r.CodecDone).Seconds())
	}
	m := map[string]float64{
		"bytes_in": float64(in), "bytes_out": float64(out),
		"codec_seconds_max": codecMax, "fsync_seconds_max": syncMax, "verified": 1,
	}
	if p.Workload == catalog.Compress && out > 0 {
		m["compression_ratio"] = float64(in) / float64(out)
	}
	if p.Workload == catalog.Decompress && in > 0 {
		m["compression_ratio"] = float64(out) / float64(in)
	}
	return m
}

// codecNote says what the cell timed.
func codecNote(p Params) string {
	level := "default level"
	if p.Level != 0 {
		level = fmt.Sprintf("level %d", p.Level)
	}
	timed := "codec + sink writes + fsync"
	if p.Sink == codec.SinkNull {
		timed = "codec only (the null sink discards the output: nothing is written or synced)"
	}
	return fmt.Sprintf("%s %s %s, sink %s: timed = %s; output verified by CRC-32C after the clock stopped", p.Workload, p.Codec, level, p.Sink, timed)
}

// measureCodec runs j's timed call on t and records its span: the cell's
// clock read just before Run and just after it returns, so the record is
// what that one clock saw, and the thread's CPU clock just outside those
// (the codecs run on the calling thread: zstd and lz4 at concurrency 1).
// It returns Run's result and the codec phase's length, from began (Go's
// clock, read between the start and Run) to the codec's own CodecDone
// instant on that same clock.
func measureCodec(t *thread, j *codec.Job, phase string) (codec.RunResult, int64, error) {
	_, size := j.Part()
	m := t.begin()
	began := time.Now()
	res, err := j.Run(t.ctx)
	end := t.now()
	if err != nil {
		return res, 0, err
	}
	t.record(phase, m, end, float64(size))
	return res, res.CodecDone.Sub(began).Nanoseconds(), nil
}
