package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOrderStatsOf(t *testing.T) {
	// Too few values for 95%: the CI is [min, max] with its own coverage,
	// 1 - 2·(1/2)^n.
	cases := []struct {
		name string
		in   []float64
		want OrderStats
	}{
		{"odd", []float64{3, 1, 2}, OrderStats{N: 3, Median: 2, Min: 1, Max: 3, CILow: 1, CIHigh: 3, CIConfidence: 0.75}},
		{"even", []float64{4, 1, 3, 2}, OrderStats{N: 4, Median: 2.5, Min: 1, Max: 4, CILow: 1, CIHigh: 4, CIConfidence: 0.875}},
		{"one", []float64{7}, OrderStats{N: 1, Median: 7, Min: 7, Max: 7, CILow: 7, CIHigh: 7, CIConfidence: 0}},
		{"nan ignored", []float64{math.NaN(), 5, 1}, OrderStats{N: 2, Median: 3, Min: 1, Max: 5, CILow: 1, CIHigh: 5, CIConfidence: 0.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := OrderStatsOf(c.in)
			assert.InDelta(t, float64(c.want.CIConfidence), float64(got.CIConfidence), 1e-12)
			got.CIConfidence = c.want.CIConfidence
			assert.Equal(t, c.want, got)
		})
	}
	empty := OrderStatsOf(nil)
	assert.Equal(t, 0, empty.N)
	assert.True(t, math.IsNaN(float64(empty.Median)))
	assert.True(t, math.IsNaN(float64(empty.CILow)))
	assert.True(t, math.IsNaN(float64(empty.CIConfidence)))

	// n=9 reaches 95% with the 2nd and 8th order statistics.
	s := OrderStatsOf([]float64{9, 1, 8, 2, 7, 3, 6, 4, 5})
	assert.Equal(t, 5.0, float64(s.Median))
	assert.Equal(t, 2.0, float64(s.CILow))
	assert.Equal(t, 8.0, float64(s.CIHigh))
	assert.InDelta(t, 492.0/512, float64(s.CIConfidence), 1e-12)
}

func TestMedianCIOrder(t *testing.T) {
	// Coverage of [x(k), x(n+1-k)] is 1 - 2·sum_{i<k} C(n,i)/2^n; k is the
	// largest with coverage >= 0.95 (checked by hand: the next k falls
	// below), or 1 when even [min, max] falls short (n <= 5).
	cases := []struct {
		n, k int
		cov  float64
	}{
		{1, 1, 0},
		{2, 1, 1 - 2*1.0/4},
		{3, 1, 1 - 2*1.0/8},
		{4, 1, 1 - 2*1.0/16},
		{5, 1, 1 - 2*1.0/32}, // 0.9375: the best 5 values can do
		{6, 1, 1 - 2*1.0/64},
		{7, 1, 1 - 2*1.0/128},  // k=2 would be 1 - 2·8/128 = 0.875
		{8, 1, 1 - 2*1.0/256},  // k=2 would be 1 - 2·9/256 = 0.930
		{9, 2, 1 - 2*10.0/512}, // 1+9
		{10, 2, 1 - 2*11.0/1024},
		{11, 2, 1 - 2*12.0/2048},
		{12, 3, 1 - 2*79.0/4096}, // 1+12+66
		{13, 3, 1 - 2*92.0/8192}, // 1+13+78; k=4 gives 0.908
		{14, 3, 1 - 2*106.0/16384},
		{15, 4, 1 - 2*576.0/32768}, // 1+15+105+455
		{16, 4, 1 - 2*697.0/65536},
		{17, 5, 1 - 2*3214.0/131072}, // 1+17+136+680+2380: 0.95096
		{18, 5, 1 - 2*4048.0/262144},
		{19, 5, 1 - 2*5036.0/524288},
		{20, 6, 1 - 2*21700.0/1048576}, // 1+20+190+1140+4845+15504
		{100, 40, 0.9647997997822952},  // the textbook x(40)..x(61); exact sum in Python
	}
	for _, c := range cases {
		k, cov := medianCIOrder(c.n, 0.95)
		assert.Equal(t, c.k, k, "n=%d", c.n)
		assert.InDelta(t, c.cov, cov, 1e-12, "n=%d", c.n)
		if c.n > 5 {
			assert.GreaterOrEqual(t, cov, 0.95, "n=%d reaches 95%%", c.n)
		}
	}
	k, cov := medianCIOrder(0, 0.95)
	assert.Equal(t, 0, k)
	assert.True(t, math.IsNaN(cov))

	// A lower confidence narrows the interval: n=9 at 80% uses x(3)..x(7)
	// (1 - 2·46/512 = 0.820).
	k, cov = medianCIOrder(9, 0.80)
	assert.Equal(t, 3, k)
	assert.InDelta(t, 1-2*46.0/512, cov, 1e-12)
}

func TestMedianCI(t *testing.T) {
	for n := 5; n <= 20; n++ {
		// n distinct values, rotated out of order: x(i) = 10·i.
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(10 * ((i+n/2)%n + 1))
		}
		k, cov := medianCIOrder(n, Confidence)
		ci := medianCI(xs, Confidence)
		assert.Equal(t, float64(10*k), float64(ci.Low), "n=%d", n)
		assert.Equal(t, float64(10*(n+1-k)), float64(ci.High), "n=%d", n)
		assert.Equal(t, cov, float64(ci.Confidence), "n=%d", n)
	}
	ci := medianCI([]float64{math.NaN()}, Confidence)
	assert.True(t, math.IsNaN(float64(ci.Low)) && math.IsNaN(float64(ci.High)) && math.IsNaN(float64(ci.Confidence)))
}

func TestTotalRate(t *testing.T) {
	// Two threads: 100 loops over 0..1 s and 100 loops over 0.5..2 s: 200 loops in 2 s.
	rate, el := totalRate([]interval{{0, 1e9, 100, 0}, {5e8, 2e9, 100, 0}})
	assert.Equal(t, int64(2e9), el)
	assert.InDelta(t, 100.0, rate, 1e-9)

	rate, el = totalRate(nil)
	assert.Zero(t, rate)
	assert.Zero(t, el)

	rate, _ = totalRate([]interval{{5, 5, 10, 0}})
	assert.Zero(t, rate, "a zero-length interval has no rate")
}

func TestBinomialHalfPMFSumsToOne(t *testing.T) {
	for _, n := range []int{1, 7, 50, 2000} {
		require.InDelta(t, 1, binomialHalfCDF(n, n), 1e-9, "n=%d", n)
	}
}
