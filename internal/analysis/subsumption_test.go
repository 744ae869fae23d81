package analysis

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cell builds a cell of fp from per-repeat total rates.
func cell(target string, qos, threads int, rates ...float64) Cell {
	return Cell{CellKey: CellKey{Target: target, Workload: "fp", QoS: qos, Threads: threads}, Unit: "loops",
		TotalRate: OrderStatsOf(rates), TotalRates: rates}
}

var (
	// Medians 310 and 100: 3.1x, every repeat of 33 above every one of 9.
	host33 = []float64{300, 305, 310, 315, 320}
	host9  = []float64{98, 99, 100, 101, 102}
	// Medians 105 and 104: 1.0096x, interleaved (U = 15 of 25 per stratum).
	vm33 = []float64{101, 103, 105, 107, 109}
	vm9  = []float64{100, 102, 104, 106, 108}
)

// scale multiplies rates by threads, as more threads run more work.
func scale(rates []float64, k float64) []float64 {
	out := make([]float64, len(rates))
	for i, r := range rates {
		out[i] = r * k
	}
	return out
}

func TestQoSSensitivity(t *testing.T) {
	cells := []Cell{
		cell("host", 33, 1, host33...), cell("host", 9, 1, host9...),
		cell("host", 33, 2, scale(host33, 2)...), cell("host", 9, 2, scale(host9, 2)...),
		cell("host", 33, 4, scale(host33, 4)...), // no class 9 at 4 threads
		cell("vm", 9, 1, 1, 2, 3),
	}
	s := QoSSensitivity(cells, "host", "fp", "", 33, 9, nil)
	require.Len(t, s.ByThreads, 2, "thread counts with both classes")
	assert.Equal(t, 1, s.ByThreads[0].Threads)
	assert.Equal(t, 2, s.ByThreads[1].Threads)
	assert.InDelta(t, 3.1, float64(s.ByThreads[0].Ratio), 1e-12)
	assert.InDelta(t, 3.1, float64(s.Ratio), 1e-12)
	// Each stratum fully separated: P(U = 25) = 1/C(10,5) = 1/252 each.
	assert.InDelta(t, 2.0/252, float64(s.ByThreads[0].Test.P), 1e-15)
	assert.InDelta(t, 2.0/(252*252), float64(s.Test.P), 1e-15)
	assert.Equal(t, 50.0, s.Test.U)

	only2 := QoSSensitivity(cells, "host", "fp", "", 33, 9, []int{2, 2, 4})
	require.Len(t, only2.ByThreads, 1, "4 threads lacks a class-9 cell; duplicates count once")
	assert.Equal(t, 2, only2.ByThreads[0].Threads)

	// Geometric mean: 4x at one thread count and 1x at another pool to 2x.
	mixed := []Cell{cell("host", 33, 1, 400), cell("host", 9, 1, 100), cell("host", 33, 2, 200), cell("host", 9, 2, 200)}
	assert.InDelta(t, 2, float64(QoSSensitivity(mixed, "host", "fp", "", 33, 9, nil).Ratio), 1e-12)

	none := QoSSensitivity(cells, "vm", "fp", "", 33, 9, nil)
	assert.Empty(t, none.ByThreads)
	assert.True(t, math.IsNaN(float64(none.Ratio)))
	assert.True(t, math.IsNaN(float64(none.Test.P)))
}

func TestCompareTargets(t *testing.T) {
	cells := []Cell{
		cell("host", 9, 1, host9...), cell("host", 33, 1, host33...),
		cell("vm", 9, 1, scale(host9, 3.1)...), cell("vm", 33, 1, host33...),
		cell("vm", 21, 1, 5), // no host cell
	}
	got := CompareTargets(cells, "host", "vm")
	require.Len(t, got, 2)
	assert.Equal(t, CellKey{Target: "vm", Workload: "fp", QoS: 9, Threads: 1}, got[0].CellKey)
	assert.Equal(t, "host", got[0].Base)
	assert.InDelta(t, 3.1, float64(got[0].Ratio), 1e-12)
	assert.True(t, got[0].Test.Significant(Alpha))
	assert.InDelta(t, 1, float64(got[1].Ratio), 1e-12)
	assert.Equal(t, 1.0, float64(got[1].Test.P), "identical samples")
	assert.False(t, got[1].Test.Significant(Alpha))
	assert.True(t, got[0].Test.Significant(Alpha))
	assert.InDelta(t, 3.1, float64(got[0].Ratio), 0.05)
	assert.InDelta(t, 0.0079, float64(got[0].Test.P), 0.00005)
}

