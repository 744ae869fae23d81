package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cell builds a cell of fp from per-repeat total rates.
func cell(target string, qos, threads int, rates ...float64) Cell {
	return Cell{CellKey: CellKey{Target: target, Workload: "fp", QoS: qos, Threads: threads}, Unit: "loops",
		TotalRate: Summarize(rates), TotalRates: rates}
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
	assert.Equal(t, "~", FormatDelta(got[1].Ratio, got[1].Test, Alpha))
	assert.Equal(t, "3.1x (p=0.0079)", FormatDelta(got[0].Ratio, got[0].Test, Alpha))
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
		{2, 0.5, 2, true},    // the VM reverses the classes
		{1.01, 1, 1, true},   // smallest host effect with an SI
		{1.005, 1, 0, false}, // host effect under 1%: SI would be noise
		{1, 1, 0, false},
		{0.5, 1, 0, false}, // low class faster on the host
		{math.NaN(), 1, 0, false},
		{3, math.NaN(), 0, false},
		{math.Inf(1), 1, 0, false},
	}
	for _, c := range cases {
		si, ok := SubsumptionIndex(c.host, c.vm)
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
		line    string
	}{
		{
			// Host: 3.1x, separated (p = 2/252² = 3.1e-5). VM: 1.01x,
			// interleaved, its interval [0.972..1.05] wholly below the
			// margin 3.1^0.1 = 1.12x.
			"subsumed",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, vm33), at("vm", 9, vm9)),
			Subsumed,
			"QoS subsumed in VM: yes (SI 0.992 [0.958..1.025]; host 33/9 = 3.1x, p<0.001; vm 33/9 = 1.01x [0.972..1.05], below the margin 1.12x (10% of the host's effect))",
		},
		{
			// The VM keeps 2.5x of the host's 3.1x, its whole interval
			// above the margin: SI = 1 - ln 2.5/ln 3.1 = 0.19.
			"not subsumed",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, scale(host9, 2.5)), at("vm", 9, host9)),
			NotSubsumed,
			"QoS subsumed in VM: no (SI 0.190 [0.173..0.208]; host 33/9 = 3.1x, p<0.001; vm 33/9 = 2.5x [2.45..2.55], above the margin 1.12x (10% of the host's effect))",
		},
		{
			// The VM keeps 1.12x, right at the margin: its interval
			// straddles it, and only more repeats would tell.
			"vm straddles the margin",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, scale(vm9, 1.12)), at("vm", 9, vm9)),
			Inconclusive,
			"QoS subsumed in VM: inconclusive (SI 0.900 [0.866..0.933]; host 33/9 = 3.1x, p<0.001; vm 33/9 = 1.12x [1.08..1.16]): the vm ratio's interval straddles the margin: more repeats would tell",
		},
		{
			// No QoS effect on the host: nothing to subsume, and the verdict
			// must not say yes although the VM is flat too.
			"host flat",
			join(at("host", 33, vm33), at("host", 9, vm9), at("vm", 33, vm33), at("vm", 9, vm9)),
			Inconclusive,
			"QoS subsumed in VM: inconclusive (SI n/a; host 33/9 = 1.01x, p=0.51; vm 33/9 = 1.01x [0.972..1.05]): host shows no significant QoS effect, so there is nothing to subsume; on a Linux host whose cores are alike QoS only decides who runs when cores are scarce: run with contention (qoslab run --default contention)",
		},
		{
			// 3 against 3 at one thread count: the smallest p the test
			// can reach is 0.1, so even a 3x host effect cannot count.
			"too few repeats",
			[]Cell{cell("host", 33, 1, host33[:3]...), cell("host", 9, 1, host9[:3]...), cell("vm", 33, 1, vm33[:3]...), cell("vm", 9, 1, vm9[:3]...)},
			Inconclusive,
			"QoS subsumed in VM: inconclusive (SI 0.991 [0.957..1.026] (90%); host 33/9 = 3.08x, p=0.1; vm 33/9 = 1.01x [0.971..1.05] (90%)): too few repeats to tell (smallest reachable p 0.1 with 3 vs 3 repeats)",
		},
		{
			// Significant, but the low class is the faster one on the host.
			"host reversed",
			join(at("host", 33, host9), at("host", 9, host33), at("vm", 33, vm33), at("vm", 9, vm9)),
			Inconclusive,
			"QoS subsumed in VM: inconclusive (SI n/a; host 33/9 = 0.323x, p<0.001; vm 33/9 = 1.01x [0.972..1.05]): on host QoS 33 is not faster than QoS 9, so there is no effect to subsume",
		},
		{
			// One repeat per VM cell: 2x, but two strata of 1v1 give an
			// interval of 50% coverage at best: no decision either way.
			"vm too few repeats",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, []float64{200}), at("vm", 9, []float64{100})),
			Inconclusive,
			"QoS subsumed in VM: inconclusive (SI 0.387 [0.387..0.387] (50%); host 33/9 = 3.1x, p<0.001; vm 33/9 = 2x [2..2] (50%)): too few vm repeats for a 95% interval of its ratio (1 vs 1 repeats at each of 2 thread counts reach 50%)",
		},
		{
			// 21 is run too, on the host only: the extremes common to
			// both targets, 33 and 9, are compared.
			"middle class ignored",
			join(at("host", 33, host33), at("host", 21, host33), at("host", 9, host9), at("vm", 33, vm33), at("vm", 9, vm9), at("vm", 25, vm33)),
			Subsumed,
			"QoS subsumed in VM: yes (SI 0.992 [0.958..1.025]; host 33/9 = 3.1x, p<0.001; vm 33/9 = 1.01x [0.972..1.05], below the margin 1.12x (10% of the host's effect))",
		},
		{
			"one class",
			join(at("host", 33, host33), at("vm", 33, vm33), at("vm", 9, vm9)),
			Inconclusive,
			"QoS subsumed in VM: inconclusive: fp has no two QoS classes run on both host and vm",
		},
		{
			"no common thread count",
			[]Cell{cell("host", 33, 1, host33...), cell("host", 9, 1, host9...), cell("vm", 33, 2, vm33...), cell("vm", 9, 2, vm9...)},
			Inconclusive,
			"QoS subsumed in VM: inconclusive: fp has no thread count run at QoS 33 and 9 on both host and vm",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Subsumption(c.cells, "fp", "", "host", "vm")
			assert.Equal(t, c.outcome, v.Outcome)
			assert.Equal(t, c.line, v.String())
		})
	}

	// Other workloads and phases stay out of the verdict.
	cells := join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, vm33), at("vm", 9, vm9))
	other := cell("vm", 9, 1, 1, 1, 1)
	other.Workload = "mmul"
	v := Subsumption(append(cells, other), "fp", "", "host", "vm")
	assert.Equal(t, Subsumed, v.Outcome)
	assert.Equal(t, Inconclusive, Subsumption(cells, "fp", "compress", "host", "vm").Outcome)
}

func TestFormatRatio(t *testing.T) {
	cases := map[float64]string{
		3.1: "3.1x", 1.0096: "1.01x", 3: "3x", 12.34: "12.3x", 123.4: "123x", 1234.6: "1235x",
		0.5: "0.5x", 0.01234: "0.0123x", 9.996: "10x", 0: "0x", math.NaN(): "n/a", math.Inf(1): "n/a",
	}
	for r, want := range cases {
		assert.Equal(t, want, FormatRatio(Float(r)), "%v", r)
	}
}

func TestFastestFirst(t *testing.T) {
	cells := []Cell{cell("host", 9, 1, 10), cell("host", 9, 2, 30), cell("host", 9, 3, 10), cell("host", 9, 4, 20)}
	var order []int
	for _, c := range FastestFirst(cells) {
		order = append(order, c.Threads)
	}
	assert.Equal(t, []int{2, 4, 1, 3}, order, "ties keep their order")
	assert.Equal(t, 1, cells[0].Threads, "the input is not reordered")
}
