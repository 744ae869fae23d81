package render

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
)

// cell builds a cell of fp from per-repeat total rates.
func cell(target string, qos, threads int, rates ...float64) analysis.Cell {
	return analysis.Cell{CellKey: analysis.CellKey{Target: target, Workload: "fp", QoS: qos, Threads: threads}, Unit: "loops",
		TotalRate: analysis.OrderStatsOf(rates), TotalRates: rates}
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

// withFlags gives cells the dispersion Cells would give them.
func withFlags(cells []analysis.Cell) []analysis.Cell {
	for i := range cells {
		cells[i].Dispersion = analysis.Disperse(cells[i].TotalRates, "loops/s")
	}
	return cells
}

func TestVerdictText(t *testing.T) {
	at := func(target string, qos int, rates []float64) []analysis.Cell {
		return []analysis.Cell{cell(target, qos, 1, rates...), cell(target, qos, 2, scale(rates, 2)...)}
	}
	join := func(parts ...[]analysis.Cell) []analysis.Cell {
		var out []analysis.Cell
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name    string
		cells   []analysis.Cell
		outcome analysis.Outcome
		line    string
	}{
		{
			// Host: 3.1x [3.04..3.16], separated (p = 2/252² = 3.1e-5).
			// VM: 1.01x, interleaved, its 90% interval [0.99..1.03] wholly
			// inside the band 1/1.12..1.12, 1.12 = 3.04^0.1 (under 1.25).
			"subsumed",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, vm33), at("vm", 9, vm9)),
			analysis.Subsumed,
			"QoS subsumed in VM: yes (at 1 and 2 threads; SI 0.992 [0.958..1.025]; host 33/9 = 3.1x [3.04..3.16], p<0.001; vm 33/9 = 1.0096x [0.9902..1.03]; band 0.895x..1.12x: margins 1.12x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)",
		},
		{
			// The VM keeps 2.5x of the host's 3.1x, its whole interval
			// above the margin: SI = 1 - ln 2.5/ln 3.1 = 0.19.
			"not subsumed",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, scale(host9, 2.5)), at("vm", 9, host9)),
			analysis.NotSubsumed,
			"QoS subsumed in VM: no: the VM keeps a QoS effect, 33/9 = 2.5x (at 1 and 2 threads; SI 0.190 [0.156..0.223]; host 33/9 = 3.1x [3.04..3.16], p<0.001; vm 33/9 = 2.5x [2.47..2.53]; band 0.895x..1.12x: margins 1.12x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)",
		},
		{
			// The VM keeps 1.12x, right at the margin: its interval
			// crosses it, and only more repeats would tell.
			"vm straddles the margin",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, scale(vm9, 1.12)), at("vm", 9, vm9)),
			analysis.Inconclusive,
			"QoS subsumed in VM: inconclusive: the vm ratio's interval crosses the band's edge: more repeats would tell (at 1 and 2 threads; SI 0.900 [0.864..0.934]; host 33/9 = 3.1x [3.04..3.16], p<0.001; vm 33/9 = 1.12x [1.1..1.14]; band 0.895x..1.12x: margins 1.12x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)",
		},
		{
			// No QoS effect on the host: nothing to subsume, and the verdict
			// must not say yes although the VM is flat too.
			"host flat",
			join(at("host", 33, vm33), at("host", 9, vm9), at("vm", 33, vm33), at("vm", 9, vm9)),
			analysis.Inconclusive,
			"QoS subsumed in VM: inconclusive: host shows no significant QoS effect, so there is nothing to subsume; on a Linux host whose cores are alike QoS only decides who runs when cores are scarce: run with contention, as qoslab run --default contention does (at 1 and 2 threads; SI n/a; host 33/9 = 1.0096x [0.9902..1.03], p=0.51; vm 33/9 = 1.0096x [0.9902..1.03]; 90% intervals, two one-sided tests at 5%)",
		},
		{
			// 3 against 3 at one thread count: the smallest p the test
			// can reach is 0.1, so even a 3x host effect cannot count.
			"too few repeats",
			[]analysis.Cell{cell("host", 33, 1, host33[:3]...), cell("host", 9, 1, host9[:3]...), cell("vm", 33, 1, vm33[:3]...), cell("vm", 9, 1, vm9[:3]...)},
			analysis.Inconclusive,
			"QoS subsumed in VM: inconclusive: too few host repeats to tell (smallest reachable p 0.1 with 3 vs 3 repeats) (at 1 thread; SI n/a; host 33/9 = 3.08x [3..3.16], p=0.1; vm 33/9 = 1.0098x [0.971..1.05]; 90% intervals, two one-sided tests at 5%)",
		},
		{
			// Significant, but the low class is the faster one on the host.
			"host reversed",
			join(at("host", 33, host9), at("host", 9, host33), at("vm", 33, vm33), at("vm", 9, vm9)),
			analysis.Inconclusive,
			"QoS subsumed in VM: inconclusive: on host QoS 9 is faster than QoS 33 (33/9 = 0.323x), so there is no effect to subsume (at 1 and 2 threads; SI n/a; host 33/9 = 0.323x [0.316..0.329], p<0.001; vm 33/9 = 1.0096x [0.9902..1.03]; 90% intervals, two one-sided tests at 5%)",
		},
		{
			// One repeat per VM cell: 2x, but two strata of 1v1 give an
			// interval of 50% coverage at best: no decision either way.
			"vm too few repeats",
			join(at("host", 33, host33), at("host", 9, host9), at("vm", 33, []float64{200}), at("vm", 9, []float64{100})),
			analysis.Inconclusive,
			"QoS subsumed in VM: inconclusive: too few vm repeats for a 90% interval of its ratio (1 vs 1 repeats at each of 2 thread counts reach 50%) (at 1 and 2 threads; SI 0.387 [0.375..0.399] (48%); host 33/9 = 3.1x [3.04..3.16], p<0.001; vm 33/9 = 2x [2..2] (50%); band 0.895x..1.12x: margins 1.12x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)",
		},
		{
			// 21 is run too, on the host only: the extremes common to
			// both targets, 33 and 9, are compared.
			"middle class ignored",
			join(at("host", 33, host33), at("host", 21, host33), at("host", 9, host9), at("vm", 33, vm33), at("vm", 9, vm9), at("vm", 25, vm33)),
			analysis.Subsumed,
			"QoS subsumed in VM: yes (at 1 and 2 threads; SI 0.992 [0.958..1.025]; host 33/9 = 3.1x [3.04..3.16], p<0.001; vm 33/9 = 1.0096x [0.9902..1.03]; band 0.895x..1.12x: margins 1.12x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)",
		},
		{
			"one class",
			join(at("host", 33, host33), at("vm", 33, vm33), at("vm", 9, vm9)),
			analysis.Inconclusive,
			"QoS subsumed in VM: inconclusive: fp has no two QoS classes run on both host and vm",
		},
		{
			"no common thread count",
			[]analysis.Cell{cell("host", 33, 1, host33...), cell("host", 9, 1, host9...), cell("vm", 33, 2, vm33...), cell("vm", 9, 2, vm9...)},
			analysis.Inconclusive,
			"QoS subsumed in VM: inconclusive: fp has no thread count run at QoS 33 and 9 on both host and vm",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := analysis.Subsumption(c.cells, "fp", "", "host", "vm", analysis.DefaultMargins())
			assert.Equal(t, c.outcome, v.Outcome)
			assert.Equal(t, c.line, VerdictText(v))
		})
	}
}