func TestSubsumptionIndex(t *testing.T) {
	cases := []struct {
		host, vm float64
		si       float64
		ok       bool
	}{
		{3, 1, 1, true}, // VM keeps nothing
		{3, 3, 0, true}, // VM keeps it all
		{3, 1.01, 1 - math.Log(1.01)/math.Log(3), true},
		{3.1, 2.5, 1 - math.Log(2.5)/math.Log(3.1), true},
		// The log scale does not saturate: a 10x effect left in the VM
		// beside a 254x one on the host is SI 0.58 (the linear index said
		// 0.96, "yes"); a 1.0555x one is 0.990.
		{254, 10, 0.5842, true},
		{254, 1.0555, 0.9903, true},
		{2, 0.5, 2, true}, // the VM reverses the classes
		{1.01, 1, 1, true},
		{1.005, 1.001, 1 - math.Log(1.001)/math.Log(1.005), true}, // whether the host's effect is shown is the test's to say
		{1, 1, 0, false},
		{0.5, 1, 0, false}, // low class faster on the host
		{math.NaN(), 1, 0, false},
		{3, math.NaN(), 0, false},
		{math.Inf(1), 1, 0, false},
	}
	for _, c := range cases {
		si, ok := subsumptionIndex(c.host, c.vm)
		assert.Equal(t, c.ok, ok, "host %v vm %v", c.host, c.vm)
		if c.ok {
			assert.InDelta(t, c.si, si, 1e-4, "host %v vm %v", c.host, c.vm)
		} else {
			assert.True(t, math.IsNaN(si))
		}
	}
}

func TestSubsumption(t *testing.T) {
	at := func(target string, qos int, rates []float64) []Cell {
		return []Cell{cell(target, qos, 1, rates...), cell(target, qos, 2, scale(rates, 2)...)}
	}
	join := func(parts ...[]Cell) []Cell {
		var out []Cell
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name    string
		cells   []Cell
		outcome Outcome
		kind    ReasonKind
	}{
		{
			// Host: 3.1x [3.04..3.16], separated (p = 2/252² = 3.1e-5).
			// VM: 1.01x, interleaved, its 90% interval [0.99..1.03] wholly
			// inside the band 1/1.12..1.12, 1.12 = 3.04^0.1 (under 1.25).
			"subsumed",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, vm33), at("vm", 9, vm9)),
			Subsumed,
			NoReason,
		},
		{
			// The VM keeps 2.5x of the host's 3.1x, its whole interval
			// above the margin: SI = 1 - ln 2.5/ln 3.1 = 0.19.
			"not subsumed",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, scale(host9, 2.5)), at("vm", 9, host9)),
			NotSubsumed,
			ReasonVMKeeps,
		},
		{
			// The VM keeps 1.12x, right at the margin: its interval
			// crosses it, and only more repeats would tell.
			"vm straddles the margin",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, scale(vm9, 1.12)), at("vm", 9, vm9)),
			Inconclusive,
			ReasonCrossesEdge,
		},
		{
			// No QoS effect on the host: nothing to subsume, and the verdict
			// must not say yes although the VM is flat too.
			"host flat",
			join(at("host", 33, vm33), at("host", 9, vm9), at("vm", 33, vm33), at("vm", 9, vm9)),
			Inconclusive,
			ReasonNoHostEffect,
		},
		{
			// 3 against 3 at one thread count: the smallest p the test
			// can reach is 0.1, so even a 3x host effect cannot count.
			"too few repeats",
			[]Cell{cell("host", 33, 1, host33[:3]...), cell("host", 9, 1, host9[:3]...), cell("vm", 33, 1, vm33[:3]...), cell("vm", 9, 1, vm9[:3]...)},
			Inconclusive,
			ReasonFewHostRepeats,
		},
		{
			// Significant, but the low class is the faster one on the host.
			"host reversed",
			join(at("host", 33, host9), at("host", 9, host33), at("vm", 33, vm33), at("vm", 9, vm9)),
			Inconclusive,
			ReasonHostReversed,
		},
		{
			// One repeat per VM cell: 2x, but two strata of 1v1 give an
			// interval of 50% coverage at best: no decision either way.
			"vm too few repeats",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, []float64{200}), at("vm", 9, []float64{100})),
			Inconclusive,
			ReasonFewVMRepeats,
		},
		{
			// 21 is run too, on the host only: the extremes common to
			// both targets, 33 and 9, are compared.
			"middle class ignored",
			join(at("host", 33, host33), at("host", 21, host33), at("host", 9, host9), at("vm", 33, vm33), at("vm", 9, vm9), at("vm", 25, vm33)),
			Subsumed,
			NoReason,
		},
		{
			"one class",
			join(at("host", 33, host33), at("vm", 33, vm33), at("vm", 9, vm9)),
			Inconclusive,
			ReasonNoTwoClasses,
		},
		{
			"no common thread count",
			[]Cell{cell("host", 33, 1, host33...), cell("host", 9, 1, host9...), cell("vm", 33, 2, vm33...), cell("vm", 9, 2, vm9...)},
			Inconclusive,
			ReasonNoThreads,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Subsumption(c.cells, "fp", "", "host", "vm", DefaultMargins())
			assert.Equal(t, c.outcome, v.Outcome)
			assert.Equal(t, c.kind, v.Reason.Kind, "the words are render's")
		})
	}

	// Other workloads and phases stay out of the verdict.
	cells := join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, vm33), at("vm", 9, vm9))
	other := cell("vm", 9, 1, 1, 1, 1)
	other.Workload = "mmul"
	v := Subsumption(append(cells, other), "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Subsumed, v.Outcome)
	assert.Equal(t, Inconclusive, Subsumption(cells, "fp", "compress", "host", "vm", DefaultMargins()).Outcome)
}

