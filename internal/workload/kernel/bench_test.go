package kernel

import "testing"

// The benchmarks call each kernel in chunks, the way the workload does, and
// report its rate. ns/op is per chunk.

const benchChunk = 1 << 20

var (
	sinkF float64
	sinkU uint64
)

func reportRate(b *testing.B, perOp float64, unit string) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)*perOp/s, unit)
	}
}

func BenchmarkFP(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkF = FP(benchChunk)
	}
	reportRate(b, benchChunk, "loops/s")
}

func BenchmarkFPRef(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkF = fpRef(benchChunk)
	}
	reportRate(b, benchChunk, "loops/s")
}

func BenchmarkInt(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkU = Int(benchChunk)
	}
	reportRate(b, benchChunk, "loops/s")
}

func BenchmarkMMul(b *testing.B) {
	if err := MMulInit(); err != nil {
		b.Fatal(err)
	}
	const n = 1 << 12
	a, m := randomMatrices(1)
	c := new(Matrix16)
	for i := 0; i < b.N; i++ {
		MMul(n, c, a, m)
	}
	reportRate(b, n, "mmul/s")
	reportRate(b, n*2*16*16*16/1e9, "GFLOP/s")
}

func BenchmarkMMulGo(b *testing.B) {
	const n = 1 << 12
	a, m := randomMatrices(1)
	c := new(Matrix16)
	for i := 0; i < b.N; i++ {
		mmulGoN(n, c, a, m)
	}
	reportRate(b, n, "mmul/s")
	reportRate(b, n*2*16*16*16/1e9, "GFLOP/s")
}

func BenchmarkPi(b *testing.B) {
	r := NewPiRNG(1, 0)
	for i := 0; i < b.N; i++ {
		sinkU += PiHits(&r, benchChunk)
	}
	reportRate(b, benchChunk, "iterations/s")
}
