package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// EquivalenceMargin is the share of the host's QoS effect, on a log scale,
// that the VM may keep for its QoS to count as subsumed: with a 254x host
// effect, a VM ratio up to 254^0.1 = 1.74x. The verdict says yes only when
// the upper bound of the VM ratio's 95% interval is below it.
const EquivalenceMargin = 0.10

// minHostEffect is how far above 1 the host's QoS sensitivity must be for the
// subsumption index to mean anything: SI divides by ln(sens_host), so below a
// 1% host effect noise in the VM's ratio would move SI by any amount.
const minHostEffect = 0.01

// ThreadRatio compares two cells that differ in one factor (QoS class, or
// target) at one thread count.
type ThreadRatio struct {
	Threads int `json:"threads"`
	// Ratio is the median total rate of the first cell over the second's.
	Ratio Float `json:"ratio"`
	// Test compares the two cells' per-repeat total rates.
	Test UTest `json:"test"`
}

// Sensitivity is how much faster one target runs one workload (phase) at a
// high QoS class than at a low one.
type Sensitivity struct {
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Phase    string `json:"phase,omitempty"`
	High     int    `json:"high"`
	Low      int    `json:"low"`
	// ByThreads has, per thread count with a cell at both classes
	// (ascending), the median total rate at High over that at Low.
	ByThreads []ThreadRatio `json:"by_threads"`
	// Ratio pools ByThreads as their geometric mean, the usual mean of
	// ratios (benchstat's too): each thread count counts once, and a 2x
	// gain and a 2x loss cancel. NaN without thread counts or with a
	// non-positive ratio.
	Ratio Float `json:"ratio"`
	// Test is the stratified Mann-Whitney test of High against Low with
	// thread counts as strata.
	Test UTest `json:"test"`
	// Shift is the stratified Hodges-Lehmann estimate of ln(rate at High)
	// minus ln(rate at Low), with its interval: exp of it is the ratio the
	// verdict prints.
	Shift Shift `json:"shift"`
	// SmallestP is the smallest p value Test could reach with these
	// repeats, whatever the rates: at or above Alpha nothing can be called
	// significant.
	SmallestP Float `json:"smallest_p"`
}

// RatioEstimate is exp(Shift.Estimate): the ratio of High's rates to Low's.
func (s Sensitivity) RatioEstimate() float64 { return math.Exp(float64(s.Shift.Estimate)) }

// QoSSensitivity compares a target's total rates at the high QoS class with
// those at the low one, for one workload and phase, at each of threads (every
// thread count with cells at both classes when threads is nil; counts without
// both cells are skipped). Rates are work per second for every workload,
// bytes/s for compression too, so a ratio above 1 always means the high class
// ran faster.
func QoSSensitivity(cells []Cell, target, workload, phase string, high, low int, threads []int) Sensitivity {
	s := Sensitivity{Target: target, Workload: workload, Phase: phase, High: high, Low: low}
	hi := cellsByThreads(cells, target, workload, phase, high)
	lo := cellsByThreads(cells, target, workload, phase, low)
	if threads == nil {
		for t := range hi {
			if _, ok := lo[t]; ok {
				threads = append(threads, t)
			}
		}
	}
	threads = slices.Clone(threads)
	sort.Ints(threads)
	var xs, ys [][]float64
	var sizes [][2]int
	for _, t := range slices.Compact(threads) {
		h, okH := hi[t]
		l, okL := lo[t]
		if !okH || !okL {
			continue
		}
		s.ByThreads = append(s.ByThreads, ThreadRatio{Threads: t, Ratio: h.TotalRate.Median / l.TotalRate.Median, Test: MannWhitney(h.TotalRates, l.TotalRates)})
		xs = append(xs, h.TotalRates)
		ys = append(ys, l.TotalRates)
		sizes = append(sizes, [2]int{len(sortedFinite(h.TotalRates)), len(sortedFinite(l.TotalRates))})
	}
	s.Ratio = Float(geomean(s.ByThreads))
	s.Test = StratifiedMannWhitney(xs, ys)
	s.Shift = LogShift(xs, ys)
	s.SmallestP = Float(SmallestP(sizes))
	return s
}