func TestFastestFirst(t *testing.T) {
	cells := []Cell{cell("host", 9, 1, 10), cell("host", 9, 2, 30), cell("host", 9, 3, 10), cell("host", 9, 4, 20)}
	var order []int
	for _, c := range fastestFirst(cells) {
		order = append(order, c.Threads)
	}
	assert.Equal(t, []int{2, 4, 1, 3}, order, "ties keep their order")
	assert.Equal(t, 1, cells[0].Threads, "the input is not reordered")
}

// around returns n rates near r, each 1% apart (r·0.975 .. up), in an
// order that interleaves them.
func around(r float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		k := float64((i*5)%n) - float64(n-1)/2
		out[i] = r * (1 + 0.01*k)
	}
	return out
}

// The cases an independent recomputation found the old rule answered
// wrongly (issue 21): each now gets its true outcome and reason.
func TestSubsumptionCannotBeFooled(t *testing.T) {
	at := func(target string, qos int, byThreads ...[]float64) []Cell {
		var out []Cell
		for i, r := range byThreads {
			out = append(out, cell(target, qos, i+1, r...))
		}
		return out
	}
	join := func(parts ...[]Cell) []Cell {
		var out []Cell
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	host := func(ratio float64) []Cell {
		return join(at("host", 33, around(1e6*ratio, 6), around(2e6*ratio, 6)), at("host", 9, around(1e6, 6), around(2e6, 6)))
	}
	// tight: rates 0.01% apart, so that a 0.5% effect is significant.
	tight := func(target string, ratio float64) []Cell {
		var hi, lo []float64
		for i := range 6 {
			lo = append(lo, 1e6*(1+1e-4*float64((i*5)%6)))
			hi = append(hi, 1e6*ratio*(1+1e-4*float64((i*5)%6)))
		}
		return join(at(target, 33, hi), at(target, 9, lo))
	}
	vm := func(ratio float64) []Cell {
		return join(at("vm", 33, around(3e5*ratio, 6), around(6e5*ratio, 6)), at("vm", 9, around(3e5, 6), around(6e5, 6)))
	}
	cases := []struct {
		name     string
		cells    []Cell
		margins  Margins
		outcome  Outcome
		kind     ReasonKind
		reversed bool
	}{
		// Host 240x, VM 0.194x: the VM runs QoS 33 five times slower.
		{"reversal", join(host(240), vm(0.194)), DefaultMargins(), NotSubsumed, ReasonVMReversed, true},
		// Host 1010x, VM 1.87x: 9% of the host's effect on the log scale,
		// but far outside 1.25x.
		{"large vm effect", join(host(1010), vm(1.87)), DefaultMargins(), NotSubsumed, ReasonVMKeeps, false},
		// The same with an absolute margin of 2x: 1.87x is inside it, and
		// inside 10% of 1010x (2x).
		{"absolute margin set", join(host(1010), vm(1.87)), Margins{Relative: 0.1, Absolute: 2}, Subsumed, NoReason, false},
		{"subsumed", join(host(240), vm(1.02)), DefaultMargins(), Subsumed, NoReason, false},
		// A significant 0.5% host effect is an effect (the old rule called
		// anything under 1.01x "not faster"); its band is tiny, and a VM
		// keeping 0.2% keeps too much of it.
		{"host 1.005x", join(tight("host", 1.005), tight("vm", 1.002)), DefaultMargins(), NotSubsumed, ReasonVMKeeps, false},
		{"vm did no work", join(host(240), at("vm", 33, around(3e5, 6), around(6e5, 6)), at("vm", 9, make([]float64, 6), make([]float64, 6))), DefaultMargins(),
			Inconclusive, ReasonIdle, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Subsumption(c.cells, "fp", "", "host", "vm", c.margins)
			assert.Equal(t, c.outcome, v.Outcome, v.Reason)
			assert.Equal(t, c.kind, v.Reason.Kind)
			assert.Equal(t, c.reversed, v.Reversed)
		})
	}
}

