package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDisperseAgreeingRepeats(t *testing.T) {
	d := Disperse([]float64{100, 102, 98, 101, 99, 100}, "loops/s")
	assert.Equal(t, 6, d.N)
	// mean 100, sample sd sqrt((0+4+4+1+1+0)/5) = sqrt(2)
	assert.InDelta(t, math.Sqrt(2)/100, float64(d.CV), 1e-12)
	assert.InDelta(t, 102.0/98, float64(d.MaxMin), 1e-12)
	assert.False(t, d.Bimodal)
	assert.Empty(t, d.Flag)
}

// Repeats 3x or more apart are flagged with their range, in SI.
func TestDisperseRangeOverThreeX(t *testing.T) {
	d := Disperse([]float64{1.6e6, 527e6, 2.1e6}, "loops/s")
	assert.InDelta(t, 527/1.6, float64(d.MaxMin), 1e-9)
	assert.False(t, d.Bimodal, "3 repeats are too few to call two groups")
	assert.Equal(t, "repeats range 1.6M..527M loops/s (329x apart)", d.Flag)
	assert.Empty(t, Disperse([]float64{1, 2.9}, "loops/s").Flag, "under 3x")
	assert.NotEmpty(t, Disperse([]float64{1, 3.1}, "loops/s").Flag)
}

// Two tight clusters are two groups; a broad spread of the same range is
// not, and neither is one outlier alone.
func TestDisperseBimodal(t *testing.T) {
	d := Disperse([]float64{1.50e6, 527e6, 1.55e6, 530e6, 1.61e6, 525e6}, "loops/s")
	assert.True(t, d.Bimodal)
	assert.Equal(t, 3, d.NLow)
	assert.Equal(t, 3, d.NHigh)
	assert.Equal(t, "repeats fall in two groups: 3 near 1.55M and 3 near 527M loops/s", d.Flag)

	// Two groups 2x apart: under DisagreeRatio, still flagged as bimodal.
	d = Disperse([]float64{100, 101, 99, 200, 202, 198}, "loops/s")
	assert.True(t, d.Bimodal)
	assert.NotEmpty(t, d.Flag)

	// Spread evenly over 100..800: the widest gap is no wider than the
	// groups' own spread.
	d = Disperse([]float64{100, 150, 220, 330, 500, 800}, "loops/s")
	assert.False(t, d.Bimodal)
	assert.Contains(t, d.Flag, "repeats range 100..800 loops/s (8x apart)")

	// One outlier is not a group of its own (groups need two).
	d = Disperse([]float64{100, 101, 100, 100, 102, 300}, "loops/s")
	assert.False(t, d.Bimodal)
	assert.Empty(t, d.Flag, "3x exactly is not more than 3x")

	// Close groups (under 1.5x apart) are noise, not modes.
	assert.False(t, Disperse([]float64{100, 100.5, 130, 130.5}, "loops/s").Bimodal)
}

func TestDisperseDegenerate(t *testing.T) {
	d := Disperse(nil, "loops/s")
	assert.Zero(t, d.N)
	assert.True(t, d.CV.IsNaN())
	assert.True(t, d.MaxMin.IsNaN())
	d = Disperse([]float64{5, math.NaN(), 0}, "loops/s")
	assert.Equal(t, 1, d.N, "NaN and 0 have no ratio")
	assert.True(t, d.CV.IsNaN())
	assert.Equal(t, 1.0, float64(d.MaxMin))
}

func TestDispersionWarnings(t *testing.T) {
	obs := func(target string, q, rep int, rate float64) Observation {
		return Observation{CellKey: CellKey{Target: target, Workload: "fp", QoS: q, Threads: 1}, Repeat: rep, Unit: "loops",
			StartNs: 0, EndNs: 1e9, Work: rate, Rate: rate}
	}
	var samples []Observation
	for i, r := range []float64{1.6e6, 527e6, 1.7e6} {
		samples = append(samples, obs("host", 9, i+1, r), obs("host", 33, i+1, 300e6), obs("vm", 9, i+1, 12e6))
	}
	w := DispersionWarnings(Cells(samples), "fp", "")
	assert.Equal(t, []string{"host fp qos=9 threads=1: repeats range 1.6M..527M loops/s (329x apart); the machine was busy or contention did not hold"}, w)
	assert.Empty(t, DispersionWarnings(Cells(samples), "int", ""))
}
