package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDisperseAgreeingRepeats(t *testing.T) {
	d := Disperse([]float64{100, 102, 98, 101, 99, 100}, "loops/s")
	assert.Equal(t, 6, d.N)
	// mean 100, sample sd sqrt((0+4+4+1+1+0)/5) = sqrt(2)
	assert.InDelta(t, math.Sqrt(2)/100, float64(d.CV), 1e-12)
	assert.InDelta(t, 102.0/98, float64(d.MaxMin), 1e-12)
	assert.False(t, d.Bimodal)
	assert.Equal(t, FlagNone, d.Flag)
}

// Repeats 3x or more apart are flagged with their range, in SI.
func TestDisperseRangeOverThreeX(t *testing.T) {
	d := Disperse([]float64{1.6e6, 527e6, 2.1e6}, "loops/s")
	assert.InDelta(t, 527/1.6, float64(d.MaxMin), 1e-9)
	assert.False(t, d.Bimodal, "3 repeats are too few to call two groups")
	assert.Equal(t, FlagApart, d.Flag)
	assert.Equal(t, [2]Float{1.6e6, 527e6}, [2]Float{d.Min, d.Max})
	assert.Equal(t, "loops/s", d.Unit)
	assert.Equal(t, FlagNone, Disperse([]float64{1, 2.9}, "loops/s").Flag, "under 3x")
	assert.Equal(t, FlagApart, Disperse([]float64{1, 3.1}, "loops/s").Flag)
}