// The margin comes from the low end of the host's interval, and SI's
// interval carries the host's uncertainty.
func TestSubsumptionHostUncertainty(t *testing.T) {
	wide := []float64{2.6, 4.1, 6.7, 9.5, 14.9, 5.2}
	lo := []float64{1, 1, 1, 1, 1, 1}
	for i := range lo {
		lo[i] = 1e6 * (1 + 0.001*float64(i))
	}
	hi := make([]float64, 6)
	for i := range hi {
		hi[i] = lo[i] * wide[i]
	}
	cells := []Cell{cell("host", 33, 1, hi...), cell("host", 9, 1, lo...), cell("vm", 33, 1, around(3e5*1.01, 6)...), cell("vm", 9, 1, around(3e5, 6)...)}
	v := Subsumption(cells, "fp", "", "host", "vm", DefaultMargins())
	hs := v.Host.Shift
	require.Greater(t, float64(hs.Low), 0.0)
	assert.InDelta(t, math.Exp(0.1*float64(hs.Low)), float64(v.RelativeMargin), 1e-12, "10% of the host's effect at its low end")
	assert.Less(t, float64(v.Margin), math.Exp(0.1*float64(hs.Estimate)), "smaller than at the estimate")
	assert.InDelta(t, math.Min(math.Exp(0.1*float64(hs.High)), 1.25), float64(v.MarginNo), 1e-12)
	vmOnly := 1 - float64(v.VM.Shift.High)/float64(hs.Estimate)
	assert.Less(t, float64(v.SILow), vmOnly, "SI's interval is wider than the VM's alone")
	assert.Less(t, float64(v.SIConfidence), 0.95)
	assert.GreaterOrEqual(t, float64(v.SIConfidence), 0.9)
}