// The cases an independent recomputation found the old rule answered
// wrongly (issue 21): each now gets its true outcome and reason.
func TestReasonTextOfNoAndUndefined(t *testing.T) {
	at := func(target string, qos int, byThreads ...[]float64) []analysis.Cell {
		var out []analysis.Cell
		for i, r := range byThreads {
			out = append(out, cell(target, qos, i+1, r...))
		}
		return out
	}
	join := func(parts ...[]analysis.Cell) []analysis.Cell {
		var out []analysis.Cell
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	host := func(ratio float64) []analysis.Cell {
		return join(at("host", 33, around(1e6*ratio, 6), around(2e6*ratio, 6)), at("host", 9, around(1e6, 6), around(2e6, 6)))
	}
	// tight: rates 0.01% apart, so that a 0.5% effect is significant.
	tight := func(target string, ratio float64) []analysis.Cell {
		var hi, lo []float64
		for i := range 6 {
			lo = append(lo, 1e6*(1+1e-4*float64((i*5)%6)))
			hi = append(hi, 1e6*ratio*(1+1e-4*float64((i*5)%6)))
		}
		return join(at(target, 33, hi), at(target, 9, lo))
	}
	vm := func(ratio float64) []analysis.Cell {
		return join(at("vm", 33, around(3e5*ratio, 6), around(6e5*ratio, 6)), at("vm", 9, around(3e5, 6), around(6e5, 6)))
	}
	cases := []struct {
		name    string
		cells   []analysis.Cell
		margins analysis.Margins
		outcome analysis.Outcome
		reason  string
	}{
		// Host 240x, VM 0.194x: the VM runs QoS 33 five times slower.
		{"reversal", join(host(240), vm(0.194)), analysis.DefaultMargins(), analysis.NotSubsumed, "QoS reversed in the VM, 33/9 = 0.194x"},
		// Host 1010x, VM 1.87x: 9% of the host's effect on the log scale,
		// but far outside 1.25x.
		{"large vm effect", join(host(1010), vm(1.87)), analysis.DefaultMargins(), analysis.NotSubsumed, "the VM keeps a QoS effect, 33/9 = 1.87x"},
		// The same with an absolute margin of 2x: 1.87x is inside it, and
		// inside 10% of 1010x (2x).
		{"absolute margin set", join(host(1010), vm(1.87)), analysis.Margins{Relative: 0.1, Absolute: 2}, analysis.Subsumed, ""},
		{"subsumed", join(host(240), vm(1.02)), analysis.DefaultMargins(), analysis.Subsumed, ""},
		// A significant 0.5% host effect is an effect (the old rule called
		// anything under 1.01x "not faster"); its band is tiny, and a VM
		// keeping 0.2% keeps too much of it.
		{"host 1.005x", join(tight("host", 1.005), tight("vm", 1.002)), analysis.DefaultMargins(), analysis.NotSubsumed, "the VM keeps a QoS effect, 33/9 = 1.002x"},
		{"vm did no work", join(host(240), at("vm", 33, around(3e5, 6), around(6e5, 6)), at("vm", 9, make([]float64, 6), make([]float64, 6))), analysis.DefaultMargins(),
			analysis.Inconclusive, "on vm QoS 9 did no work in any repeat (rate 0), so its 33/9 ratio is undefined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := analysis.Subsumption(c.cells, "fp", "", "host", "vm", c.margins)
			assert.Equal(t, c.outcome, v.Outcome, VerdictText(v))
			assert.Equal(t, c.reason, VerdictReason(v))
		})
	}
}