func cellsByThreads(cells []Cell, target, workload, phase string, qos int) map[int]Cell {
	out := map[int]Cell{}
	for _, c := range cells {
		if c.Target == target && c.Workload == workload && c.Phase == phase && c.QoS == qos {
			out[c.Threads] = c
		}
	}
	return out
}

func geomean(rs []ThreadRatio) float64 {
	if len(rs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, r := range rs {
		if !(r.Ratio > 0) || math.IsInf(float64(r.Ratio), 0) {
			return math.NaN()
		}
		sum += math.Log(float64(r.Ratio))
	}
	return math.Exp(sum / float64(len(rs)))
}

// TargetRatio compares one cell on two targets.
type TargetRatio struct {
	CellKey
	// Base is the target divided by; CellKey.Target is the other one.
	Base string `json:"base"`
	// Ratio is the cell's median total rate on Target over that on Base.
	Ratio Float `json:"ratio"`
	// Test compares the two targets' per-repeat total rates.
	Test UTest `json:"test"`
}

// CompareTargets returns, for every cell of other that base also has (same
// workload, phase, QoS and threads), in other's cell order, the ratio of the
// median total rates other/base (the VM/host ratio for base "host" and other
// "vm") and the Mann-Whitney test between their repeats.
func CompareTargets(cells []Cell, base, other string) []TargetRatio {
	type key struct {
		workload, phase string
		qos, threads    int
	}
	byKey := map[key]Cell{}
	for _, c := range cells {
		if c.Target == base {
			byKey[key{c.Workload, c.Phase, c.QoS, c.Threads}] = c
		}
	}
	var out []TargetRatio
	for _, c := range cells {
		if c.Target != other {
			continue
		}
		b, ok := byKey[key{c.Workload, c.Phase, c.QoS, c.Threads}]
		if !ok {
			continue
		}
		ch := Compare(b, c)
		out = append(out, TargetRatio{CellKey: c.CellKey, Base: base, Ratio: ch.Ratio, Test: ch.Test})
	}
	return out
}

// Change compares one cell measured twice (two runs, or two targets): the
// new median total rate over the old, and the two-sided Mann-Whitney U test
// of their per-repeat total rates.
type Change struct {
	Old, New Cell
	Ratio    Float
	Test     UTest
}

// Compare compares cell new with cell old.
func Compare(old, new Cell) Change {
	return Change{Old: old, New: new, Ratio: new.TotalRate.Median / old.TotalRate.Median, Test: MannWhitney(new.TotalRates, old.TotalRates)}
}

// SubsumptionIndex is SI = 1 - ln(sensVM)/ln(sensHost): the share of the
// host's QoS effect, on a log scale, that the VM loses. 1 means the guest's
// classes all run alike (subsumed by the vCPU thread's class), 0 that the
// VM keeps the host's effect whole, above 1 that the VM reverses it. A log
// scale because QoS effects are ratios: on the linear scale 1 - (sensVM -
// 1)/(sensHost - 1), a 254x host effect would give SI >= 0.9 for any VM
// ratio up to 26x, so a 10x effect inside the VM would still read as
// subsumed; here it gives 0.58. It is undefined (ok false) when the host has
// no QoS effect to lose (sensHost below 1.01), or a sensitivity is not a
// positive number.
func SubsumptionIndex(sensHost, sensVM float64) (si float64, ok bool) {
	if math.IsNaN(sensHost) || math.IsNaN(sensVM) || math.IsInf(sensHost, 0) || math.IsInf(sensVM, 0) || sensVM <= 0 || sensHost-1 < minHostEffect {
		return math.NaN(), false
	}
	return 1 - math.Log(sensVM)/math.Log(sensHost), true
}

// Outcome is a verdict's answer.
type Outcome string

const (
	// Subsumed: the host's QoS effect is significant and the VM's ratio,
	// with 95% confidence, keeps less than EquivalenceMargin of it (an
	// equivalence test, not a failure to find a difference).
	Subsumed Outcome = "yes"
	// NotSubsumed: the host's effect is significant and the VM's ratio,
	// with 95% confidence, keeps more than EquivalenceMargin of it.
	NotSubsumed Outcome = "no"
	// Inconclusive: the run cannot tell. The host shows no significant QoS
	// effect (so there is nothing to subsume; this must never read as yes),
	// or the repeats are too few to show one, or the cells to compare are
	// missing, or the VM ratio's interval straddles the margin.
	Inconclusive Outcome = "inconclusive"
)

// Verdict answers, for one workload (and phase), whether the guest's QoS
// classes are subsumed in the VM.
type Verdict struct {
	Outcome Outcome `json:"outcome"`
	// Reason says why an inconclusive verdict is one; empty otherwise.
	Reason string `json:"reason,omitempty"`
	// SI is the subsumption index of the host's and the VM's ratios (their
	// Hodges-Lehmann estimates); NaN when undefined (see SubsumptionIndex).
	// SILow and SIHigh carry the VM ratio's interval into it (the host's
	// ratio taken as known: its effect is far larger than its noise
	// whenever SI is worth reading).
	SI     Float       `json:"si"`
	SILow  Float       `json:"si_low"`
	SIHigh Float       `json:"si_high"`
	Host   Sensitivity `json:"host"`
	VM     Sensitivity `json:"vm"`
	// Margin is the largest VM ratio that counts as subsumed: the host's
	// ratio to the power EquivalenceMargin; NaN without a host effect.
	Margin Float `json:"margin"`
}

// Subsumption decides whether QoS is subsumed in the VM for one workload and
// phase. It compares the highest and lowest QoS classes run on both targets,
// at the thread counts where all four (target, class) cells exist, so host
// and VM are judged on the same cells; each side's sensitivity is the
// geometric mean over those thread counts with a stratified Mann-Whitney
// test. The rule, in order:
//
//   - inconclusive when there are not two classes and a thread count on both;
//   - inconclusive when the host's effect is not significant at Alpha, or
//     the host's high class is not at least 1% faster (SI undefined): with no
//     effect on the host the run cannot show one disappearing;
//   - yes when SI >= SubsumedSI, whether or not what is left in the VM is
//     significant: a significant 1% is still subsumption;
//   - no when SI < SubsumedSI and the VM's own effect is significant;
//   - inconclusive otherwise: the VM keeps part of the effect, but not
//     significantly.
func Subsumption(cells []Cell, workload, phase, host, vm string) Verdict {
	none := func(target string) Sensitivity {
		return Sensitivity{Target: target, Workload: workload, Phase: phase, Ratio: Float(math.NaN()), Test: UTest{P: Float(math.NaN())}}
	}
	nan := Float(math.NaN())
	v := Verdict{Outcome: Inconclusive, SI: nan, SILow: nan, SIHigh: nan, Margin: nan, Host: none(host), VM: none(vm)}
	classes := map[string]map[int]map[int]bool{host: {}, vm: {}} // target -> qos -> threads
	for _, c := range cells {
		byQoS, ok := classes[c.Target]
		if !ok || c.Workload != workload || c.Phase != phase || len(c.TotalRates) == 0 {
			continue
		}
		if byQoS[c.QoS] == nil {
			byQoS[c.QoS] = map[int]bool{}
		}
		byQoS[c.QoS][c.Threads] = true
	}
	var common []int
	for q := range classes[host] {
		if classes[vm][q] != nil {
			common = append(common, q)
		}
	}
	sort.Ints(common)
	if len(common) < 2 {
		v.Reason = fmt.Sprintf("%s has no two QoS classes run on both %s and %s", WorkloadText(workload, phase), host, vm)
		return v
	}
	high, low := common[len(common)-1], common[0]
	var threads []int
	for t := range classes[host][high] {
		if classes[host][low][t] && classes[vm][high][t] && classes[vm][low][t] {
			threads = append(threads, t)
		}
	}
	if len(threads) == 0 {
		v.Reason = fmt.Sprintf("%s has no thread count run at QoS %d and %d on both %s and %s", WorkloadText(workload, phase), high, low, host, vm)
		return v
	}
	sort.Ints(threads)
	v.Host = QoSSensitivity(cells, host, workload, phase, high, low, threads)
	v.VM = QoSSensitivity(cells, vm, workload, phase, high, low, threads)
	hostRatio := v.Host.RatioEstimate()
	si, ok := SubsumptionIndex(hostRatio, v.VM.RatioEstimate())
	v.SI = Float(si)
	if ok {
		lnHost := math.Log(hostRatio)
		v.SILow, v.SIHigh = 1-v.VM.Shift.High/Float(lnHost), 1-v.VM.Shift.Low/Float(lnHost)
		v.Margin = Float(math.Exp(EquivalenceMargin * lnHost))
	}
	lnMargin := math.Log(float64(v.Margin))
	switch {
	case !v.Host.Test.Significant(Alpha) && float64(v.Host.SmallestP) >= Alpha:
		v.Reason = fmt.Sprintf("too few repeats to tell (smallest reachable p %s with %s)", strconv.FormatFloat(float64(v.Host.SmallestP), 'g', 2, 64), strataText(v.Host))
	case !v.Host.Test.Significant(Alpha):
		v.Reason = fmt.Sprintf("%s shows no significant QoS effect, so there is nothing to subsume; on a Linux host whose cores are alike QoS only decides who runs when cores are scarce: run with contention (qoslab run --default contention)", host)
	case !ok:
		v.Reason = fmt.Sprintf("on %s QoS %d is not faster than QoS %d, so there is no effect to subsume", host, high, low)
	case float64(v.VM.Shift.Confidence) < Confidence-1e-9:
		v.Reason = fmt.Sprintf("too few %s repeats for a %.0f%% interval of its ratio (%s reach %.0f%%)", vm, 100*Confidence, strataText(v.VM), 100*float64(v.VM.Shift.Confidence))
	case float64(v.VM.Shift.High) < lnMargin:
		v.Outcome = Subsumed
	case float64(v.VM.Shift.Low) > lnMargin:
		v.Outcome = NotSubsumed
	default:
		v.Reason = fmt.Sprintf("the %s ratio's interval straddles the margin: more repeats would tell", vm)
	}
	return v
}

// strataText says how many repeats a sensitivity compared: "3 vs 3
// repeats", "1 vs 1 repeats at each of 4 thread counts", or per thread
// count when they differ.
func strataText(s Sensitivity) string {
	if len(s.ByThreads) == 0 {
		return "no repeats"
	}
	first := s.ByThreads[0].Test
	same := true
	var parts []string
	for _, r := range s.ByThreads {
		same = same && r.Test.N1 == first.N1 && r.Test.N2 == first.N2
		parts = append(parts, fmt.Sprintf("%d vs %d at %d threads", r.Test.N1, r.Test.N2, r.Threads))
	}
	switch {
	case len(s.ByThreads) == 1:
		return fmt.Sprintf("%d vs %d repeats", first.N1, first.N2)
	case same:
		return fmt.Sprintf("%d vs %d repeats at each of %d thread counts", first.N1, first.N2, len(s.ByThreads))
	}
	return strings.Join(parts, ", ")
}

// WorkloadText names a workload and, when it differs from the workload's
// own name, its timed phase: "fp", "compress (verify)".
func WorkloadText(workload, phase string) string {
	if phase == "" || phase == workload {
		return workload
	}
	return workload + " (" + phase + ")"
}

// String renders the verdict as one line:
//
//	QoS subsumed in VM: yes (SI 0.990 [0.985..0.995]; host 33/9 = 254x, p<0.001; vm 33/9 = 1.05x [0.98..1.12], below the margin 1.74x (10% of the host's effect))
//
// followed, for an inconclusive verdict, by ": " and the reason; when no
// cells could be compared, the parenthesis is left out. SI prints with three
// decimals and its interval ("n/a" when undefined); the ratios are the
// Hodges-Lehmann estimates, as FormatRatio; the host's p value is its
// stratified rank-sum test's; the VM's ratio has its interval (with the
// coverage reached, when under 95%) and where it lies against the margin.
func (v Verdict) String() string {
	head := "QoS subsumed in " + TargetLabel(v.VM.Target) + ": " + string(v.Outcome)
	if len(v.Host.ByThreads) == 0 || len(v.VM.ByThreads) == 0 { // nothing was compared
		return head + ": " + v.Reason
	}
	si := "n/a"
	if !v.SI.IsNaN() {
		si = strconv.FormatFloat(float64(v.SI), 'f', 3, 64)
		if !v.SILow.IsNaN() {
			si += " [" + strconv.FormatFloat(float64(v.SILow), 'f', 3, 64) + ".." + strconv.FormatFloat(float64(v.SIHigh), 'f', 3, 64) + "]"
			if c := float64(v.VM.Shift.Confidence); c < Confidence-1e-9 {
				si += fmt.Sprintf(" (%.0f%%)", 100*c)
			}
		}
	}
	host := fmt.Sprintf("%s %d/%d = %s, %s", v.Host.Target, v.Host.High, v.Host.Low, FormatRatio(Float(v.Host.RatioEstimate())), FormatP(v.Host.Test.P))
	vm := fmt.Sprintf("%s %d/%d = %s", v.VM.Target, v.VM.High, v.VM.Low, FormatRatio(Float(v.VM.RatioEstimate())))
	if sh := v.VM.Shift; !sh.Low.IsNaN() {
		vm += fmt.Sprintf(" [%s..%s]", ratioNumber(math.Exp(float64(sh.Low))), ratioNumber(math.Exp(float64(sh.High))))
		if c := float64(sh.Confidence); c < Confidence-1e-9 {
			vm += fmt.Sprintf(" (%.0f%%)", 100*c)
		}
	}
	if !v.Margin.IsNaN() {
		where := "straddling"
		switch v.Outcome {
		case Subsumed:
			where = "below"
		case NotSubsumed:
			where = "above"
		}
		if v.Reason == "" {
			vm += fmt.Sprintf(", %s the margin %s (%.0f%% of the host's effect)", where, FormatRatio(v.Margin), 100*EquivalenceMargin)
		}
	}
	line := fmt.Sprintf("%s (SI %s; %s; %s)", head, si, host, vm)
	if v.Reason != "" {
		line += ": " + v.Reason
	}
	return line
}

// ratioNumber is FormatRatio without the "x".
func ratioNumber(r float64) string { return strings.TrimSuffix(FormatRatio(Float(r)), "x") }

// FormatRatio renders a ratio with three significant digits (every integer
// digit from 1000 up), trailing zeros dropped and never in exponent form:
// "3.1x", "1.01x", "12.3x", "0.5x"; "n/a" when it is not a number.
func FormatRatio(ratio Float) string {
	r := float64(ratio)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "n/a"
	}
	if r == 0 {
		return "0x"
	}
	decimals := max(0, 2-int(math.Floor(math.Log10(math.Abs(r)))))
	s := strconv.FormatFloat(r, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + "x"
}

// FormatDelta renders a comparison's ratio as benchstat does its delta: "~"
// when the difference is not significant at alpha, else the ratio and p,
// "3.1x (p<0.001)".
func FormatDelta(ratio Float, t UTest, alpha float64) string {
	if !t.Significant(alpha) {
		return "~"
	}
	return FormatRatio(ratio) + " (" + FormatP(t.P) + ")"
}

// FastestFirst returns the cells sorted by median total rate, highest first;
// cells with equal rates keep their order.
func FastestFirst(cells []Cell) []Cell {
	out := slices.Clone(cells)
	sort.SliceStable(out, func(i, j int) bool { return out[i].TotalRate.Median > out[j].TotalRate.Median })
	return out
}
