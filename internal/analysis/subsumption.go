package analysis

import (
	"math"
	"slices"
	"sort"
)

// The equivalence test's settings: a VM ratio counts as no QoS effect when
// it lies, with confidence, inside a band around 1 that is small both next
// to the host's effect and in absolute terms.
const (
	// equivalenceLevel is the level of each of the two one-sided tests of
	// the verdict (the VM ratio above the band's low edge, below its high
	// edge): together, the ratio's 90% interval inside the band.
	equivalenceLevel = 0.05
	// equivalenceConfidence is the coverage of the intervals the verdict
	// judges: 1 - 2·equivalenceLevel.
	equivalenceConfidence = 1 - 2*equivalenceLevel
	// EquivalenceLevel and EquivalenceConfidence are the two, for those
	// who word the verdict.
	EquivalenceLevel      = equivalenceLevel
	EquivalenceConfidence = equivalenceConfidence
	// DefaultRelativeMargin is the share of the host's QoS effect, on a log
	// scale, the VM may keep and still count as none: 10%, so beside a 254x
	// host effect up to 254^0.1 = 1.74x (before the absolute margin).
	DefaultRelativeMargin = 0.10
	// DefaultAbsoluteMargin is the largest VM ratio, either way, that may
	// count as none whatever the host's effect: a 1.87x effect in the VM is
	// not "subsumed" to anyone reading it, though it is 9% of 1010x.
	DefaultAbsoluteMargin = 1.25
)

// Margins say how small the QoS effect left in the VM must be to count as
// none (a spec's verdict: keys).
type Margins struct {
	// Relative is the share of the host's effect (log scale), taken at the
	// conservative end of the host's interval.
	Relative float64 `json:"relative_margin"`
	// Absolute is the largest ratio, either way, that counts as no effect.
	Absolute float64 `json:"absolute_margin"`
}

// DefaultMargins are the margins of a spec that sets none.
func DefaultMargins() Margins {
	return Margins{Relative: DefaultRelativeMargin, Absolute: DefaultAbsoluteMargin}
}

// ThreadRatio compares two cells that differ in one factor (QoS class, or
// target) at one thread count.
type ThreadRatio struct {
	Threads int `json:"threads"`
	// Ratio is the median total rate of the first cell over the second's
	// (JSON ratio_of_medians; ratio_hl is Shift's, see HLRatio).
	Ratio Float `json:"ratio_of_medians"`
	// Test compares the two cells' per-repeat total rates.
	Test UTest `json:"test"`
	// Shift is this thread count's own Hodges-Lehmann log ratio with its
	// 95% interval, to tell whether thread counts disagree.
	Shift Shift `json:"shift"`
}

// Sensitivity is how much faster one target runs one workload (phase) at a
// high QoS class than at a low one.
type Sensitivity struct {
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Phase    string `json:"phase,omitempty"`
	// Params are the cells' parameters where the run measured the
	// workload with more than one set of them (CellKey.Params).
	Params string `json:"params,omitempty"`
	High   int    `json:"high"`
	Low    int    `json:"low"`
	// ByThreads has, per thread count with a cell at both classes
	// (ascending), the median total rate at High over that at Low.
	ByThreads []ThreadRatio `json:"by_threads"`
	// Ratio pools ByThreads as their geometric mean, the usual mean of
	// ratios (benchstat's too): each thread count counts once, and a 2x
	// gain and a 2x loss cancel. NaN without thread counts or with a
	// non-positive ratio. The JSON calls it ratio_of_medians; the ratio
	// the verdict prints is Shift's, ratio_hl (HLRatio).
	Ratio Float `json:"ratio_of_medians"`
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
	// Idle counts, per class, the repeats that did no work (rate 0): they
	// are left out of every statistic here.
	IdleHigh int `json:"idle_high,omitempty"`
	IdleLow  int `json:"idle_low,omitempty"`
}