// Ties cannot carry a p below what 3 against 3 allows, and a 2 against 2
// VM side cannot reach a 90% interval.
func TestSubsumptionSmallTiedSamples(t *testing.T) {
	cells := []Cell{cell("host", 33, 1, 310, 310, 320), cell("host", 9, 1, 100, 100, 100), cell("vm", 33, 1, 101, 100, 100), cell("vm", 9, 1, 100, 100, 101)}
	v := Subsumption(cells, "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Inconclusive, v.Outcome)
	assert.Equal(t, ReasonFewHostRepeats, v.Reason.Kind)
	assert.InDelta(t, 0.1, float64(v.Reason.Side.SmallestP), 1e-12, "the smallest p 3 against 3 can reach")
	assert.InDelta(t, 0.1, float64(v.Host.Test.P), 1e-12)
	assert.True(t, v.SI.IsNaN(), "SI only where the host's effect is shown")

	cells = []Cell{cell("host", 33, 1, around(3e6, 6)...), cell("host", 9, 1, around(1e6, 6)...), cell("vm", 33, 1, 100, 101), cell("vm", 9, 1, 100, 99)}
	v = Subsumption(cells, "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Inconclusive, v.Outcome)
	assert.Equal(t, ReasonFewVMRepeats, v.Reason.Kind)
	assert.Equal(t, 0.9, v.Reason.Confidence)
	assert.InDelta(t, 2.0/3, float64(v.Reason.Shift.Confidence), 0.01, "what 2 against 2 reach")
}

// withFlags gives cells the dispersion Cells would give them.
func withFlags(cells []Cell) []Cell {
	for i := range cells {
		cells[i].Dispersion = Disperse(cells[i].TotalRates, "loops/s")
	}
	return cells
}

// A flagged cell blocks a yes only when its most adverse repeats would
// turn it: the host's low class at its highest, its high class at its
// lowest, a VM cell at the end that pushes the VM ratio out of the band.
func TestSubsumptionFlaggedCells(t *testing.T) {
	hostLow := around(1e6, 6)
	hostLow[3] *= 77 // one repeat 77x the others, as a starved class's crumbs vary
	vmHigh := around(3e5, 6)
	vmHigh[2] *= 4
	cases := []struct {
		name     string
		cells    []Cell
		outcome  Outcome
		kind     ReasonKind
		highest  bool
		then     Outcome
		blocking []CellKey
	}{
		// Host 300x; its background cell at its highest repeat (77M)
		// still leaves 3.9x, whose band (1.14x) holds the VM's 1.00x.
		{"host low class that cannot change it", []Cell{
			cell("host", 33, 1, around(3e8, 6)...), cell("host", 9, 1, hostLow...),
			cell("vm", 33, 1, around(3e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
		}, Subsumed, NoReason, false, "", nil},
		// Host 5x, VM 1.03x; at its highest repeat background leaves the host
		// 1.25x, whose band (1.02x) the VM ratio leaves.
		{"host low class that turns it", []Cell{
			cell("host", 33, 1, around(5e6, 6)...), cell("host", 9, 1, 1e6, 1.01e6, 0.99e6, 4e6, 1.02e6, 0.98e6),
			cell("vm", 33, 1, around(3.09e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
		}, Inconclusive, ReasonBlocked, true, Inconclusive, []CellKey{{Target: "host", Workload: "fp", QoS: 9, Threads: 1}}},
		// The VM's high class at its highest repeat keeps a 4x effect.
		{"vm cell that turns it", []Cell{
			cell("host", 33, 1, around(3e8, 6)...), cell("host", 9, 1, around(1e6, 6)...),
			cell("vm", 33, 1, vmHigh...), cell("vm", 9, 1, around(3e5, 6)...),
		}, Inconclusive, ReasonBlocked, true, NotSubsumed, []CellKey{{Target: "vm", Workload: "fp", QoS: 33, Threads: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Subsumption(withFlags(c.cells), "fp", "", "host", "vm", DefaultMargins())
			assert.Equal(t, c.outcome, v.Outcome, v.Reason)
			assert.Equal(t, c.kind, v.Reason.Kind)
			if c.kind == ReasonBlocked {
				require.Len(t, v.Reason.Blockers, 1)
				b := v.Reason.Blockers[0]
				assert.Equal(t, c.highest, b.Highest)
				assert.Equal(t, c.then, b.Then)
				assert.NotEqual(t, NoReason, b.Because.Kind, "what the rule would say then, with its reason")
			}
			var blocking []CellKey
			for _, b := range v.Blocking {
				blocking = append(blocking, b.CellKey)
			}
			assert.Equal(t, c.blocking, blocking)
			require.Len(t, v.Flagged, 1)
			assert.Equal(t, c.outcome == Subsumed, v.FlagsChecked)
			if c.outcome == Subsumed {
				ws := v.Warnings(c.cells).Cells
				require.Len(t, ws, 1)
				assert.Equal(t, [2]any{"host fp qos=9 threads=1", EffectCannotChange}, [2]any{cellText(ws[0].Cell.CellKey), ws[0].Effect})
			} else {
				assert.Equal(t, EffectBlocks, v.Warnings(c.cells).Cells[0].Effect)
			}
		})
	}

	// Two flagged host background cells, each of which alone leaves a
	// yes, and both together do not: host 100x, each background cell with
	// one repeat at a fifth of it, the VM 1.15x.
	low1, low2 := around(1e6, 6), around(2e6, 6)
	low1[0], low2[0] = 20e6, 40e6
	cells := withFlags([]Cell{
		cell("host", 33, 1, around(1e8, 6)...), cell("host", 9, 1, low1...),
		cell("host", 33, 2, around(2e8, 6)...), cell("host", 9, 2, low2...),
		cell("vm", 33, 1, around(3.45e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
		cell("vm", 33, 2, around(6.9e5, 6)...), cell("vm", 9, 2, around(6e5, 6)...),
	})
	for _, one := range []int{1, 3} {
		alone := slices.Clone(cells)
		alone[one].Dispersion = Disperse(around(1e6, 6), "loops/s")
		require.Equal(t, Subsumed, Subsumption(alone, "fp", "", "host", "vm", DefaultMargins()).Outcome, "with only the other cell flagged")
	}
	v := Subsumption(cells, "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Inconclusive, v.Outcome, v.Reason)
	require.Len(t, v.Blocking, 2)
	assert.Equal(t, []CellKey{cells[1].CellKey, cells[3].CellKey}, []CellKey{v.Blocking[0].CellKey, v.Blocking[1].CellKey})
	assert.Equal(t, ReasonBlockedTogether, v.Reason.Kind)
	require.Len(t, v.Reason.Blockers, 2)
	for i, b := range v.Reason.Blockers {
		assert.Equal(t, cells[2*i+1].CellKey, b.Cell.CellKey)
		assert.True(t, b.Highest, "a host low class at its highest")
		assert.Equal(t, []float64{20e6, 40e6}[i], b.Rate)
		assert.Equal(t, Inconclusive, b.Then)
		assert.Equal(t, ReasonOutsideBandAt, b.Because.Kind)
		assert.Equal(t, 1, b.Because.Threads)
	}
}

// Yes needs every thread count inside the band; one wholly outside it
// (at the Bonferroni level) is a no; a thread count only one side ran is
// named with its ratio.
func TestSubsumptionEveryThreadCount(t *testing.T) {
	var cells []Cell
	for th := 1; th <= 4; th++ {
		k := float64(th)
		cells = append(cells, cell("host", 33, th, around(3e8*k, 6)...), cell("host", 9, th, around(1e6*k, 6)...), cell("vm", 9, th, around(3e5*k, 6)...))
	}
	vm := func(ratio4 float64, spread float64) []Cell {
		out := []Cell{}
		for th := 1; th <= 3; th++ {
			out = append(out, cell("vm", 33, th, around(3e5*float64(th), 6)...))
		}
		r := around(3e5*4*ratio4, 6)
		for i := range r {
			r[i] *= 1 + spread*float64(i%3-1)
		}
		return append(out, cell("vm", 33, 4, r...))
	}

	v := Subsumption(append(slices.Clone(cells), vm(1.6, 0)...), "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, NotSubsumed, v.Outcome, v.Reason)
	assert.Equal(t, ReasonVMKeeps, v.Reason.Kind)
	assert.Equal(t, 4, v.Reason.Threads)
	assert.InDelta(t, 0.975, v.Reason.Level, 1e-12, "Bonferroni over the 4 thread counts")
	assert.Equal(t, 4, v.Reason.ThreadCounts)
	assert.InDelta(t, 1.6, math.Exp(float64(v.Reason.Shift.Estimate)), 1e-9)
	assert.Less(t, float64(v.VM.Shift.High), math.Log(1.25), "the pooled ratio alone lies inside the band")

	v = Subsumption(append(slices.Clone(cells), vm(1.15, 0.2)...), "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Inconclusive, v.Outcome, v.Reason)
	assert.Equal(t, ReasonOutsideBandAt, v.Reason.Kind)
	assert.Equal(t, 4, v.Reason.Threads)
	assert.Greater(t, math.Exp(float64(v.Reason.Shift.High)), 1.3)
	require.Len(t, v.VMByThreads, 4)

	v = Subsumption(append(slices.Clone(cells), vm(1, 0)...), "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Subsumed, v.Outcome, v.Reason)
	assert.Equal(t, []int{1, 2, 3, 4}, v.Threads)

	// The host ran 5 threads too, the VM did not.
	more := append(slices.Clone(cells), vm(1, 0)...)
	more = append(more, cell("host", 33, 5, around(1.5e9, 6)...), cell("host", 9, 5, around(5e6, 6)...))
	v = Subsumption(more, "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Subsumed, v.Outcome)
	require.Len(t, v.Dropped, 1)
	assert.Equal(t, DroppedThreads{Threads: 5, Side: "host", Ratio: v.Dropped[0].Ratio}, v.Dropped[0])
	assert.InDelta(t, 300, float64(v.Dropped[0].Ratio), 1e-9)
}

// Between the band's yes edge and its no edge, which differ by the host's
// uncertainty, the host's interval decides, not the VM's repeats.
func TestSubsumptionGrayZone(t *testing.T) {
	wide := []float64{2.6, 4.1, 6.7, 9.5, 14.9, 5.2}
	lo, hi := make([]float64, 6), make([]float64, 6)
	for i := range lo {
		lo[i] = 1e6 * (1 + 0.001*float64(i))
		hi[i] = lo[i] * wide[i]
	}
	cells := []Cell{cell("host", 33, 1, hi...), cell("host", 9, 1, lo...), cell("vm", 33, 1, around(3e5*1.21, 6)...), cell("vm", 9, 1, around(3e5, 6)...)}
	v := Subsumption(cells, "fp", "", "host", "vm", DefaultMargins())
	require.Less(t, float64(v.Margin), float64(v.MarginNo), "the host's interval sets two edges")
	assert.Equal(t, Inconclusive, v.Outcome, v.Reason)
	assert.Equal(t, ReasonBetweenEdges, v.Reason.Kind)
	assert.InDelta(t, float64(v.Margin), v.Reason.Yes, 1e-12)
	assert.InDelta(t, float64(v.MarginNo), v.Reason.No, 1e-12)
}

// When the host's ties, not its sizes, keep its p from 0.05, the reason
// says ties.
func TestSubsumptionTiesSetTheFloor(t *testing.T) {
	cells := []Cell{
		cell("host", 33, 1, 300, 300, 300, 300, 100, 100), cell("host", 9, 1, 100, 100, 100, 100, 100, 100),
		cell("vm", 33, 1, around(3e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
	}
	v := Subsumption(cells, "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Inconclusive, v.Outcome)
	assert.Equal(t, ReasonTiedHost, v.Reason.Kind)
	assert.InDelta(t, 0.061, float64(v.Reason.Side.SmallestP), 0.001)
	assert.InDelta(t, 0.0022, v.Reason.UntiedP, 0.0001)
}

// A side whose thread counts disagree is said.
func TestSubsumptionHeterogeneity(t *testing.T) {
	cells := []Cell{
		cell("host", 33, 1, around(206e6, 6)...), cell("host", 9, 1, around(1e6, 6)...),
		cell("host", 33, 2, around(712e6, 6)...), cell("host", 9, 2, around(2e6, 6)...),
		cell("vm", 33, 1, around(3e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
		cell("vm", 33, 2, around(6e5, 6)...), cell("vm", 9, 2, around(6e5, 6)...),
	}
	v := Subsumption(cells, "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Subsumed, v.Outcome)
	require.Len(t, v.Heterogeneity, 1)
	assert.Equal(t, "host", v.Heterogeneity[0].Target, "the host's thread counts disagree, the VM's do not")
}

// A repeat that did no work is left out of a comparison's test, as it is
// out of its medians.
func TestCompareLeavesIdleRepeatsOut(t *testing.T) {
	old := cell("host", 33, 1, 100, 101, 102, 103, 104, 105)
	withIdle := cell("host", 33, 1, 0, 0, 100.5, 101.5, 102.5, 103.5)
	ch := Compare(old, withIdle)
	assert.Equal(t, 4, ch.Test.N1, "the two idle repeats are not ranked")
	assert.Equal(t, 6, ch.Test.N2)
	assert.False(t, ch.Test.Significant(Alpha), "interleaved working repeats: no difference")
}
