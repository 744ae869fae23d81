package codec

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func generated(t testing.TB, size int, offset int64, seed uint64, ratio float64) []byte {
	t.Helper()
	b := make([]byte, size)
	require.NoError(t, Generate(b, offset, seed, ratio))
	return b
}

// zstdDefaultRatio is what the calibration targets: klauspost zstd at its
// default level, one stream.
func zstdDefaultRatio(t testing.TB, data []byte) float64 {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	require.NoError(t, err)
	return float64(len(data)) / float64(len(enc.EncodeAll(data, nil)))
}

func TestGenerateIsDeterministic(t *testing.T) {
	for _, ratio := range []float64{1, DefaultRatio, 7} {
		t.Run(fmt.Sprint(ratio), func(t *testing.T) {
			a := sha256.Sum256(generated(t, 1<<20, 0, 42, ratio))
			b := sha256.Sum256(generated(t, 1<<20, 0, 42, ratio))
			assert.Equal(t, a, b)
		})
	}
}

func TestGenerateDifferentSeedsDiffer(t *testing.T) {
	a := generated(t, 1<<20, 0, 1, DefaultRatio)
	b := generated(t, 1<<20, 0, 2, DefaultRatio)
	assert.NotEqual(t, sha256.Sum256(a), sha256.Sum256(b))
	// Not just somewhere: every block differs.
	for off := 0; off < len(a); off += generateBlockSize {
		assert.NotEqual(t, a[off:off+generateBlockSize], b[off:off+generateBlockSize], "block at %d", off)
	}
}

func TestGenerateBlocksDiffer(t *testing.T) {
	// Blocks come from (seed, index): no block may repeat another, or a
	// compressor would find whole-block matches the model never planned.
	b := generated(t, 8*generateBlockSize, 0, 9, DefaultRatio)
	seen := map[[32]byte]int{}
	for i := range 8 {
		h := sha256.Sum256(b[i*generateBlockSize : (i+1)*generateBlockSize])
		prev, dup := seen[h]
		assert.False(t, dup, "block %d repeats block %d", i, prev)
		seen[h] = i
	}
}

func TestGenerateSplitEqualsWhole(t *testing.T) {
	const size = 5*generateBlockSize + 1234
	span := func(from, to, step int) []int {
		var cuts []int
		for c := from; c < to; c += step {
			cuts = append(cuts, c)
		}
		return cuts
	}
	for _, ratio := range []float64{1, 1.5, DefaultRatio, maxRatio} {
		whole := generated(t, size, 0, 7, ratio)
		cases := []struct {
			name string
			cuts []int
		}{
			{"block aligned", []int{generateBlockSize, 3 * generateBlockSize}},
			{"unaligned", []int{1, 999, generateBlockSize + 5, 4*generateBlockSize - 1}},
			{"within one block", []int{100, 101, 5000}},
			{"every 7777 bytes", span(7777, size, 7777)},
			{"every 3 bytes at the start", span(3, 3000, 3)},
			{"single bytes across a block boundary", span(2*generateBlockSize-20, 2*generateBlockSize+20, 1)},
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("ratio %g %s", ratio, c.name), func(t *testing.T) {
				pieces := make([]byte, size)
				start := 0
				for _, cut := range append(c.cuts, size) {
					require.NoError(t, Generate(pieces[start:cut], int64(start), 7, ratio))
					start = cut
				}
				assert.Equal(t, sha256.Sum256(whole), sha256.Sum256(pieces))
			})
		}
	}
}

func TestGenerateFarOffset(t *testing.T) {
	// A part deep in a large file is the same whether generated alone or
	// as the tail of a longer range.
	const offset = 3<<30 + 12345
	tail := generated(t, 100_000, offset, 5, DefaultRatio)
	longer := generated(t, 200_000, offset-100_000, 5, DefaultRatio)
	assert.Equal(t, longer[100_000:], tail)
}

func TestGenerateRatioCalibration(t *testing.T) {
	const size = 8 << 20
	measure := func(ratio float64) float64 {
		return zstdDefaultRatio(t, generated(t, size, 0, 3, ratio))
	}

	t.Run("ratio 1 is incompressible", func(t *testing.T) {
		assert.Less(t, measure(1), 1.001)
	})
	t.Run("asked ratios are met within 20%", func(t *testing.T) {
		for _, want := range []float64{1.5, 2, DefaultRatio, 5, 8} {
			got := measure(want)
			assert.InEpsilon(t, want, got, 0.2, "asked %g, zstd achieved %.3f", want, got)
		}
	})
	t.Run("monotonic", func(t *testing.T) {
		low, mid, high := measure(1.5), measure(DefaultRatio), measure(6)
		assert.Less(t, low, mid)
		assert.Less(t, mid, high)
	})
}

func TestCalibrationTableIsIncreasing(t *testing.T) {
	for i := 1; i < len(calibration); i++ {
		assert.Greater(t, calibration[i].knob, calibration[i-1].knob, "knob at row %d", i)
		assert.Greater(t, calibration[i].ratio, calibration[i-1].ratio, "ratio at row %d", i)
	}
	assert.Greater(t, calibration[len(calibration)-1].ratio, maxRatio, "the table must reach MaxRatio")
}

// The calibration table is what the model and this klauspost give now, at a
// few of its rows (measuring all of them takes a while): after changing the
// model or upgrading klauspost, go run ./scripts/calibrate prints the table
// afresh.
func TestCalibrationTableIsMeasured(t *testing.T) {
	for _, row := range []int{0, 10, 20, 30, len(calibration) - 1} {
		p := calibration[row]
		got, err := ModelRatio(p.knob, 16<<20)
		require.NoError(t, err)
		assert.InEpsilon(t, p.ratio, got, 0.002, "knob %.3f: the table says %.3f, the model gives %.3f now: go run ./scripts/calibrate", p.knob, p.ratio, got)
	}
	_, err := ModelRatio(1.5, 1)
	assert.ErrorContains(t, err, "knob 1.5 (want 0 to 1)")
}

func TestCheckRatio(t *testing.T) {
	cases := []struct {
		ratio float64
		ok    bool
	}{
		{1, true}, {DefaultRatio, true}, {maxRatio, true},
		{0, false}, {0.99, false}, {-3, false}, {maxRatio + 0.01, false},
	}
	for _, c := range cases {
		err := checkRatio(c.ratio)
		if c.ok {
			assert.NoError(t, err, "ratio %g", c.ratio)
			continue
		}
		require.Error(t, err, "ratio %g", c.ratio)
		assert.Contains(t, err.Error(), fmt.Sprint(c.ratio))
		assert.Contains(t, err.Error(), fmt.Sprint(maxRatio))
		assert.Error(t, Generate(make([]byte, 10), 0, 1, c.ratio), "Generate must refuse ratio %g", c.ratio)
	}
}

func TestGenerateRefusesNegativeOffset(t *testing.T) {
	err := Generate(make([]byte, 10), -1, 1, DefaultRatio)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-1")
}

func TestGenerateAllocatesNothingPerBlock(t *testing.T) {
	b := make([]byte, 4*generateBlockSize)
	allocs := testing.AllocsPerRun(5, func() {
		_ = Generate(b, 2*generateBlockSize, 1, DefaultRatio)
	})
	assert.Zero(t, allocs)
}

func BenchmarkGenerate(b *testing.B) {
	for _, ratio := range []float64{1, 1.5, DefaultRatio, 6, maxRatio} {
		b.Run(fmt.Sprintf("ratio=%g", ratio), func(b *testing.B) {
			buf := make([]byte, 16<<20)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				_ = Generate(buf, 0, 1, ratio)
			}
		})
	}
}
