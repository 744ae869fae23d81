package analysis

import (
	"math"
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
	s := LogShift([][]float64{exps(3, 4, 5)}, [][]float64{exps(0, 1, 2)})
	assert.Equal(t, 9, s.Pairs)
	assert.InDelta(t, 3, float64(s.Estimate), 1e-12)
	assert.InDelta(t, 1, float64(s.Low), 1e-12)
	assert.InDelta(t, 5, float64(s.High), 1e-12)
	assert.InDelta(t, 0.9, float64(s.Confidence), 1e-12)
}

// 5 against 5: the differences 10+(i-j) run 6..14; qwilcox(0.025, 5, 5) =
// 3, so the interval is [d(3), d(23)] = [7, 13], reaching 1 - 2*4/252.
func TestLogShiftFiveAgainstFive(t *testing.T) {
	s := LogShift([][]float64{exps(10, 11, 12, 13, 14)}, [][]float64{exps(0, 1, 2, 3, 4)})
	assert.InDelta(t, 10, float64(s.Estimate), 1e-12)
	assert.InDelta(t, 7, float64(s.Low), 1e-12)
	assert.InDelta(t, 13, float64(s.High), 1e-12)
	assert.InDelta(t, 1-2*4.0/252, float64(s.Confidence), 1e-12)
}

// Strata are never compared with each other: two thread counts whose
// rates differ 100x still give the within-stratum shift.
func TestLogShiftStratified(t *testing.T) {
	s := LogShift([][]float64{exps(1, 1.1, 1.2), exps(5.05, 5.15, 5.1)}, [][]float64{exps(0, 0.1, 0.2), exps(4.05, 4.15, 4.1)})
	assert.Equal(t, 18, s.Pairs)
	assert.InDelta(t, 1, float64(s.Estimate), 1e-12)
	assert.GreaterOrEqual(t, float64(s.Confidence), Confidence, "two strata of 3 reach 95%")
	assert.Less(t, float64(s.Low), 1.0)
	assert.Greater(t, float64(s.High), 1.0)
	assert.Greater(t, float64(s.Low), 0.7)
	assert.Less(t, float64(s.High), 1.3)

	none := LogShift([][]float64{{}}, [][]float64{exps(1)})
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
