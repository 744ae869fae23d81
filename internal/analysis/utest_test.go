package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMannWhitney(t *testing.T) {
	seq := func(from, to float64) []float64 {
		var v []float64
		for x := from; x <= to; x++ {
			v = append(v, x)
		}
		return v
	}
	cases := []struct {
		name  string
		x, y  []float64
		u     float64
		p     float64
		delta float64
		exact bool
	}{
		// scipy.stats.mannwhitneyu docs, example from Shier (2004):
		// mannwhitneyu(males, females, method="exact") -> U1 17.0, p 0.1111111111111111.
		{"scipy docs exact", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 17, 0.1111111111111111, 1e-12, true},
		// R ?wilcox.test (Hollander & Wolfe, permeability data):
		// wilcox.test(x, y, alternative = "g") -> W = 35, p-value = 0.1272;
		// the exact null is symmetric, so two-sided is twice that
		// (0.2544122544 by enumeration).
		{"R docs exact", []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}, []float64{1.15, 0.88, 0.90, 0.74, 1.21}, 35, 2 * 0.1272, 1e-4, true},
		// R: wilcox.test(1:3, 4:6) -> W = 0, p-value = 0.1 (2 of 20 orderings).
		{"R separated n=3", seq(1, 3), seq(4, 6), 0, 0.1, 1e-12, true},
		// golang.org/x/perf benchmath uTestMinP[5] and [9]: the smallest
		// two-sided p of n=5 and n=9 samples, 2/C(10,5) and 2/C(18,9).
		{"benchmath min p n=5", seq(6, 10), seq(1, 5), 25, 0.007936507936507936, 1e-15, true},
		{"benchmath min p n=9", seq(1, 9), seq(10, 18), 0, 4.113533525298231e-05, 1e-15, true},
		// Ties keep the test exact, conditional on them: every choice of
		// which pooled values are x equally likely. DolphinDB's
		// mannWhitneyUTest docs use (5 1 4 3 5, 2 4 7 -1 0 4), U 11 (the
		// second sample's; ours is 30-11 = 19); coin's exact wilcox_test
		// gives one-sided p values whose smaller, doubled, is 0.5021645
		// (the normal approximation said 0.518).
		{"DolphinDB docs ties", []float64{5, 1, 4, 3, 5}, []float64{2, 4, 7, -1, 0, 4}, 19, 0.50216450216450215, 1e-12, true},
		// By hand: pooled 1,2,2,2,3,4 has midranks 1,3,3,3,5,6; x's sum is
		// 7 (U = 1), and of the C(6,3) = 20 choices only the 3 taking 1
		// and two 3s sum to 7 or less: p = 2·3/20. The normal
		// approximation gave 0.164.
		{"hand ties", []float64{1, 2, 2}, []float64{2, 3, 4}, 1, 0.3, 1e-12, true},
		// n = 50 switches to the approximation even without ties, as R does:
		// z = (0 - 1250 + 0.5)/sqrt(50·50·101/12).
		{"n=50 approximation", seq(1, 50), seq(51, 100), 0, 7.066071930389029e-18, 1e-20, false},
		{"all tied", []float64{1, 1, 1}, []float64{1, 1}, 3, 1, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mannWhitney(c.x, c.y)
			assert.Equal(t, c.u, got.U)
			assert.Equal(t, len(c.x), got.N1)
			assert.Equal(t, len(c.y), got.N2)
			assert.InDelta(t, c.p, float64(got.P), c.delta)
			assert.Equal(t, c.exact, got.Exact)
			swapped := mannWhitney(c.y, c.x)
			assert.Equal(t, float64(len(c.x)*len(c.y))-c.u, swapped.U, "U1 + U2 = n1·n2")
			assert.InDelta(t, float64(got.P), float64(swapped.P), 1e-12, "two-sided p does not depend on the order")
		})
	}

	empty := mannWhitney(nil, []float64{1, 2})
	assert.True(t, math.IsNaN(float64(empty.P)))
	assert.False(t, empty.Significant(Alpha))
	nan := mannWhitney([]float64{math.NaN(), 1, 2, 3}, []float64{4, 5, 6})
	assert.Equal(t, 3, nan.N1, "NaNs are dropped")
	assert.InDelta(t, 0.1, float64(nan.P), 1e-12)
}

func TestStratifiedMannWhitney(t *testing.T) {
	one := func(v float64) []float64 { return []float64{v} }
	cases := []struct {
		name   string
		xs, ys [][]float64
		u, p   float64
		exact  bool
	}{
		// One repeat per cell, four thread counts all in one direction: each
		// stratum's U is 0 or 1 with probability 1/2, so P(sum = 4) = 1/16.
		{"four strata of one", [][]float64{one(5), one(6), one(7), one(8)}, [][]float64{one(1), one(2), one(3), one(4)}, 4, 2.0 / 16, true},
		// 2v2 null: U = 0..4 with weights 1,1,2,1,1 /6; 1v1: 0,1 with 1/2
		// each. Their convolution is 1,2,3,3,2,1 /12, so P(sum = 5) = 1/12.
		{"convolution", [][]float64{{3, 4}, one(2)}, [][]float64{{1, 2}, one(1)}, 5, 2.0 / 12, true},
		// A stratum with an empty side is skipped.
		{"empty stratum", [][]float64{{3, 4}, nil}, [][]float64{{1, 2}, one(1)}, 4, 2.0 / 6, true},
		// Ties in a stratum: the convolution of the strata's conditional
		// distributions. Two copies of the "hand ties" stratum: each has
		// 2U <= 2 with probability 3/20, and the sum is 4 at least, so the
		// lower tail is (3/20)² and p = 2·9/400 = 0.045, as coin's exact
		// stratified wilcox_test gives (the normal approximation said
		// 0.033).
		{"ties", [][]float64{{1, 2, 2}, {1, 2, 2}}, [][]float64{{2, 3, 4}, {2, 3, 4}}, 2, 0.045, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := stratifiedMannWhitney(c.xs, c.ys)
			assert.Equal(t, c.u, got.U)
			assert.InDelta(t, c.p, float64(got.P), 1e-12)
			assert.Equal(t, c.exact, got.Exact)
		})
	}
	x, y := []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}
	assert.Equal(t, mannWhitney(x, y), stratifiedMannWhitney([][]float64{x}, [][]float64{y}), "one stratum is the plain test")
	assert.True(t, math.IsNaN(float64(stratifiedMannWhitney(nil, nil).P)))
}

func TestUNullDist(t *testing.T) {
	// C(5,2) = 10 orderings of 2 x's among 3 y's: U = 0..6 with counts
	// 1,1,2,2,2,1,1.
	want := []float64{1, 1, 2, 2, 2, 1, 1}
	got := uNullDist(2, 3)
	assert.Len(t, got, len(want))
	for i := range want {
		assert.InDelta(t, want[i]/10, got[i], 1e-15, "u=%d", i)
	}
	assert.Equal(t, []float64{1}, uNullDist(0, 4))
}

func TestSignificant(t *testing.T) {
	cases := []struct {
		p    float64
		want bool
	}{
		{0.049, true},
		{0.05, false}, // p must be below alpha
		{0.41, false},
		{math.NaN(), false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, significant(Float(c.p), Alpha), "p=%v", c.p)
	}
}