// RatioEstimate is exp(Shift.Estimate): the ratio of High's rates to Low's.
func (s Sensitivity) RatioEstimate() float64 { return math.Exp(float64(s.Shift.Estimate)) }

// QoSSensitivity is qosSensitivityAt with a 95% interval.
func QoSSensitivity(cells []Cell, target, workload, phase string, high, low int, threads []int) Sensitivity {
	return qosSensitivityAt(cells, target, workload, phase, high, low, threads, Confidence)
}

// qosSensitivityAt compares a target's total rates at the high QoS class
// with those at the low one, for one workload and phase, at each of
// threads (every thread count with cells at both classes when threads is
// nil; counts without both cells are skipped), its pooled shift with an
// interval of the coverage asked. Rates are work per second for every
// workload, bytes/s for compression too, so a ratio above 1 always means
// the high class ran faster. A repeat that did no work (rate 0) has no
// logarithm and no ratio: it is left out of every statistic alike (ranks,
// shift, medians) and counted in IdleHigh and IdleLow.
func qosSensitivityAt(cells []Cell, target, workload, phase string, high, low int, threads []int, confidence float64) Sensitivity {
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
	for _, t := range slices.Compact(threads) {
		h, okH := hi[t]
		l, okL := lo[t]
		if !okH || !okL {
			continue
		}
		hr, lr := workingRates(h.TotalRates), workingRates(l.TotalRates)
		s.IdleHigh += countFinite(h.TotalRates) - len(hr)
		s.IdleLow += countFinite(l.TotalRates) - len(lr)
		if len(hr) == 0 || len(lr) == 0 {
			continue
		}
		s.ByThreads = append(s.ByThreads, ThreadRatio{Threads: t, Ratio: OrderStatsOf(hr).Median / OrderStatsOf(lr).Median,
			Test: mannWhitney(hr, lr), Shift: logShift([][]float64{hr}, [][]float64{lr})})
		xs = append(xs, hr)
		ys = append(ys, lr)
	}
	s.Ratio = Float(geomean(s.ByThreads))
	s.Test = stratifiedMannWhitney(xs, ys)
	s.Shift = logShiftAt(xs, ys, confidence)
	s.SmallestP = s.Test.SmallestP
	return s
}