// Ties cannot carry a p below what 3 against 3 allows, and a 2 against 2
// VM side cannot reach a 90% interval.
func TestReasonTextOfTooFewRepeats(t *testing.T) {
	cells := []analysis.Cell{cell("host", 33, 1, 310, 310, 320), cell("host", 9, 1, 100, 100, 100), cell("vm", 33, 1, 101, 100, 100), cell("vm", 9, 1, 100, 100, 101)}
	v := analysis.Subsumption(cells, "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Inconclusive, v.Outcome)
	assert.Equal(t, "too few host repeats to tell (smallest reachable p 0.1 with 3 vs 3 repeats)", VerdictReason(v))

	cells = []analysis.Cell{cell("host", 33, 1, around(3e6, 6)...), cell("host", 9, 1, around(1e6, 6)...), cell("vm", 33, 1, 100, 101), cell("vm", 9, 1, 100, 99)}
	v = analysis.Subsumption(cells, "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Inconclusive, v.Outcome)
	assert.Equal(t, "too few vm repeats for a 90% interval of its ratio (2 vs 2 repeats reach 67%)", VerdictReason(v))
}

// A flagged cell blocks a yes only when its most adverse repeats would
// turn it: the host's low class at its highest, its high class at its
// lowest, a VM cell at the end that pushes the VM ratio out of the band.
func TestReasonTextOfBlockingCells(t *testing.T) {
	hostLow := around(1e6, 6)
	hostLow[3] *= 77 // one repeat 77x the others, as a starved class's crumbs vary
	vmHigh := around(3e5, 6)
	vmHigh[2] *= 4
	cases := []struct {
		name     string
		cells    []analysis.Cell
		outcome  analysis.Outcome
		reason   string
		blocking []string
	}{
		// Host 300x; its background cell at its highest repeat (77M)
		// still leaves 3.9x, whose band (1.14x) holds the VM's 1.00x.
		{"host low class that cannot change it", []analysis.Cell{
			cell("host", 33, 1, around(3e8, 6)...), cell("host", 9, 1, hostLow...),
			cell("vm", 33, 1, around(3e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
		}, analysis.Subsumed, "", nil},
		// Host 5x, VM 1.03x; at its highest repeat background leaves the host
		// 1.25x, whose band (1.02x) the VM ratio leaves.
		{"host low class that turns it", []analysis.Cell{
			cell("host", 33, 1, around(5e6, 6)...), cell("host", 9, 1, 1e6, 1.01e6, 0.99e6, 4e6, 1.02e6, 0.98e6),
			cell("vm", 33, 1, around(3.09e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
		}, analysis.Inconclusive, "host fp qos=9 threads=1 repeats 4.08x apart: at its highest repeat (4M loops/s) the answer would not be yes " +
			"(inconclusive: the vm ratio's interval crosses the band's edge: more repeats would tell): repeats of it that agree would decide it",
			[]string{"host fp qos=9 threads=1 repeats 4.08x apart"}},
		// The VM's high class at its highest repeat keeps a 4x effect.
		{"vm cell that turns it", []analysis.Cell{
			cell("host", 33, 1, around(3e8, 6)...), cell("host", 9, 1, around(1e6, 6)...),
			cell("vm", 33, 1, vmHigh...), cell("vm", 9, 1, around(3e5, 6)...),
		}, analysis.Inconclusive, "vm fp qos=33 threads=1 repeats 4.16x apart: at its highest repeat (1.218M loops/s) the answer would not be yes " +
			"(no: the VM keeps a QoS effect, 33/9 = 4.06x): repeats of it that agree would decide it",
			[]string{"vm fp qos=33 threads=1 repeats 4.16x apart"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := analysis.Subsumption(withFlags(c.cells), "fp", "", "host", "vm", analysis.DefaultMargins())
			assert.Equal(t, c.outcome, v.Outcome, VerdictText(v))
			assert.Equal(t, c.reason, VerdictReason(v))
			if c.outcome == analysis.Subsumed {
				assert.Contains(t, VerdictText(v), "; 1 flagged cell cannot change it: at its most adverse repeats the answer stays yes")
			}
		})
	}

	// Two flagged host background cells, each of which alone leaves a
	// yes, and both together do not: host 100x, each background cell with
	// one repeat at a fifth of it, the VM 1.15x.
	low1, low2 := around(1e6, 6), around(2e6, 6)
	low1[0], low2[0] = 20e6, 40e6
	cells := withFlags([]analysis.Cell{
		cell("host", 33, 1, around(1e8, 6)...), cell("host", 9, 1, low1...),
		cell("host", 33, 2, around(2e8, 6)...), cell("host", 9, 2, low2...),
		cell("vm", 33, 1, around(3.45e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
		cell("vm", 33, 2, around(6.9e5, 6)...), cell("vm", 9, 2, around(6e5, 6)...),
	})
	v := analysis.Subsumption(cells, "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Inconclusive, v.Outcome, VerdictText(v))
	assert.Equal(t, "host fp qos=9 threads=1 repeats 20.3x apart; host fp qos=9 threads=2 repeats 20.3x apart: together, "+
		"host fp qos=9 threads=1 at its highest repeat (20M loops/s) and host fp qos=9 threads=2 at its highest repeat (40M loops/s), they would turn the answer "+
		"(inconclusive: the vm ratio at 1 thread, 33/9 = 1.15x [1.13..1.17], is not inside the band, and yes needs every thread count inside it: more repeats would tell): "+
		"repeats of them that agree would decide it", VerdictReason(v))
	doc := VerdictDocument(v)
	assert.Equal(t, []string{"host fp qos=9 threads=1 repeats 20.3x apart", "host fp qos=9 threads=2 repeats 20.3x apart"}, doc.Blocking)
	assert.Equal(t, doc.Blocking, doc.Flagged, "both flagged cells block it")
}

// Yes needs every thread count inside the band; one wholly outside it
// (at the Bonferroni level) is a no; a thread count only one side ran is
// named with its ratio.
func TestReasonTextAtOneThreadCount(t *testing.T) {
	var cells []analysis.Cell
	for th := 1; th <= 4; th++ {
		k := float64(th)
		cells = append(cells, cell("host", 33, th, around(3e8*k, 6)...), cell("host", 9, th, around(1e6*k, 6)...), cell("vm", 9, th, around(3e5*k, 6)...))
	}
	vm := func(ratio4 float64, spread float64) []analysis.Cell {
		out := []analysis.Cell{}
		for th := 1; th <= 3; th++ {
			out = append(out, cell("vm", 33, th, around(3e5*float64(th), 6)...))
		}
		r := around(3e5*4*ratio4, 6)
		for i := range r {
			r[i] *= 1 + spread*float64(i%3-1)
		}
		return append(out, cell("vm", 33, 4, r...))
	}

	v := analysis.Subsumption(append(slices.Clone(cells), vm(1.6, 0)...), "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.NotSubsumed, v.Outcome, VerdictText(v))
	assert.Equal(t, "the VM keeps a QoS effect at 4 threads (33/9 = 1.6x [1.55..1.65], a 97.5% interval: 90% over the 4 thread counts)", VerdictReason(v))

	v = analysis.Subsumption(append(slices.Clone(cells), vm(1.15, 0.2)...), "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Inconclusive, v.Outcome, VerdictText(v))
	assert.Regexp(t, `^the vm ratio at 4 threads, 33/9 = 1\.1\d*x \[[0-9.]+\.\.1\.[3-9]\d*\], is not inside the band, and yes needs every thread count inside it: more repeats would tell$`, VerdictReason(v))

	v = analysis.Subsumption(append(slices.Clone(cells), vm(1, 0)...), "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Subsumed, v.Outcome, VerdictText(v))
	assert.Contains(t, VerdictText(v), "(at 1, 2, 3 and 4 threads; SI ")

	// The host ran 5 threads too, the VM did not.
	more := append(slices.Clone(cells), vm(1, 0)...)
	more = append(more, cell("host", 33, 5, around(1.5e9, 6)...), cell("host", 9, 5, around(5e6, 6)...))
	v = analysis.Subsumption(more, "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Subsumed, v.Outcome)
	assert.Contains(t, VerdictText(v), "; left out 5 threads, where only host ran both classes (host 33/9 = 300x)")
}

// Between the band's yes edge and its no edge, which differ by the host's
// uncertainty, the host's interval decides, not the VM's repeats.
func TestReasonTextBetweenTheEdges(t *testing.T) {
	wide := []float64{2.6, 4.1, 6.7, 9.5, 14.9, 5.2}
	lo, hi := make([]float64, 6), make([]float64, 6)
	for i := range lo {
		lo[i] = 1e6 * (1 + 0.001*float64(i))
		hi[i] = lo[i] * wide[i]
	}
	cells := []analysis.Cell{cell("host", 33, 1, hi...), cell("host", 9, 1, lo...), cell("vm", 33, 1, around(3e5*1.21, 6)...), cell("vm", 9, 1, around(3e5, 6)...)}
	v := analysis.Subsumption(cells, "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Inconclusive, v.Outcome, VerdictText(v))
	assert.Contains(t, VerdictReason(v), "lies between the band's yes edge")
	assert.Contains(t, VerdictReason(v), "which differ by the host's uncertainty")
	assert.Contains(t, VerdictReason(v), "the host's interval decides, and more host repeats would narrow it")
	assert.NotContains(t, VerdictReason(v), "more repeats would tell")
}

// When the host's ties, not its sizes, keep its p from 0.05, the reason
// says ties.
func TestReasonTextOfTies(t *testing.T) {
	cells := []analysis.Cell{
		cell("host", 33, 1, 300, 300, 300, 300, 100, 100), cell("host", 9, 1, 100, 100, 100, 100, 100, 100),
		cell("vm", 33, 1, around(3e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
	}
	v := analysis.Subsumption(cells, "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Inconclusive, v.Outcome)
	assert.Equal(t, "too many tied host rates to tell: given their ties the smallest reachable p is 0.061 with 6 vs 6 repeats, where untied rates could reach 0.0022; "+
		"rates measured finer (longer cells, or more work per cell) would tell", VerdictReason(v))
}

// A side whose thread counts disagree is said.
func TestHeterogeneityText(t *testing.T) {
	cells := []analysis.Cell{
		cell("host", 33, 1, around(206e6, 6)...), cell("host", 9, 1, around(1e6, 6)...),
		cell("host", 33, 2, around(712e6, 6)...), cell("host", 9, 2, around(2e6, 6)...),
		cell("vm", 33, 1, around(3e5, 6)...), cell("vm", 9, 1, around(3e5, 6)...),
		cell("vm", 33, 2, around(6e5, 6)...), cell("vm", 9, 2, around(6e5, 6)...),
	}
	v := analysis.Subsumption(cells, "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Subsumed, v.Outcome)
	assert.Equal(t, "host 33/9 differs by thread count beyond the 95% intervals: 206x [200..212] at 1 thread, 356x [346..367] at 2 threads", HeterogeneityText(v)[0])
	assert.Contains(t, VerdictText(v), "; host 33/9 differs by thread count")
}

var (
	// The host's 250x at 6 repeats a class, the VM's 1-thread cells alike.
	seqHost9    = []float64{100, 101, 99, 102, 98, 100.5}
	seqVMTight9 = []float64{1000, 1002, 998, 1004, 996, 1001}
	seqVMTight  = []float64{1001, 1003, 999, 1005, 997, 1000}
	// Spread repeats whose exact 6 vs 6 interval, at 1.08x, reaches
	// 0.2193 (1.245x) at 90% and 0.2265 (1.254x) at 95.5%: inside the band
	// at one look, not at the first of three.
	seqVMWide9 = []float64{85, 93, 100, 107, 115, 97}
	seqVMWide  = []float64{86, 94, 101, 108, 116, 98}
)

// seqCells are a 250x host and a VM at 1 and 2 threads: 1 thread tight
// at 1x, 2 threads vm33 at 2 threads' rates (vm9 its class 9).
func seqCells(vm33, vm9 []float64) []analysis.Cell {
	return []analysis.Cell{
		cell("host", 33, 1, scale(seqHost9, 250)...), cell("host", 9, 1, seqHost9...),
		cell("host", 33, 2, scale(seqHost9, 500)...), cell("host", 9, 2, scale(seqHost9, 2)...),
		cell("vm", 33, 1, seqVMTight...), cell("vm", 9, 1, seqVMTight9...),
		cell("vm", 33, 2, vm33...), cell("vm", 9, 2, vm9...),
	}
}

// twice is a cell's repeats and a second block like them (k times them).
func twice(rates []float64, k float64) []float64 {
	return append(append([]float64(nil), rates...), scale(rates, k)...)
}

func TestVerdictTextAtLooks(t *testing.T) {
	wide := seqCells(scale(seqVMWide, 1.08), seqVMWide9)
	// 12 repeats at 2 threads, the second block like the first: at look 2
	// of 3 (97% intervals) its interval lies inside.
	twelve := seqCells(twice(seqVMWide, 1.001), twice(seqVMWide9, 1.001))
	// 12 repeats at 2 threads at 1.16x, whose interval crosses 1.25x.
	capped := seqCells(twice(scale(seqVMWide, 1.16), 1.001), twice(seqVMWide9, 1.001))
	// The same, 12 repeats at 1 thread too.
	allCapped := append(capped[:4:4], cell("vm", 33, 1, twice(seqVMTight, 1)...), cell("vm", 9, 1, twice(seqVMTight9, 1)...), capped[6], capped[7])

	one := analysis.Subsumption(wide, "fp", "", "host", "vm", analysis.DefaultMargins())
	require.Equal(t, analysis.Subsumed, one.Outcome, VerdictText(one))
	assert.Equal(t, VerdictText(one), VerdictText(analysis.SubsumptionAt(wide, "fp", "", "host", "vm", analysis.DefaultMargins(), nil)), "Subsumption is SubsumptionAt without a schedule")
	assert.Contains(t, VerdictText(one), "; 90% intervals, two one-sided tests at 5%)")

	single := analysis.SubsumptionAt(wide, "fp", "", "host", "vm", analysis.DefaultMargins(), analysis.Schedule(6, 0))
	assert.Equal(t, VerdictText(one), VerdictText(single), "a one-look schedule is today's verdict")

	for _, tc := range []struct {
		name     string
		cells    []analysis.Cell
		schedule []int
		outcome  analysis.Outcome
		text     []string
	}{
		{
			name:  "inside at 90% but not at the first look's 95.5%: undecided, a block more at that thread count",
			cells: wide, schedule: []int{6, 12, 18}, outcome: analysis.Inconclusive,
			text: []string{"inconclusive: the vm ratio at 2 threads", "more repeats would tell",
				"; 95.5% intervals at look 1 of 3 (two one-sided tests at 2.26%; 5% over the 3 looks))"},
		},
		{
			name:  "a tight VM decides at the first look",
			cells: seqCells(scale(seqVMTight, 2), scale(seqVMTight9, 2)), schedule: []int{6, 12, 18}, outcome: analysis.Subsumed,
			text: []string{"yes (at 1 and 2 threads;", "; 95.5% intervals at look 1 of 3 (two one-sided tests at 2.26%; 5% over the 3 looks))"},
		},
		{
			name:  "12 repeats at 2 threads are its second look, and decide",
			cells: twelve, schedule: []int{6, 12, 18}, outcome: analysis.Subsumed,
			text: []string{"yes after 12 repeats at 2 threads, 2 looks (at 1 and 2 threads;",
				"intervals at each thread count's look: 95.5% at 1 thread (look 1 of 3), 96.9% at 2 threads (look 2 of 3), pooled 96.9%"},
		},
		{
			name:  "the pooled interval undecided with 2 threads at the cap: a block more at 1 thread",
			cells: capped, schedule: []int{6, 12}, outcome: analysis.Inconclusive,
			text: []string{"inconclusive: the vm ratio's interval crosses the band's edge: more repeats would tell ("},
		},
		{
			name:  "undecided at the cap: no block more, and the reason says so",
			cells: allCapped, schedule: []int{6, 12}, outcome: analysis.Inconclusive,
			text: []string{"more repeats would tell; the cap of 12 repeats (max_repeats) was reached at 2 looks: a larger --max-repeats, or a quieter machine, would tell ("},
		},
		{
			name:  "a no asks for no more repeats",
			cells: seqCells(scale(seqVMTight, 4), scale(seqVMTight9, 2)), schedule: []int{6, 12, 18}, outcome: analysis.NotSubsumed,
		},
		{
			name: "a band the host's interval sets (a 5x host): the host's cells too",
			cells: append(seqCells(scale(seqVMWide, 1.08), seqVMWide9)[4:],
				cell("host", 33, 1, scale(seqVMWide9, 5)...), cell("host", 9, 1, seqVMWide...),
				cell("host", 33, 2, scale(seqVMWide9, 10)...), cell("host", 9, 2, scale(seqVMWide, 2)...)),
			schedule: []int{6, 12, 18}, outcome: analysis.Inconclusive,
			text: []string{"the vm ratio at 2 threads", "band 0.858x..1.16x: margins 1.16x (10% of the host's effect"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := analysis.SubsumptionAt(tc.cells, "fp", "", "host", "vm", analysis.DefaultMargins(), tc.schedule)
			require.Equal(t, tc.outcome, v.Outcome, VerdictText(v))
			for _, s := range tc.text {
				assert.Contains(t, VerdictText(v), s)
			}
		})
	}
}

func TestTookText(t *testing.T) {
	look := func(threads, repeats, index int) analysis.ThreadLook {
		return analysis.ThreadLook{Threads: threads, Repeats: repeats, Look: analysis.Look{Index: index, Of: 3, Level: analysis.LookLevels([]int{6, 12, 18})[index-1]}}
	}
	for _, tc := range []struct {
		name  string
		looks []analysis.ThreadLook
		want  string
	}{
		{"one look: nothing to say", nil, ""},
		{"the first look", []analysis.ThreadLook{look(1, 6, 1), look(2, 6, 1)}, ""},
		{"one thread count's second look", []analysis.ThreadLook{look(1, 6, 1), look(2, 12, 2)}, "after 12 repeats at 2 threads, 2 looks"},
		{"both at the second", []analysis.ThreadLook{look(1, 12, 2), look(2, 12, 2)}, "after 12 repeats at 1 and 2 threads, 2 looks"},
		{"each its own", []analysis.ThreadLook{look(1, 12, 2), look(2, 18, 3)}, "after 12 repeats at 1 thread and 18 at 2 threads, 3 looks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tookText(tc.looks))
		})
	}
}

// TestLooksTook: the run's closing line about its looks counts each thread
// count's repeats as the verdict judged them, not the most any block
// reached: a run whose third look added repeats at 2 threads only said
// "yes after 18 repeats at 1 and 2 threads" where 1 thread had 12.
func TestLooksTook(t *testing.T) {
	look := func(threads, repeats, index int) analysis.ThreadLook {
		return analysis.ThreadLook{Threads: threads, Repeats: repeats, Look: analysis.Look{Index: index, Of: 3, Level: analysis.LookLevels([]int{6, 12, 18})[index-1]}}
	}
	v := analysis.Verdict{Outcome: analysis.Subsumed, Looks: []analysis.ThreadLook{look(1, 12, 2), look(2, 18, 3)}}
	v.VM.Workload = "fp"
	assert.Equal(t, "fp yes after 12 repeats at 1 thread and 18 at 2 threads, 3 looks of 3", LooksTook(v))

	v.VM.Phase = "compress"
	v.Looks = []analysis.ThreadLook{look(1, 6, 1), look(2, 12, 2)}
	assert.Equal(t, "fp compress yes after 12 repeats at 2 threads, 2 looks of 3", LooksTook(v))

	v.Looks = []analysis.ThreadLook{look(1, 6, 1), look(2, 6, 1)}
	assert.Empty(t, LooksTook(v), "judged at the first look: nothing to say")

	v.Outcome = analysis.Inconclusive
	v.Reason = analysis.Reason{Kind: analysis.ReasonCrossesEdge}
	v.Looks = []analysis.ThreadLook{look(1, 18, 3), look(2, 18, 3)}
	got := LooksTook(v)
	assert.True(t, strings.HasPrefix(got, "fp compress inconclusive after 18 repeats at 1 and 2 threads, 3 looks of 3: "), got)
	assert.True(t, strings.HasSuffix(got, ": "+VerdictReason(v)), "the reason follows an answer that is not yes: %s", got)
}

// Each kind of reason is worded from its values alone.
func TestReasonTextOfConstructedValues(t *testing.T) {
	ln := func(r float64) analysis.Float { return analysis.Float(math.Log(r)) }
	host := analysis.Sensitivity{Target: "host", High: 33, Low: 9, Shift: analysis.Shift{Estimate: ln(5), Low: ln(3), High: ln(8), Confidence: 0.9}}
	vmShift := analysis.Shift{Estimate: ln(1.2), Low: ln(1.15), High: ln(1.25), Confidence: 0.9}
	cellKey := analysis.CellKey{Target: "vm", Workload: "fp", QoS: 9, Threads: 2}
	for _, c := range []struct {
		reason analysis.Reason
		want   string
	}{
		{analysis.Reason{}, ""},
		{analysis.Reason{Kind: analysis.ReasonParamSets, Workload: "compress", Params: []string{"size=4194304", "size=33554432"}},
			"compress ran with 2 sets of parameters (size=4194304; size=33554432), which one verdict cannot compare; each is judged alone"},
		{analysis.Reason{Kind: analysis.ReasonAllInterfered, VM: "vm", OtherCPU: 2.25, Runs: 12},
			"other work on the host took 2.2 CPUs during every one of the 12 vm cell runs, so none is left to judge; run again on a quieter host"},
		{analysis.Reason{Kind: analysis.ReasonInterferedCells, VM: "vm", OtherCPU: 0.5, Cells: []analysis.CellKey{cellKey, cellKey}},
			"every cell run of vm fp qos=9 threads=2 and vm fp qos=9 threads=2 was interfered with (other work on the host took 0.5 CPU during them), so none is left to judge; run again on a quieter host"},
		{analysis.Reason{Kind: analysis.ReasonNoRepeats, Side: analysis.Sensitivity{Target: "vm", High: 33, Low: 9}}, "vm has no repeats at QoS 33 and 9 to compare"},
		{analysis.Reason{Kind: analysis.ReasonIdle, Side: analysis.Sensitivity{Target: "vm", High: 33, Low: 9, IdleHigh: 1, IdleLow: 2}},
			"on vm QoS 33 and QoS 9 did no work in any repeat (rate 0), so its 33/9 ratio is undefined"},
		{analysis.Reason{Kind: analysis.ReasonNoHostEffect, Side: host},
			"host shows no significant QoS effect, so there is nothing to subsume; on a Linux host whose cores are alike QoS only decides who runs when cores are scarce: run with contention, as qoslab run --default contention does"},
		{analysis.Reason{Kind: analysis.ReasonHostReachesOne, Side: host, Confidence: 0.9}, "the host ratio's 90% interval reaches 1x, so the margin has no effect to be a share of"},
		{analysis.Reason{Kind: analysis.ReasonFewVMRepeats, VM: "vm", Threads: 2, N1: 3, N2: 2, Confidence: 0.955, Sequential: true, Shift: analysis.Shift{Confidence: 0.8}},
			"too few vm repeats at 2 threads for a 95.5% interval of its ratio (3 vs 2 repeats reach 80.0%), and yes needs every thread count inside the band"},
		{analysis.Reason{Kind: analysis.ReasonVMReversed, High: 33, Low: 9, Threads: 1, Shift: analysis.Shift{Estimate: ln(0.5), Low: ln(0.4), High: ln(0.6), Confidence: 0.95}, Level: 0.95, ThreadCounts: 2},
			"QoS reversed in the VM at 1 thread (33/9 = 0.5x [0.4..0.6], a 95.0% interval: 90% over the 2 thread counts)"},
		{analysis.Reason{Kind: analysis.ReasonBetweenEdges, VM: "vm", Host: "host", High: 33, Low: 9, Shift: vmShift, Side: host, Yes: 1.116, No: 1.231},
			"the vm ratio, 33/9 = 1.2x [1.15..1.25], lies between the band's yes edge 1.12x and its no edge 1.23x, which differ by the host's uncertainty (host 33/9 = 5x [3..8]): " +
				"the host's interval decides, and more host repeats would narrow it"},
		{analysis.Reason{Kind: analysis.ReasonHostEdge, VM: "vm", Host: "host", High: 33, Low: 9, Shift: vmShift, Side: host, Yes: 1.116, No: 1.231},
			"the vm ratio's interval crosses the band's edge 1.12x, which the low end of the host's interval sets (host 33/9 = 5x [3..8]): more repeats would tell, the host's most: its interval is what narrows the band"},
		{analysis.Reason{Kind: analysis.ReasonCrossesEdge, VM: "vm", Cap: &analysis.CapReached{Repeats: 18, Looks: 3}},
			"the vm ratio's interval crosses the band's edge: more repeats would tell; the cap of 18 repeats (max_repeats) was reached at 3 looks: a larger --max-repeats, or a quieter machine, would tell"},
	} {
		assert.Equal(t, c.want, ReasonText(c.reason), "kind %d", c.reason.Kind)
	}
}

// The verdict's line says the cell runs interference left out.
func TestVerdictTextSaysWhatInterferenceLeftOut(t *testing.T) {
	cells := []analysis.Cell{cell("host", 33, 1, host33...), cell("host", 9, 1, host9...), cell("vm", 33, 1, vm33...), cell("vm", 9, 1, vm9...)}
	v := analysis.Subsumption(cells, "fp", "", "host", "vm", analysis.DefaultMargins())
	v.Interference = &analysis.InterferenceReport{Kind: analysis.InterferenceSome, Runs: make([]analysis.InterferedRun, 3), Judged: 12}
	assert.Contains(t, VerdictText(v), "; judged without 3 of 12 vm cell runs, in which other work on the host took their vCPUs' CPU (see its warning)")
}

// The JSON documents' verdict has every field analysis.Verdict puts in
// JSON, in its order, with the reason, the flagged and blocking cells and
// the disagreeing thread counts worded where analysis keeps values.
func TestVerdictJSONHasTheVerdictsFields(t *testing.T) {
	var want []string
	vt := reflect.TypeOf(analysis.Verdict{})
	for i := range vt.NumField() {
		switch name, _, _ := strings.Cut(vt.Field(i).Tag.Get("json"), ","); name {
		case "-":
			if f := vt.Field(i).Name; slices.Contains([]string{"Reason", "Flagged", "Blocking", "Heterogeneity"}, f) {
				want = append(want, strings.ToLower(f))
			}
		default:
			want = append(want, name)
		}
	}
	var got []string
	jt := reflect.TypeOf(VerdictJSON{})
	for i := range jt.NumField() {
		name, _, _ := strings.Cut(jt.Field(i).Tag.Get("json"), ",")
		got = append(got, name)
	}
	assert.Equal(t, want, got)
}

func TestSimDesign(t *testing.T) {
	assert.Equal(t, "sequential 6..18", SimDesign(analysis.SimCase{Repeats: 6, MaxRepeats: 18}))
	assert.Equal(t, "fixed 6", SimDesign(analysis.SimCase{Repeats: 6}))
	assert.Equal(t, "fixed 6", SimDesign(analysis.SimCase{Repeats: 6, MaxRepeats: 6}), "a cap at the repeats is one look")
}
