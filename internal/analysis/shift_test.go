package analysis

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func exps(ks ...float64) []float64 {
	out := make([]float64, len(ks))
	for i, k := range ks {
		out[i] = math.Exp(k)
	}
	return out
}

// Worked by hand, as R's wilcox.test(log(x), log(y), conf.int = TRUE)
// computes it: the differences of 3 against 3 are 1,2,2,3,3,3,4,4,5 (HL 3);
// qwilcox(0.025, 3, 3) is 0, raised to 1, so the interval is the whole
// range [1, 5], reaching 1 - 2/20 = 90%.
func TestLogShiftThreeAgainstThree(t *testing.T) {
	s := logShift([][]float64{exps(3, 4, 5)}, [][]float64{exps(0, 1, 2)})
	assert.Equal(t, 9, s.Pairs)
	assert.InDelta(t, 3, float64(s.Estimate), 1e-12)
	assert.InDelta(t, 1, float64(s.Low), 1e-12)
	assert.InDelta(t, 5, float64(s.High), 1e-12)
	assert.InDelta(t, 0.9, float64(s.Confidence), 1e-12)
}

// 5 against 5: the differences 10+(i-j) run 6..14; qwilcox(0.025, 5, 5) =
// 3, so the interval is [d(3), d(23)] = [7, 13], reaching 1 - 2*4/252.
func TestLogShiftFiveAgainstFive(t *testing.T) {
	s := logShift([][]float64{exps(10, 11, 12, 13, 14)}, [][]float64{exps(0, 1, 2, 3, 4)})
	assert.InDelta(t, 10, float64(s.Estimate), 1e-12)
	assert.InDelta(t, 7, float64(s.Low), 1e-12)
	assert.InDelta(t, 13, float64(s.High), 1e-12)
	assert.InDelta(t, 1-2*4.0/252, float64(s.Confidence), 1e-12)
}

// Strata are never compared with each other: two thread counts whose
// rates differ 100x still give the within-stratum shift.
func TestLogShiftStratified(t *testing.T) {
	s := logShift([][]float64{exps(1, 1.1, 1.2), exps(5.05, 5.15, 5.1)}, [][]float64{exps(0, 0.1, 0.2), exps(4.05, 4.15, 4.1)})
	assert.Equal(t, 18, s.Pairs)
	assert.InDelta(t, 1, float64(s.Estimate), 1e-12)
	assert.GreaterOrEqual(t, float64(s.Confidence), Confidence, "two strata of 3 reach 95%")
	assert.Less(t, float64(s.Low), 1.0)
	assert.Greater(t, float64(s.High), 1.0)
	assert.Greater(t, float64(s.Low), 0.7)
	assert.Less(t, float64(s.High), 1.3)

	none := logShift([][]float64{{}}, [][]float64{exps(1)})
	assert.True(t, none.Estimate.IsNaN())
	assert.Zero(t, none.Pairs)
}

func TestSmallestP(t *testing.T) {
	assert.InDelta(t, 0.1, SmallestP([][2]int{{3, 3}}), 1e-12)
	assert.InDelta(t, 2.0/56, SmallestP([][2]int{{3, 5}}), 1e-12)
	assert.InDelta(t, 0.125, SmallestP([][2]int{{1, 1}, {1, 1}, {1, 1}, {1, 1}}), 1e-12)
	assert.InDelta(t, 2.0/(20*20), SmallestP([][2]int{{3, 3}, {3, 3}}), 1e-12)
	assert.Less(t, SmallestP([][2]int{{6, 6}}), Alpha, "6 against 6 can reach significance")
	require.True(t, math.IsNaN(SmallestP(nil)))
}

// Without ties the conditional distribution is Mann and Whitney's, and
// inverting the test shift by shift gives the k-th difference interval.
func TestTiedNullDistWithoutTiesIsTheUntiedOne(t *testing.T) {
	for _, mn := range [][2]int{{1, 1}, {2, 3}, {3, 3}, {4, 6}, {6, 6}} {
		groups := make([]int, mn[0]+mn[1])
		for i := range groups {
			groups[i] = 1
		}
		got, want := tiedNullDist(groups, mn[0], mn[1]), untiedNullDist(mn[0], mn[1])
		require.Len(t, got, len(want))
		for k := range want {
			assert.InDelta(t, want[k], got[k], 1e-15, "%v 2U=%d", mn, k)
		}
	}
}

func TestInversionWithoutTiesIsTheExactInterval(t *testing.T) {
	xs := [][]float64{exps(1, 1.13, 1.21, 1.37, 1.42, 1.58), exps(2.05, 2.31, 2.17, 2.44, 2.29, 2.52)}
	ys := [][]float64{exps(0.93, 1.04, 1.11, 1.26, 1.19, 0.88), exps(2.01, 2.12, 2.23, 2.08, 1.97, 2.36)}
	for _, level := range []float64{0.9, 0.95} {
		want := logShiftAt(xs, ys, level)
		require.Equal(t, shiftExact, want.Method)
		var strata []shiftStratum
		var diffs []float64
		var sizes [][2]int
		for i := range xs {
			x, y := logs(xs[i]), logs(ys[i])
			slices.Sort(x)
			slices.Sort(y)
			strata = append(strata, shiftStratum{x, y})
			sizes = append(sizes, [2]int{len(x), len(y)})
			for _, a := range x {
				for _, b := range y {
					diffs = append(diffs, a-b)
				}
			}
		}
		slices.Sort(diffs)
		low, high, _ := invertShift(strata, diffs, 1-level, sizes)
		assert.Equal(t, want.Low, low, "level %v", level)
		assert.Equal(t, want.High, high, "level %v", level)
	}
}

// The smallest p a tied 3 against 3 can give is the untied 0.1: ties
// within a side do not make the extreme orderings likelier.
func TestTiesCannotBeatTheSmallestP(t *testing.T) {
	u := mannWhitney([]float64{310, 310, 320}, []float64{100, 100, 100})
	assert.True(t, u.Exact)
	assert.InDelta(t, 0.1, float64(u.P), 1e-12)
	assert.InDelta(t, 0.1, float64(u.SmallestP), 1e-12)
	assert.False(t, u.Significant(Alpha))
}

// Too many tied repeats to invert in reasonable time fall back to the
// untied bound; 50 and more to the normal approximation.
func TestShiftMethods(t *testing.T) {
	tied := func(n int, base float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = base + float64(i%4)
		}
		return out
	}
	assert.Equal(t, shiftExactConditional, logShift([][]float64{tied(6, 20)}, [][]float64{tied(6, 10)}).Method)
	assert.Equal(t, shiftTiesBounded, logShift([][]float64{tied(30, 20)}, [][]float64{tied(30, 10)}).Method)
	big := logShift([][]float64{tied(60, 20)}, [][]float64{tied(60, 10)})
	assert.Equal(t, shiftNormal, big.Method)
	assert.Greater(t, float64(big.Confidence), 0.94)
	assert.Less(t, float64(big.Low), float64(big.Estimate))
	assert.Greater(t, float64(big.High), float64(big.Estimate))
}
