package compare

import (
	"math"
	"slices"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
)

// runFindings is what one run is judged on and what it says: its cells at
// the thread counts every run that has the workload can use (threads, per
// workload and phase; a run's own where the runs share none), and the
// verdicts (as the run's own summary decides them: summary.RunVerdicts)
// and QoS sensitivities over them.
type runFindings struct {
	cells         []analysis.Cell
	threads       map[summary.WorkloadPhase][]int
	run           results.Run
	verdicts      []analysis.Verdict
	sensitivities []analysis.Sensitivity
}

// judge restricts each run's cells to the thread counts at which every run
// that has the workload ran all of its targets and classes, so that the
// runs are judged on the same cells (a run's own report may use more;
// where the runs share no thread count, each run's own are used), and
// judges them as the run's own summary does (summary.RunVerdicts: the
// margins and looks its spec set, with its caveats).
func judge(cells [][]analysis.Cell, runs []results.Run) ([]runFindings, map[summary.WorkloadPhase][]int) {
	common := commonThreads(cells)
	out := make([]runFindings, len(cells))
	for i, cs := range cells {
		kept := slices.DeleteFunc(slices.Clone(cs), func(c analysis.Cell) bool {
			ts := common[summary.WorkloadPhase{Workload: c.Workload, Phase: c.Phase, Params: c.Params}]
			return len(ts) > 0 && !slices.Contains(ts, c.Threads)
		})
		r := runFindings{cells: kept, threads: map[summary.WorkloadPhase][]int{}, run: runs[i]}
		for k, ts := range usableThreads(kept) {
			r.threads[k] = slices.Sorted(slices.Values(ts))
		}
		r.verdicts = summary.RunVerdicts(kept, runs[i])
		r.sensitivities = sensitivities(kept)
		out[i] = r
	}
	return out, common
}

// findings are the subsumption indexes of the workloads any run can judge,
// and each target's QoS sensitivity per workload (and phase) run at two or
// more classes, in workload order, from the runs judged alike (judge); a
// run without the finding has it missing. A sensitivity the run's verdict
// judged is the verdict's, with its interval (judgedSensitivity), as the
// per-machine table prints it. common is the thread counts they were
// judged at, per workload (and phase).
func findings(runs []runFindings, common map[summary.WorkloadPhase][]int) []FindingRow {
	t := findingTable{n: len(runs), vals: map[findingKey][]FindingValue{}}
	for i, r := range runs {
		for _, v := range r.verdicts {
			if v.SI.IsNaN() {
				continue
			}
			t.put(findingKey{kind: KindSubsumption, workload: v.Host.Workload, phase: v.Host.Phase, params: v.Host.Params},
				i, FindingValue{Value: Value{Present: true, Median: v.SI, Low: v.SILow, High: v.SIHigh}, Outcome: string(v.Outcome)})
		}
		for _, s := range r.sensitivities {
			s = judgedSensitivity(r.verdicts, s)
			if s.Shift.Estimate.IsNaN() {
				continue
			}
			t.put(findingKey{kind: KindSensitivity, workload: s.Workload, phase: s.Phase, params: s.Params, target: s.Target, high: s.High, low: s.Low},
				i, FindingValue{Value: Value{Present: true, N: s.Shift.Pairs,
					Median: analysis.Float(s.RatioEstimate()),
					Low:    analysis.Float(math.Exp(float64(s.Shift.Low))), High: analysis.Float(math.Exp(float64(s.Shift.High)))}})
		}
	}
	slices.SortStableFunc(t.order, compareFindingKeys)
	out := make([]FindingRow, 0, len(t.order))
	for _, k := range t.order {
		r := FindingRow{Kind: k.kind, Workload: k.workload, Phase: k.phase, Params: k.params, Target: k.target, High: k.high, Low: k.low, Values: t.vals[k]}
		r.Threads = slices.Sorted(slices.Values(common[summary.WorkloadPhase{Workload: k.workload, Phase: k.phase, Params: k.params}]))
		addFindingDeltas(r.Values, k.kind)
		out = append(out, r)
	}
	return out
}

// judgedSensitivity is s as the run's verdict judged it, where a verdict
// compares the same classes of s's workload on s's target and has a
// ratio there: with the verdict's interval (90%, or its looks' level), so
// that a run's ratio has one interval wherever compare prints it (the
// per-machine table prints the verdict's). Elsewhere s itself, at 95%, as
// the per-machine table shows it too where the verdict has no ratio.
func judgedSensitivity(verdicts []analysis.Verdict, s analysis.Sensitivity) analysis.Sensitivity {
	for _, v := range verdicts {
		for _, side := range []analysis.Sensitivity{v.Host, v.VM} {
			if side.Target == s.Target && side.Workload == s.Workload && side.Phase == s.Phase && side.Params == s.Params &&
				side.High == s.High && side.Low == s.Low && !side.Shift.Estimate.IsNaN() {
				return side
			}
		}
	}
	return s
}

// commonThreads is, per workload (and phase), the thread counts that
// every run that ran it can use: those at which it has every (target,
// class) of the workload.
func commonThreads(cells [][]analysis.Cell) map[summary.WorkloadPhase][]int {
	common := map[summary.WorkloadPhase][]int{}
	for _, cs := range cells {
		for k, ts := range usableThreads(cs) {
			if prev, ok := common[k]; ok {
				common[k] = slices.DeleteFunc(prev, func(t int) bool { return !slices.Contains(ts, t) })
			} else {
				common[k] = ts
			}
		}
	}
	return common
}