// workingRates are the rates of repeats that did work: positive and finite.
func workingRates(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if x > 0 && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

func countFinite(v []float64) int {
	n := 0
	for _, x := range v {
		if !math.IsNaN(x) {
			n++
		}
	}
	return n
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

// Compare compares cell new with cell old, each over the repeats that did
// work, as its medians are.
func Compare(old, new Cell) Change {
	return Change{Old: old, New: new, Ratio: new.TotalRate.Median / old.TotalRate.Median, Test: mannWhitney(workingRates(new.TotalRates), workingRates(old.TotalRates))}
}

// subsumptionIndex is SI = 1 - ln(sensVM)/ln(sensHost): the share of the
// host's QoS effect, on a log scale, that the VM loses. 1 means the guest's
// classes all run alike (subsumed by the vCPU thread's class), 0 that the
// VM keeps the host's effect whole, above 1 that the VM reverses it. A log
// scale because QoS effects are ratios: on the linear scale 1 - (sensVM -
// 1)/(sensHost - 1), a 254x host effect would give SI >= 0.9 for any VM
// ratio up to 26x, so a 10x effect inside the VM would still read as
// subsumed; here it gives 0.58. It is undefined (ok false) when the high
// class is not faster on the host (sensHost <= 1), or a sensitivity is not
// a positive number. Whether the host's effect is shown at all is the
// test's to say (Subsumption prints SI only then): near 1 the index
// divides by almost nothing.
func subsumptionIndex(sensHost, sensVM float64) (si float64, ok bool) {
	if math.IsNaN(sensHost) || math.IsNaN(sensVM) || math.IsInf(sensHost, 0) || math.IsInf(sensVM, 0) || sensVM <= 0 || sensHost <= 1 {
		return math.NaN(), false
	}
	return 1 - math.Log(sensVM)/math.Log(sensHost), true
}

// Outcome is a verdict's answer.
type Outcome string

const (
	// Subsumed is "yes": the host's QoS effect is significant and the
	// VM's ratio lies, with its whole 90% interval, inside the equivalence
	// band (two one-sided tests at 5%: an equivalence test, not a failure
	// to find a difference), and no cell it rests on is flagged.
	Subsumed Outcome = "yes"
	// NotSubsumed is "no": the host's effect is significant and the VM's
	// ratio lies, with its whole 90% interval, outside the band: above it
	// (the VM keeps an effect) or below it (the VM reverses the classes).
	NotSubsumed Outcome = "no"
	// Inconclusive is the answer when the run cannot tell. The host shows
	// no significant QoS effect (so there is nothing to subsume; this must
	// never read as yes), or the repeats are too few to show one, or the
	// cells to compare are missing or did no work, or the VM ratio's
	// interval crosses the band's edge, or a yes would rest on cells whose
	// repeats disagree.
	Inconclusive Outcome = "inconclusive"
)

// Verdict answers, for one workload (and phase), whether the guest's QoS
// classes are subsumed in the VM.
type Verdict struct {
	Outcome Outcome `json:"outcome"`
	// Reason says why the outcome is what it is, for "no" and
	// "inconclusive"; its Kind is NoReason for "yes". The JSON documents
	// hold it worded (render.VerdictJSON).
	Reason Reason `json:"-"`
	// Reversed says the VM runs the low class significantly faster: a "no".
	Reversed bool `json:"reversed,omitempty"`
	// SI is the subsumption index of the host's and the VM's ratios (their
	// Hodges-Lehmann estimates); NaN unless the host's effect is shown.
	// SILow and SIHigh bound SI over both sides' 95% intervals, so they
	// carry the host's uncertainty as well as the VM's; SIConfidence is
	// the coverage that has at least (the product of the two, 0.9025 when
	// both reach 95%). NaN when the host's 95% interval reaches 1x.
	SI           Float `json:"si"`
	SILow        Float `json:"si_low"`
	SIHigh       Float `json:"si_high"`
	SIConfidence Float `json:"si_confidence"`
	// Host and VM are the two sides' QoS sensitivities, their shifts with
	// 90% intervals (equivalenceConfidence): what the verdict judges. With
	// more than one look, the VM's interval is the pooled one's at its
	// look's level (Looks).
	Host Sensitivity `json:"host"`
	VM   Sensitivity `json:"vm"`
	// Threads are the thread counts compared: those at which both classes
	// ran on both targets, ascending.
	Threads []int `json:"threads"`
	// Dropped are the thread counts left out because only one side ran
	// both classes there, with that side's ratio.
	Dropped []DroppedThreads `json:"dropped,omitempty"`
	// VMByThreads is each compared thread count's own VM ratio with its
	// 90% interval (at its look's level with more than one look): "yes"
	// needs every one of them inside the band (an intersection-union
	// test), not only the pooled ratio.
	VMByThreads []ThreadShift `json:"vm_by_threads,omitempty"`
	// Margins are the settings the band came from.
	Margins Margins `json:"margins"`
	// Level is each one-sided test's level, equivalenceLevel: with more
	// than one look, what the levels of all the looks add up to.
	Level float64 `json:"level"`
	// Looks are, per compared thread count, its repeats and the look of
	// the schedule they are, with that look's level (SubsumptionAt); nil
	// without a schedule.
	Looks []ThreadLook `json:"looks,omitempty"`
	// MoreRepeats says which cells a block more of repeats could decide,
	// when the answer is inconclusive because an interval is too wide (or
	// the repeats too few for one) and the schedule has a look left; nil
	// otherwise.
	MoreRepeats *MoreRepeats `json:"more_repeats,omitempty"`
	// Next is what a new run would need to decide an answer that more
	// repeats could decide (its reason's words say "would tell" or "would
	// decide"): a value, which whoever shows the verdict words as a
	// command for the run in question, since only it knows how the run
	// was started. nil
	// when repeats would not decide it, or the run's own looks would add
	// them (MoreRepeats).
	Next *NextStep `json:"next_step,omitempty"`
	// RelativeMargin is the host's ratio at the low end of its interval to
	// the power Margins.Relative; Margin, the band's upper edge for "yes",
	// is the smaller of it and Margins.Absolute, and the band is
	// [1/Margin, Margin]. MarginNo is the edge a VM ratio must lie beyond
	// for "no", from the high end of the host's interval. NaN without a
	// host effect.
	RelativeMargin Float `json:"relative_margin_ratio"`
	Margin         Float `json:"margin"`
	MarginNo       Float `json:"margin_no"`
	// Flagged are the cells the verdict rests on whose repeats cannot
	// stand for one number, in table order. The JSON documents hold them
	// named, with why ("host fp qos=9 threads=1 repeats 77x apart").
	Flagged []Cell `json:"-"`
	// Blocking are those flagged cells that could change a "yes": with
	// them at the most adverse values they showed themselves the rule
	// would not say yes, so the verdict is "inconclusive". A yes beside
	// flagged cells none of which blocks it stands (FlagsChecked). Named
	// in the JSON documents as Flagged is.
	Blocking []Cell `json:"-"`
	// FlagsChecked says the answer was re-decided with every flagged cell
	// at its most adverse repeats and stayed "yes".
	FlagsChecked bool `json:"flags_checked,omitempty"`
	// Heterogeneity are the sides (Host, VM) whose thread counts' own
	// ratios disagree beyond their 95% intervals (two whose intervals do
	// not overlap, each reaching at least 90%). The JSON documents hold
	// them worded (render.VerdictJSON).
	Heterogeneity []Sensitivity `json:"-"`
	// Mechanism says, per target, what happened to each class's threads:
	// their CPU share and their speed per CPU-second (see Mechanism).
	Mechanism []Mechanism `json:"mechanism"`
	// Caveats are what the reader must weigh beside the answer that the
	// numbers cannot show (the cells ran in sequence: time and class are
	// confounded). The caller adds them; Subsumption sees only cells.
	Caveats []string `json:"caveats,omitempty"`
	// OtherWork is what the host's other work took during the verdict's
	// cell runs, host and VM; nil where the host view read no processes.
	OtherWork *OtherWork `json:"other_work,omitempty"`
	// Interference is the interference rule applied to the VM's cell runs
	// of the workload (InterferenceRule.Report); nil where the records
	// carry no host view. Those it finds (Kind "some") are left out of
	// everything above: the verdict judges the cell runs without them.
	Interference *InterferenceReport `json:"interference,omitempty"`
}

// HasCell says cells hold the cell of key k.
func HasCell(cells []Cell, k CellKey) bool {
	return slices.ContainsFunc(cells, func(c Cell) bool { return c.CellKey == k })
}

// DroppedThreads is a thread count a verdict could not compare, because
// only one side (Side) ran both classes there, with that side's ratio of
// the high class's rate over the low one's (Hodges-Lehmann).
type DroppedThreads struct {
	Threads int    `json:"threads"`
	Side    string `json:"side"`
	Ratio   Float  `json:"ratio_hl"`
}

// ThreadShift is one thread count's shift with its interval.
type ThreadShift struct {
	Threads int   `json:"threads"`
	Shift   Shift `json:"shift"`
}

// Subsumption decides whether QoS is subsumed in the VM for one workload and
// phase. It compares the highest and lowest QoS classes run on both targets,
// at the thread counts where all four (target, class) cells exist, so host
// and VM are judged on the same cells; each side's effect is the stratified
// Hodges-Lehmann shift of ln(rate), with the stratified rank-sum test. The
// rule (judge), in order:
//
//   - inconclusive when there are not two classes and a thread count on
//     both, or a side's class did no work in any repeat;
//   - inconclusive when the host's effect is not shown: the two-sided test
//     not significant at Alpha (saying so when the repeats are too few, or
//     their ties too many, for any p under Alpha), or the low class the
//     faster one: with no effect on the host the run cannot show one
//     disappearing;
//   - inconclusive when the VM's repeats are too few for a 90% interval;
//   - no when the VM ratio's 90% interval lies wholly above the band, or
//     wholly below it (QoS reversed in the VM), the band's edge taken from
//     the high end of the host's interval, so that neither answer leans on
//     the host's noise; or when one thread count's own interval does, at
//     the Bonferroni level for the thread counts compared (a union of
//     tests pays for its multiplicity);
//   - yes when the pooled VM ratio's 90% interval and every compared
//     thread count's own 90% interval lie inside the band [1/M, M], M the
//     smaller of the absolute margin and the host's ratio at the low end of
//     its 90% interval to the power of the relative margin (two one-sided
//     tests at 5% each; an intersection-union test needs no multiplicity
//     penalty);
//   - inconclusive otherwise, saying which edge and whose uncertainty.
//
// Then a yes beside flagged cells (repeats that disagree) is decided again
// with every flagged cell at the most adverse values it showed itself (a
// host low class at its highest repeat, a host high class at its lowest, a
// VM cell at whichever end pushes the VM ratio out of the band): when the
// answer stays yes it stands, else it is inconclusive naming the cells
// that could change it.
//
// Subsumption is SubsumptionAt with one look.
func Subsumption(cells []Cell, workload, phase, host, vm string, margins Margins) Verdict {
	return SubsumptionAt(cells, workload, phase, host, vm, margins, nil)
}

// SubsumptionAt is the verdict at a look of a run that adds repeats until
// the answer is decided, schedule its repeats per cell at each look
// (Schedule): each thread count's interval is judged at the level of its
// own look (LookLevels; its look is the first whose entry reaches its VM
// cells' repeats), the pooled one at the strictest of them, so that the
// chance of a false yes over all looks stays within equivalenceLevel.
// The rules for no, the host's effect and the band are those of one look.
// An inconclusive answer that more repeats could decide says which in
// MoreRepeats while the schedule has a look left, and at the cap says so.
// A nil or one-entry schedule is one look: Subsumption's verdict.
func SubsumptionAt(cells []Cell, workload, phase, host, vm string, margins Margins, schedule []int) Verdict {
	return subsumptionAt(cells, workload, phase, host, vm, margins, schedule, true)
}

// subsumptionAt is SubsumptionAt; without describe it decides only (the
// answer, its reason, the looks and MoreRepeats, flagged and blocking
// cells), leaving out what only describes the answer (dropped thread
// counts, SI, heterogeneity, mechanism): the simulation decides many
// thousands of runs the same way, at a third of the cost.
func subsumptionAt(cells []Cell, workload, phase, host, vm string, margins Margins, schedule []int, describe bool) Verdict {
	params := paramSets(cells, workload, phase, host, vm)
	if len(params) > 1 {
		v := noVerdict(workload, phase, host, vm, margins)
		v.Reason = Reason{Kind: ReasonParamSets, Workload: workload, Phase: phase, Params: params}
		return v
	}
	v := decide(cells, workload, phase, host, vm, margins, schedule, describe)
	if len(params) == 1 {
		v.Host.Params, v.VM.Params = params[0], params[0]
	}
	return v
}

// paramSets are the parameters' texts (CellKey.Params) of the workload's
// cells on host and vm, in table order: one verdict compares classes and
// targets at equal parameters, so a caller judges each set's cells alone
// (ParamsCells). Empty, or one "", for a workload measured one way.
func paramSets(cells []Cell, workload, phase, host, vm string) []string {
	var out []string
	for _, c := range cells {
		if c.Workload == workload && c.Phase == phase && (c.Target == vm || c.Target == host) && !slices.Contains(out, c.Params) {
			out = append(out, c.Params)
		}
	}
	slices.SortFunc(out, CompareParams)
	return out
}

// ParamsCells are the cells with the parameters' text params
// (CellKey.Params): what one verdict on a workload measured with more
// than one set of parameters judges.
func ParamsCells(cells []Cell, params string) []Cell {
	var out []Cell
	for _, c := range cells {
		if c.Params == params {
			out = append(out, c)
		}
	}
	return out
}

// decide is subsumptionAt of the cells of one set of parameters.
func decide(cells []Cell, workload, phase, host, vm string, margins Margins, schedule []int, describe bool) Verdict {
	v := noVerdict(workload, phase, host, vm, margins)
	var vmCells, both []Cell
	for _, c := range cells {
		if c.Workload == workload && c.Phase == phase && (c.Target == vm || c.Target == host) {
			both = append(both, c)
			if c.Target == vm {
				vmCells = append(vmCells, c)
			}
		}
	}
	v.OtherWork = OtherWorkOf(both)
	if rep := Interfered(vmCells); rep.Kind != InterferenceNotRecorded {
		v.Interference = &rep
		switch rep.Kind {
		case InterferenceAll:
			v.Reason = Reason{Kind: ReasonAllInterfered, VM: vm, OtherCPU: rep.OtherCPU, Runs: rep.Judged}
			return v
		case InterferenceSome:
			cells = WithoutRepeats(cells, rep.Runs)
			if gone := emptied(cells, rep.Runs); len(gone) > 0 {
				v.Reason = Reason{Kind: ReasonInterferedCells, VM: vm, OtherCPU: rep.OtherCPU, Cells: gone}
				return v
			}
		}
	}
	high, low, threads, why := comparedCells(cells, workload, phase, host, vm)
	if why.Kind != NoReason {
		v.Reason = why
		return v
	}
	k := verdictKey{workload: workload, phase: phase, host: host, vm: vm, high: high, low: low, threads: threads}
	k.looks = planLooks(cells, k, schedule)
	v.Looks = k.looks.looks
	v.Threads = threads
	if describe {
		v.Dropped = droppedThreads(cells, k)
	}
	j := judge(cells, k, margins)
	v.Host, v.VM, v.VMByThreads = j.host, j.vm, j.vmByThreads
	v.Outcome, v.Reason, v.Reversed = j.outcome, j.reason, j.reversed
	v.nextSteps(j, k, both)
	flagged := flaggedCells(cells, k)
	v.Flagged = flagged
	if describe {
		for _, side := range []Sensitivity{v.Host, v.VM} {
			if heterogeneous(side) {
				v.Heterogeneity = append(v.Heterogeneity, side)
			}
		}
		v.Mechanism = mechanisms(cells, k)
	}
	if j.hostShown {
		hs := v.Host.Shift
		v.SI = Float(1 - float64(v.VM.Shift.Estimate)/float64(hs.Estimate))
		if describe {
			v.SILow, v.SIHigh, v.SIConfidence = siInterval(cells, v, threads)
		}
		v.RelativeMargin = Float(math.Exp(margins.Relative * float64(hs.Low)))
		v.Margin, v.MarginNo = Float(math.Exp(j.lnYes)), Float(math.Exp(j.lnNo))
	}
	if v.Outcome == Subsumed && len(flagged) > 0 {
		v.Blocking, v.Reason = blockingCells(cells, flagged, k, margins)
		v.FlagsChecked = len(v.Blocking) == 0
		if !v.FlagsChecked {
			v.Outcome = Inconclusive
			// "repeats of them that agree would decide it"
			v.Next = &NextStep{Repeats: min(NextStepFactor*mostRepeats(both), MaxNextRepeats)}
		}
	}
	return v
}

// nextSteps sets what would decide v when j left it undecided: more
// repeats within the run's looks (MoreRepeats), else a new run's (Next),
// with the cap said in the reason when the looks reached it.
func (v *Verdict) nextSteps(j judged, k verdictKey, both []Cell) {
	again := &NextStep{Repeats: min(NextStepFactor*mostRepeats(both), MaxNextRepeats)}
	if j.undecided != nil {
		v.MoreRepeats = k.looks.more(j.undecided, j.moreHost)
		switch {
		case v.MoreRepeats != nil:
		case k.looks.sequential():
			v.Reason.Cap = &CapReached{Repeats: k.looks.cap(), Looks: k.looks.lastLook()}
			v.Next = &NextStep{MaxRepeats: min(NextStepFactor*k.looks.cap(), MaxNextRepeats)}
		default:
			v.Next = again
		}
	}
	if j.fewHost {
		v.Next = again
	}
}

// NextStep is what a new run of the same spec would need to decide a
// verdict: more repeats of each cell (Repeats), or, for a run whose looks
// stopped at their cap, a larger cap (MaxRepeats). One of the two is set.
type NextStep struct {
	Repeats    int `json:"repeats,omitempty"`
	MaxRepeats int `json:"max_repeats,omitempty"`
}

// NextStepFactor is how many times the repeats (or the cap) a next step
// asks for: twice as many narrow a rank interval by about 1/sqrt(2), a
// step worth a run, and no promise that it decides.
const NextStepFactor = 2

// MaxNextRepeats is the most repeats a next step asks for: the most a
// spec allows.
const MaxNextRepeats = 1000

// mostRepeats is the most repeats any of cells has.
func mostRepeats(cells []Cell) int {
	n := 0
	for _, c := range cells {
		n = max(n, len(c.Repeats))
	}
	return n
}

// emptied are the cells of runs that have no repeat left in cells.
func emptied(cells []Cell, runs []InterferedRun) []CellKey {
	hit := map[CellKey]bool{}
	for _, r := range runs {
		hit[r.CellKey] = true
	}
	var out []CellKey
	for _, c := range SortCells(cells) {
		if hit[c.CellKey] && len(c.Repeats) == 0 {
			out = append(out, c.CellKey)
		}
	}
	return out
}

// noVerdict is an inconclusive verdict with nothing measured: every
// number NaN, the reason to be said.
func noVerdict(workload, phase, host, vm string, margins Margins) Verdict {
	nan := Float(math.NaN())
	none := func(target string) Sensitivity {
		return Sensitivity{Target: target, Workload: workload, Phase: phase, Ratio: nan, Test: UTest{P: nan, SmallestP: nan},
			Shift: Shift{Estimate: nan, Low: nan, High: nan, Confidence: nan}, SmallestP: nan}
	}
	return Verdict{Outcome: Inconclusive, SI: nan, SILow: nan, SIHigh: nan, SIConfidence: nan, RelativeMargin: nan, Margin: nan, MarginNo: nan,
		Host: none(host), VM: none(vm), Margins: margins, Level: equivalenceLevel}
}

// comparedCells picks what a verdict compares: the highest and lowest QoS
// classes run on both host and vm (cells with rates only), and the thread
// counts, ascending, at which all four (target, class) cells exist; why
// says what is missing when there are not two classes or no such count.
func comparedCells(cells []Cell, workload, phase, host, vm string) (high, low int, threads []int, why Reason) {
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
		return 0, 0, nil, Reason{Kind: ReasonNoTwoClasses, Workload: workload, Phase: phase, Host: host, VM: vm}
	}
	high, low = common[len(common)-1], common[0]
	for t := range classes[host][high] {
		if classes[host][low][t] && classes[vm][high][t] && classes[vm][low][t] {
			threads = append(threads, t)
		}
	}
	if len(threads) == 0 {
		return high, low, nil, Reason{Kind: ReasonNoThreads, Workload: workload, Phase: phase, Host: host, VM: vm, High: high, Low: low}
	}
	sort.Ints(threads)
	return high, low, threads, Reason{}
}

// noHostEffect says why the host shows no QoS effect to subsume: too few
// repeats for its test to reach Alpha, a test not significant, the low
// class the faster, or an interval of its ratio that reaches 1x; NoReason
// when it shows one.
func noHostEffect(h Sensitivity) Reason {
	r := Reason{Host: h.Target, High: h.High, Low: h.Low, Side: h}
	switch {
	case !h.Test.Significant(Alpha) && float64(h.SmallestP) >= Alpha && h.Test.Ties && untiedSmallestP(h) < Alpha:
		r.Kind, r.UntiedP = ReasonTiedHost, untiedSmallestP(h)
	case !h.Test.Significant(Alpha) && float64(h.SmallestP) >= Alpha:
		r.Kind = ReasonFewHostRepeats
	case !h.Test.Significant(Alpha):
		r.Kind = ReasonNoHostEffect
	case h.Shift.Estimate <= 0:
		r.Kind = ReasonHostReversed
	case h.Shift.Low <= 0:
		r.Kind, r.Confidence = ReasonHostReachesOne, equivalenceConfidence
	default:
		return Reason{}
	}
	return r
}

// untiedSmallestP is the smallest p a sensitivity's test could reach with
// its sizes were none of its rates tied.
func untiedSmallestP(s Sensitivity) float64 {
	var sizes [][2]int
	for _, r := range s.ByThreads {
		sizes = append(sizes, [2]int{r.Test.N1, r.Test.N2})
	}
	return SmallestP(sizes)
}

// undefinedSide says why a side has no ratio: a class that did no work in
// any repeat at the thread counts compared (or no repeats at all);
// NoReason when it has one.
func undefinedSide(s Sensitivity) Reason {
	switch {
	case len(s.ByThreads) > 0:
		return Reason{}
	case s.IdleHigh > 0 || s.IdleLow > 0:
		return Reason{Kind: ReasonIdle, Side: s, High: s.High, Low: s.Low}
	}
	return Reason{Kind: ReasonNoRepeats, Side: s, High: s.High, Low: s.Low}
}

// siInterval bounds SI = 1 - vm/host (log ratios) over the rectangle of
// both sides' 95% intervals: with both true ratios inside theirs, which
// happens with at least the product of their coverages (the sides are
// independent), the true SI is inside it.
func siInterval(cells []Cell, v Verdict, threads []int) (low, high, coverage Float) {
	nan := Float(math.NaN())
	h := qosSensitivityAt(cells, v.Host.Target, v.Host.Workload, v.Host.Phase, v.Host.High, v.Host.Low, threads, Confidence).Shift
	m := qosSensitivityAt(cells, v.VM.Target, v.VM.Workload, v.VM.Phase, v.VM.High, v.VM.Low, threads, Confidence).Shift
	if !(h.Low > 0) || m.Low.IsNaN() {
		return nan, nan, nan
	}
	hL, hH, vL, vH := float64(h.Low), float64(h.High), float64(m.Low), float64(m.High)
	lowest, highest := vL/hH, vH/hL // the smallest and largest vm/host
	if vL < 0 {
		lowest = vL / hL
	}
	if vH < 0 {
		highest = vH / hH
	}
	return Float(1 - highest), Float(1 - lowest), h.Confidence * m.Confidence
}

// heterogeneous says when a side's thread counts disagree: two of them
// whose own 95% intervals of the ratio do not overlap, each reaching at
// least 90% (a range of one or two repeats covers too little for its edges
// to mean anything).
func heterogeneous(s Sensitivity) bool {
	for i, a := range s.ByThreads {
		for _, b := range s.ByThreads[i+1:] {
			sure := float64(a.Shift.Confidence) >= equivalenceConfidence-1e-9 && float64(b.Shift.Confidence) >= equivalenceConfidence-1e-9
			if sure && (a.Shift.High < b.Shift.Low || b.Shift.High < a.Shift.Low) {
				return true
			}
		}
	}
	return false
}

// fastestFirst returns the cells sorted by median total rate, highest first;
// cells with equal rates keep their order.
func fastestFirst(cells []Cell) []Cell {
	out := slices.Clone(cells)
	sort.SliceStable(out, func(i, j int) bool { return out[i].TotalRate.Median > out[j].TotalRate.Median })
	return out
}