// Two tight clusters are two groups; a broad spread of the same range is
// not, and neither is one outlier alone.
func TestDisperseBimodal(t *testing.T) {
	d := Disperse([]float64{1.50e6, 527e6, 1.55e6, 530e6, 1.61e6, 525e6}, "loops/s")
	assert.True(t, d.Bimodal)
	assert.Equal(t, 3, d.NLow)
	assert.Equal(t, 3, d.NHigh)
	assert.Equal(t, FlagBimodal, d.Flag)
	assert.Equal(t, [2]Float{1.55e6, 527e6}, [2]Float{d.Low, d.High})

	// Two groups 2x apart: under DisagreeRatio, still flagged as bimodal.
	d = Disperse([]float64{100, 101, 99, 200, 202, 198}, "loops/s")
	assert.True(t, d.Bimodal)
	assert.Equal(t, FlagBimodal, d.Flag)

	// Spread evenly over 100..800: the widest gap is no wider than the
	// groups' own spread.
	d = Disperse([]float64{100, 150, 220, 330, 500, 800}, "loops/s")
	assert.False(t, d.Bimodal)
	assert.Equal(t, FlagApart, d.Flag)

	// One outlier is not a group of its own (groups need two).
	d = Disperse([]float64{100, 101, 100, 100, 102, 300}, "loops/s")
	assert.False(t, d.Bimodal)
	assert.Equal(t, FlagNone, d.Flag, "3x exactly is not more than 3x")

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

// What happened to a flagged cell's threads is read from their CPU
// share and speed per repeat (render.Cause words it).
func TestCauseOf(t *testing.T) {
	// obs is one thread's 1 s record at a CPU share and a speed (loops per
	// CPU-second): its rate is their product; share 0 records no CPU time.
	obs := func(target string, q, rep int, share, speed float64) Observation {
		rate := share * speed
		cpu := int64(share * 1e9)
		if share == 0 {
			rate = speed
		}
		return Observation{CellKey: CellKey{Target: target, Workload: "fp", QoS: q, Threads: 1}, Repeat: rep, Unit: "loops",
			StartNs: 0, EndNs: 1e9, Work: rate, Rate: rate, CPUNs: cpu, Contention: 2}
	}
	cells := func(target string, q int, shares, speeds []float64, more ...Observation) []Cell {
		out := more
		for i := range shares {
			out = append(out, obs(target, q, i+1, shares[i], speeds[i]), obs(target, 33, i+1, 0.998, 1e9))
		}
		return Cells(out)
	}
	same := func(x float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = x
		}
		return out
	}
	cases := []struct {
		name  string
		cells []Cell
		want  FlagCause
	}{
		{"not recorded", cells("host", 9, same(0, 3), []float64{1.6e6, 527e6, 1.7e6}),
			FlagCause{Kind: CauseNoCPUTime}},
		{"a starved class", cells("host", 9, []float64{0.0005, 0.025, 0.005, 0.002, 0.001, 0.003}, same(1e9, 6)),
			FlagCause{Kind: CauseStarved, Steady: true}},
		{"contention did not hold", cells("host", 9, []float64{0.002, 0.98, 0.003, 0.002, 0.97, 0.0025}, same(1e9, 6)),
			FlagCause{Kind: CauseNotHeld, Repeats: []int{1, 4}}},
		// The run that had its spinners stopped for one repeat.
		{"contention did not hold in one repeat", cells("host", 9, []float64{0.003, 0.005, 0.774, 0.002, 0.006, 0.004}, same(1e9, 6)),
			FlagCause{Kind: CauseNotHeld, Repeats: []int{2}}},
		// At 2 threads a stopped spinner frees a thread's worth of CPU for
		// two: the share that far above the crumbs is under the starved
		// limit, and still contention failing, not a crumb.
		{"contention did not hold far above the crumbs", cells("host", 9, []float64{0.0033, 0.423, 0.004, 0.005, 0.0035, 0.006}, same(1e9, 6)),
			FlagCause{Kind: CauseNotHeld, Repeats: []int{1}, FarAbove: 10}},
		// Inside a guest no spinner decides: a class the guest starved is
		// the finding.
		{"a class starved inside the guest", cells("vm", 9, []float64{0.0005, 0.025, 0.005, 0.002, 0.001, 0.003}, same(1e9, 6)),
			FlagCause{Kind: CauseStarvedInGuest, Steady: true}},
		// CPU time in 2 of 6 repeats: their shares cannot say what happened
		// in the other 4.
		{"CPU time in some repeats only", cells("host", 9, []float64{0.972, 0.97, 0, 0, 0, 0}, []float64{1e9, 1e9, 2e6, 2.1e6, 1.9e6, 2e6}),
			FlagCause{Kind: CausePartlyRecorded, Repeats: []int{0, 1}, Working: 6}},
		{"the high class lost share", Cells([]Observation{obs("host", 33, 1, 0.99, 1e9), obs("host", 33, 2, 0.2, 1e9), obs("host", 33, 3, 0.99, 1e9),
			obs("host", 33, 4, 0.25, 1e9), obs("host", 33, 5, 0.98, 1e9)}),
			FlagCause{Kind: CauseBusyShare, Repeats: []int{1, 3}}},
		// A busy machine took most of the CPU from the high class: its
		// median share is low, and it is still not a starved class.
		{"the high class lost share on a busy machine", Cells([]Observation{obs("host", 33, 1, 0.73, 1e9), obs("host", 33, 2, 0.19, 1e9), obs("host", 33, 3, 0.26, 1e9),
			obs("host", 33, 4, 0.7, 1e9), obs("host", 33, 5, 0.21, 1e9)}),
			FlagCause{Kind: CauseBusyShare, Repeats: []int{1, 2, 4}}},
		// Crumbs 28x apart at speeds 1.4x apart: the share explains it.
		{"a starved class whose speed varied less", cells("host", 9, []float64{0.0005, 0.014, 0.002, 0.006, 0.001, 0.004}, []float64{1e9, 1.1e9, 0.72e9, 1e9, 1e9, 1.02e9}),
			FlagCause{Kind: CauseStarved}},
		{"a vCPU's speed varied", cells("vm", 9, same(0.99, 3), []float64{1e9, 0.25e9, 1e9}),
			FlagCause{Kind: CauseBusySpeed, Repeats: []int{1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := DispersionWarnings(c.cells, "fp", "")
			require.Len(t, ws, 1)
			got := ws[0].Cause
			assert.Equal(t, [2]any{c.want.Kind, c.want.Repeats}, [2]any{got.Kind, got.Repeats})
			assert.Equal(t, c.want.Working, got.Working)
			assert.Equal(t, c.want.FarAbove, got.FarAbove)
			if c.want.Kind == CauseStarved || c.want.Kind == CauseStarvedInGuest {
				assert.Equal(t, c.want.Steady, got.Steady)
				assert.Equal(t, 33, got.HighQoS)
				assert.InDelta(t, 0.998, float64(got.HighShare), 1e-9)
			}
			assert.Empty(t, DispersionWarnings(c.cells, "int", ""))
		})
	}

	// Neither share nor speed: the same threads at the same share and
	// speed, but in one repeat the second started a second late.
	var late []Observation
	for r := 1; r <= 3; r++ {
		start := int64(0)
		if r == 2 {
			start = 3e9
		}
		late = append(late,
			Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: 2}, Repeat: r, Unit: "loops", StartNs: 0, EndNs: 1e9, Work: 1e9, CPUNs: 1e9},
			Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: 2}, Repeat: r, Unit: "loops", StartNs: start, EndNs: start + 1e9, Work: 1e9, CPUNs: 1e9})
	}
	ws := DispersionWarnings(Cells(late), "fp", "")
	require.Len(t, ws, 1)
	assert.Equal(t, CauseUnexplained, ws[0].Cause.Kind)
}