// usableThreads is, per workload (and phase) of one run, the thread counts
// at which it has every (target, class) of the workload it ran at all.
func usableThreads(cs []analysis.Cell) map[summary.WorkloadPhase][]int {
	type series struct {
		target string
		qos    int
	}
	has := map[summary.WorkloadPhase]map[series]map[int]bool{}
	for _, c := range cs {
		k := summary.WorkloadPhase{Workload: c.Workload, Phase: c.Phase, Params: c.Params}
		if has[k] == nil {
			has[k] = map[series]map[int]bool{}
		}
		sk := series{c.Target, c.QoS}
		if has[k][sk] == nil {
			has[k][sk] = map[int]bool{}
		}
		has[k][sk][c.Threads] = true
	}
	mine := map[summary.WorkloadPhase][]int{}
	for k, bySeries := range has {
		mine[k] = []int{}
		for _, threads := range bySeries {
			for t := range threads {
				all := true
				for _, other := range bySeries {
					all = all && other[t]
				}
				if all && !slices.Contains(mine[k], t) {
					mine[k] = append(mine[k], t)
				}
			}
		}
	}
	return mine
}

// findingKey names a finding row: the subsumption index of a workload (and
// phase), or a target's QoS sensitivity there, high class over low.
type findingKey struct {
	kind, workload, phase, params, target string
	high, low                             int
}

// findingTable collects the findings' values, one per run, and the rows in
// the order they were first found.
type findingTable struct {
	n     int // runs
	order []findingKey
	vals  map[findingKey][]FindingValue
}

// put sets run i's value of row k; the other runs' stay missing until put.
func (t *findingTable) put(k findingKey, i int, v FindingValue) {
	if t.vals[k] == nil {
		t.vals[k] = make([]FindingValue, t.n)
		for j := range t.vals[k] {
			t.vals[k][j] = FindingValue{Value: Value{Median: nan(), Low: nan(), High: nan()}}
		}
		t.order = append(t.order, k)
	}
	t.vals[k][i] = v
}

// compareFindingKeys orders finding rows by workload, then phase, then the
// index first and each target's ratio after it, host first.
func compareFindingKeys(a, b findingKey) int {
	if c := strings.Compare(a.workload, b.workload); c != 0 {
		return c
	}
	if c := strings.Compare(a.phase, b.phase); c != 0 {
		return c
	}
	if c := analysis.CompareParams(a.params, b.params); c != 0 {
		return c
	}
	if a.kind != b.kind { // the index first, then each target's ratio
		if a.kind == KindSubsumption {
			return -1
		}
		return 1
	}
	return analysis.TargetRank(a.target) - analysis.TargetRank(b.target)
}

// addFindingDeltas sets each later run's change against the baseline's
// (the first) value where both have one: a difference for an index, a
// ratio for a sensitivity, significant when their intervals are disjoint.
func addFindingDeltas(vals []FindingValue, kind string) {
	base := vals[0]
	for i := 1; i < len(vals); i++ {
		v := &vals[i]
		if !v.Present || !base.Present {
			continue
		}
		d := &Delta{P: nan(), Significant: disjoint(base.Value, v.Value)}
		if kind == KindSubsumption {
			d.Ratio = v.Median - base.Median // an index: the difference
		} else {
			d.Ratio = v.Median / base.Median
		}
		v.Delta = d
	}
}

// disjoint reports whether two intervals do not overlap: a conservative
// test of a difference. Two 90% intervals, a verdict's, that miss each
// other differ at about 2% when they are alike in width, and at 10% at
// most however unlike; two 95% ones at about 0.6%, and 5% at most.
func disjoint(a, b Value) bool {
	if a.Low.IsNaN() || a.High.IsNaN() || b.Low.IsNaN() || b.High.IsNaN() {
		return false
	}
	return a.High < b.Low || b.High < a.Low
}

// sensitivities is each target's QoS sensitivity per workload (and phase)
// run at two or more classes there: the highest class against the lowest,
// at every thread count with both.
func sensitivities(cells []analysis.Cell) []analysis.Sensitivity {
	// Judged without the VM's interfered cell runs, as the verdict is
	// (the rule is blind to class, so leaving them out favours neither).
	cells = analysis.WithoutRepeats(cells, analysis.Interfered(cells).Runs)
	type key struct{ target, workload, phase, params string }
	var order []key
	classes := map[key][]int{}
	for _, c := range cells {
		k := key{c.Target, c.Workload, c.Phase, c.Params}
		if _, ok := classes[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(classes[k], c.QoS) {
			classes[k] = append(classes[k], c.QoS)
		}
	}
	var out []analysis.Sensitivity
	for _, k := range order {
		qs := classes[k]
		if len(qs) < 2 {
			continue
		}
		s := analysis.QoSSensitivity(analysis.ParamsCells(cells, k.params), k.target, k.workload, k.phase, slices.Max(qs), slices.Min(qs), nil)
		s.Params = k.params
		out = append(out, s)
	}
	return out
}