// The bimodality test holds from 4 to 20 repeats: two clusters are found
// whatever their sizes (2 and 2, 2 and 3, 10 and 10), a tight set or a
// smooth spread of 20 is not; 3 repeats are left to the max/min rule.
func TestDisperseBimodalSizes(t *testing.T) {
	assert.True(t, Disperse([]float64{10, 10.2, 30, 30.5}, "loops/s").Bimodal, "2 and 2")
	d := Disperse([]float64{10, 30.5, 10.2, 30, 29.8}, "loops/s")
	assert.True(t, d.Bimodal, "2 and 3")
	assert.Equal(t, [2]int{2, 3}, [2]int{d.NLow, d.NHigh})

	// 20 repeats: a tight set within +-2% and one spread 1x..2.5x
	// geometrically are one group; 10 near 100 and 10 near 400 are two.
	var tight, smooth, two []float64
	for i := range 20 {
		tight = append(tight, 100*(0.98+0.04*float64(i)/19))
		smooth = append(smooth, 100*math.Pow(2.5, float64(i)/19))
		two = append(two, 100+float64(i%10), 400+float64(i%10)*4)
	}
	assert.False(t, Disperse(tight, "loops/s").Bimodal)
	assert.Equal(t, FlagNone, Disperse(tight, "loops/s").Flag)
	assert.False(t, Disperse(smooth, "loops/s").Bimodal)
	assert.Equal(t, FlagNone, Disperse(smooth, "loops/s").Flag, "2.5x apart and no gap: not flagged")
	d = Disperse(two[:20], "loops/s")
	assert.Equal(t, 20, d.N)
	assert.True(t, d.Bimodal)
	assert.Equal(t, [2]int{10, 10}, [2]int{d.NLow, d.NHigh})
	assert.Equal(t, FlagBimodal, d.Flag)

	// 3 repeats: two apart from one is an outlier, not a mode.
	d = Disperse([]float64{100, 101, 250}, "loops/s")
	assert.False(t, d.Bimodal)
	assert.Equal(t, FlagNone, d.Flag, "2.5x is under the 3x rule")
}

// A compression cell's repeats are also judged by their times, and its
// warning gives them in seconds; other cells have no time dispersion.
func TestCellsTimeDispersionForPhases(t *testing.T) {
	var samples []Observation
	for i, secs := range []float64{1.3, 1.32, 5.2, 1.31, 1.29, 1.3} {
		samples = append(samples,
			Observation{CellKey: CellKey{Target: "host", Workload: "compress", Phase: "compress", QoS: 9, Threads: 1}, Repeat: i + 1, Unit: "bytes",
				StartNs: 0, EndNs: int64(secs * 1e9), Work: 1 << 30, Rate: (1 << 30) / secs},
			Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: 9, Threads: 1}, Repeat: i + 1, Unit: "loops",
				StartNs: 0, EndNs: int64(secs * 1e9), Work: 1e8, Rate: 1e8 / secs})
	}
	cells := Cells(samples)
	require.Len(t, cells, 2)
	comp, fp := cells[0], cells[1]
	require.NotNil(t, comp.SecondsDispersion)
	assert.Nil(t, fp.SecondsDispersion, "a cell without phases is judged by its rates")
	assert.InDelta(t, 5.2/1.29, float64(comp.SecondsDispersion.MaxMin), 1e-9)
	assert.InDelta(t, float64(comp.Dispersion.MaxMin), float64(comp.SecondsDispersion.MaxMin), 1e-6, "the same work: max/min of times is that of rates")
	d := comp.FlaggedDispersion()
	assert.Equal(t, [4]any{"s", Float(1.29), Float(5.2), FlagApart}, [4]any{d.Unit, d.Min, d.Max, d.Flag}, "a cell timed in phases is flagged by its times")
	assert.Equal(t, "loops/s", fp.FlaggedDispersion().Unit)
	assert.True(t, comp.Flagged())
	ws := DispersionWarnings(cells, "compress", "compress")
	require.Len(t, ws, 1)
	assert.Equal(t, comp.CellKey, ws[0].Cell.CellKey)
	assert.Equal(t, CauseNoCPUTime, ws[0].Cause.Kind)
}

// Repeats that did no work are left out of the spread and flagged.
func TestDisperseCountsRepeatsWithoutWork(t *testing.T) {
	d := Disperse([]float64{0, 5e6, 5.1e6, 0, 4.9e6, 5e6}, "loops/s")
	assert.Equal(t, 4, d.N)
	assert.Equal(t, 2, d.Zero)
	assert.InDelta(t, 5.1/4.9, float64(d.MaxMin), 1e-12)
	assert.Equal(t, FlagIdle, d.Flag)
	c := Cell{CellKey: CellKey{Target: "vm", Workload: "fp", QoS: 9, Threads: 1}, Dispersion: d}
	assert.True(t, c.Flagged())
	c.Dispersion = Disperse([]float64{1e6, 1.1e6, 1.05e6}, "loops/s")
	assert.False(t, c.Flagged())
}
