package analysis

import (
	"math"
	"slices"
)

// verdictKey is what one verdict compares: a workload (and phase), the two
// targets, the high and low class, and the thread counts where all four
// cells exist.
type verdictKey struct {
	workload, phase string
	host, vm        string
	high, low       int
	threads         []int
	// looks are the levels each thread count's interval and the pooled
	// one are judged at (one look at equivalenceLevel without a schedule).
	looks lookPlan
}

// judged is what the rule decides from one set of cells.
type judged struct {
	host, vm    Sensitivity
	vmByThreads []ThreadShift
	// hostShown says the host's effect is shown, so the band exists:
	// lnYes and lnNo are its edges on the log scale (NaN otherwise).
	hostShown   bool
	lnYes, lnNo float64
	outcome     Outcome
	reversed    bool
	reason      Reason
	// undecided are the thread counts whose more repeats could decide an
	// inconclusive answer (an interval too wide, or too few repeats for
	// one), and host says the host's cells too; nil for any other answer.
	undecided []int
	moreHost  bool
	// fewHost says the host's repeats are too few for its test ever to
	// reach Alpha (untied): more of them could show its effect. The
	// run's looks do not add them (undecided is nil); a new run could.
	fewHost bool
	// relativeBinds says the band's yes edge is the relative margin's,
	// from the low end of the host's interval.
	relativeBinds bool
}

// judge applies the rule Subsumption states to cells, without regard to
// flagged cells: what their most adverse values would do is decided by
// deciding again.
func judge(cells []Cell, k verdictKey, margins Margins) judged {
	j := judged{outcome: Inconclusive, lnYes: math.NaN(), lnNo: math.NaN()}
	j.host = qosSensitivityAt(cells, k.host, k.workload, k.phase, k.high, k.low, k.threads, equivalenceConfidence)
	j.vm = qosSensitivityAt(cells, k.vm, k.workload, k.phase, k.high, k.low, k.threads, equivalenceConfidence)
	for _, why := range []Reason{undefinedSide(j.host), undefinedSide(j.vm), noHostEffect(j.host)} {
		if why.Kind != NoReason {
			j.reason = why
			j.fewHost = why.Kind == ReasonFewHostRepeats
			return j
		}
	}
	hs := j.host.Shift
	lnAbs := math.Log(margins.Absolute)
	j.hostShown = true
	j.lnYes = math.Min(margins.Relative*float64(hs.Low), lnAbs)
	j.lnNo = math.Min(margins.Relative*float64(hs.High), lnAbs)
	j.relativeBinds = margins.Relative*float64(hs.Low) < lnAbs
	// The rule for no is the one-look rule at every look: the levels
	// of the looks guard yes, and a no needs no more repeats.
	vs90 := j.vm.Shift
	if pc := k.looks.pooledConfidence(); pc != equivalenceConfidence {
		j.vm = qosSensitivityAt(cells, k.vm, k.workload, k.phase, k.high, k.low, k.threads, pc)
	}
	vs := j.vm.Shift
	if c := k.looks.pooledConfidence(); float64(vs.Confidence) < c-1e-9 {
		j.reason = Reason{Kind: ReasonFewVMRepeats, VM: k.vm, Side: j.vm, Shift: vs, Confidence: c, Sequential: k.looks.sequential()}
		j.undecided = k.threads
		return j
	}
	j.vmByThreads = threadShiftsAt(cells, k, k.vm, k.looks.confidence)
	if j.decideNo(cells, k, vs90) {
		return j
	}
	j.decideYes(k)
	return j
}

// decideNo says "no" when the pooled VM ratio's interval lies wholly
// beyond the band's no edge, or one thread count's own interval does at
// the Bonferroni level for the thread counts compared (the union of k
// tests, each at Level/k).
func (j *judged) decideNo(cells []Cell, k verdictKey, vs Shift) bool {
	// beyond is the kind of no sh's interval shows: above the band (the
	// VM keeps an effect) or below it (reversed); NoReason inside it.
	beyond := func(sh Shift) ReasonKind {
		switch {
		case float64(sh.Low) > j.lnNo:
			return ReasonVMKeeps
		case float64(sh.High) < -j.lnNo:
			return ReasonVMReversed
		}
		return NoReason
	}
	no := func(r Reason) bool {
		r.VM, r.High, r.Low = k.vm, k.high, k.low
		j.outcome, j.reversed, j.reason = NotSubsumed, r.Kind == ReasonVMReversed, r
		return true
	}
	if kind := beyond(vs); kind != NoReason {
		return no(Reason{Kind: kind, Shift: vs})
	}
	if len(k.threads) < 2 {
		return false
	}
	level := 1 - 2*equivalenceLevel/float64(len(k.threads))
	for _, ts := range threadShifts(cells, k, k.vm, level) {
		sh := ts.Shift
		if float64(sh.Confidence) < level-1e-9 {
			continue
		}
		if kind := beyond(sh); kind != NoReason {
			return no(Reason{Kind: kind, Threads: ts.Threads, Shift: sh, Level: level, ThreadCounts: len(k.threads)})
		}
	}
	return false
}

// decideYes says "yes" when the pooled VM ratio's interval and every
// thread count's own lie inside the band (90% each with one look, else at
// their looks' levels), and otherwise why not: the first interval that is
// not inside says it, and every thread count whose more repeats could
// decide is kept in undecided (all of them when it is the pooled
// interval).
func (j *judged) decideYes(k verdictKey) {
	inside := func(sh Shift) bool { return float64(sh.Low) > -j.lnYes && float64(sh.High) < j.lnYes }
	vs := j.vm.Shift
	if !inside(vs) {
		j.reason, j.moreHost = j.edgeReason(k, vs, 0)
		j.undecided = k.threads
		return
	}
	for _, ts := range j.vmByThreads {
		sh := ts.Shift
		reason, host := Reason{}, false
		if c := k.looks.confidence(ts.Threads); float64(sh.Confidence) < c-1e-9 {
			t := j.vm.ByThreads[slices.IndexFunc(j.vm.ByThreads, func(r ThreadRatio) bool { return r.Threads == ts.Threads })].Test
			reason = Reason{Kind: ReasonFewVMRepeats, VM: k.vm, Threads: ts.Threads, N1: t.N1, N2: t.N2, Shift: sh, Confidence: c, Sequential: k.looks.sequential()}
		} else if !inside(sh) {
			reason, host = j.edgeReason(k, sh, ts.Threads)
		}
		if reason.Kind == NoReason {
			continue
		}
		if j.reason.Kind == NoReason {
			j.reason = reason
		}
		j.undecided = append(j.undecided, ts.Threads)
		j.moreHost = j.moreHost || host
	}
	if j.reason.Kind == NoReason {
		j.outcome = Subsumed
	}
}

// edgeReason says why the interval sh (the pooled one, threads 0, or one
// thread count's) is not inside the band: it crosses an edge (more repeats
// would tell), or it lies wholly between the band's yes edge and its no
// edge, a zone as wide as the host's uncertainty makes it: then the host's
// interval decides, not the VM's repeats. host says the host's repeats
// could decide too: its interval sets the band's yes edge (the relative
// margin binds, or the zone between the edges is the host's).
func (j *judged) edgeReason(k verdictKey, sh Shift, threads int) (reason Reason, host bool) {
	r := Reason{VM: k.vm, Host: k.host, High: k.high, Low: k.low, Threads: threads, Shift: sh, Side: j.host,
		Yes: math.Exp(j.lnYes), No: math.Exp(j.lnNo)}
	beyondYes := float64(sh.Low) >= j.lnYes || float64(sh.High) <= -j.lnYes
	withinNo := float64(sh.High) <= j.lnNo && float64(sh.Low) >= -j.lnNo
	switch {
	case beyondYes && withinNo && j.lnNo > j.lnYes:
		r.Kind, host = ReasonBetweenEdges, true
	case threads != 0:
		r.Kind, host = ReasonOutsideBandAt, j.relativeBinds
	case withinNo && j.lnNo > j.lnYes:
		r.Kind, host = ReasonHostEdge, true
	default:
		r.Kind, host = ReasonCrossesEdge, j.relativeBinds
	}
	return r, host
}

// threadShifts is each compared thread count's own shift on target with
// an interval of the coverage asked.
func threadShifts(cells []Cell, k verdictKey, target string, confidence float64) []ThreadShift {
	return threadShiftsAt(cells, k, target, func(int) float64 { return confidence })
}

// threadShiftsAt is threadShifts with each thread count's own coverage.
func threadShiftsAt(cells []Cell, k verdictKey, target string, confidence func(threads int) float64) []ThreadShift {
	var out []ThreadShift
	for _, t := range k.threads {
		s := qosSensitivityAt(cells, target, k.workload, k.phase, k.high, k.low, []int{t}, confidence(t))
		if len(s.ByThreads) == 1 {
			out = append(out, ThreadShift{Threads: t, Shift: s.Shift})
		}
	}
	return out
}

// droppedThreads are the thread counts at which one side ran both classes
// and the other did not, with that side's ratio.
func droppedThreads(cells []Cell, k verdictKey) []DroppedThreads {
	both := func(target string) map[int]bool {
		hi := cellsByThreads(cells, target, k.workload, k.phase, k.high)
		lo := cellsByThreads(cells, target, k.workload, k.phase, k.low)
		out := map[int]bool{}
		for t, c := range hi {
			if l, ok := lo[t]; ok && len(c.TotalRates) > 0 && len(l.TotalRates) > 0 {
				out[t] = true
			}
		}
		return out
	}
	onHost, onVM := both(k.host), both(k.vm)
	var out []DroppedThreads
	for _, side := range []struct {
		name      string
		has, lack map[int]bool
	}{{k.host, onHost, onVM}, {k.vm, onVM, onHost}} {
		for t := range side.has {
			if side.lack[t] {
				continue
			}
			s := qosSensitivityAt(cells, side.name, k.workload, k.phase, k.high, k.low, []int{t}, equivalenceConfidence)
			out = append(out, DroppedThreads{Threads: t, Side: side.name, Ratio: Float(s.RatioEstimate())})
		}
	}
	slices.SortFunc(out, func(a, b DroppedThreads) int { return a.Threads - b.Threads })
	return out
}

// flaggedCells are the cells a verdict rests on whose repeats cannot stand
// for one number, in table order.
func flaggedCells(cells []Cell, k verdictKey) []Cell {
	var out []Cell
	for _, c := range SortCells(cells) {
		if (c.Target == k.host || c.Target == k.vm) && c.Workload == k.workload && c.Phase == k.phase &&
			(c.QoS == k.high || c.QoS == k.low) && slices.Contains(k.threads, c.Threads) && c.FlaggedDispersion().Flag != FlagNone {
			out = append(out, c)
		}
	}
	return out
}

// adverseEnd is the value a flagged cell is set to when its repeats are
// taken at their most adverse: its highest repeat or its lowest, and
// its rate.
type adverseEnd struct {
	highest bool
	rate    float64
}

// adverse is the most adverse value c showed for a yes: the host's low
// class at its highest repeat and its high class at its lowest (both
// shrink the host's effect, and with it the band), the VM's classes at
// the end that pushes the VM ratio up (up) or down.
func adverse(c Cell, k verdictKey, up bool) adverseEnd {
	highest := (c.Target == k.host) == (c.QoS == k.low)
	if c.Target == k.vm {
		highest = up == (c.QoS == k.high)
	}
	if highest {
		return adverseEnd{true, slices.Max(c.TotalRates)}
	}
	return adverseEnd{false, slices.Min(c.TotalRates)}
}

// withAdverse returns cells with each of the flagged ones' repeats all at
// its most adverse value (the number of repeats kept).
func withAdverse(cells []Cell, flagged []Cell, k verdictKey, up bool) []Cell {
	out := slices.Clone(cells)
	for i, c := range out {
		if !slices.ContainsFunc(flagged, func(f Cell) bool { return f.CellKey == c.CellKey }) {
			continue
		}
		rates := make([]float64, len(c.TotalRates))
		for r := range rates {
			rates[r] = adverse(c, k, up).rate
		}
		out[i].TotalRates, out[i].TotalRate = rates, OrderStatsOf(rates)
	}
	return out
}

// blockingCells decides again with the flagged cells at their most adverse
// values, the VM's pushed up and then down: when the answer stays yes
// both ways, none blocks it. Otherwise it names the cells that alone turn
// it (or, when none does alone, all of them together), each with the
// value that does and what the rule would say, as the verdict's reason.
func blockingCells(cells []Cell, flagged []Cell, k verdictKey, margins Margins) (blocking []Cell, reason Reason) {
	turns := func(fs []Cell) (judged, bool, bool) {
		for _, up := range []bool{true, false} {
			if j := judge(withAdverse(cells, fs, k, up), k, margins); j.outcome != Subsumed {
				return j, up, true
			}
		}
		return judged{}, false, false
	}
	if _, _, ok := turns(flagged); !ok {
		return nil, Reason{}
	}
	reason = Reason{Kind: ReasonBlocked}
	for _, f := range flagged {
		if j, up, ok := turns([]Cell{f}); ok {
			blocking = append(blocking, f)
			reason.Blockers = append(reason.Blockers, blocker(f, k, up, j))
		}
	}
	if len(reason.Blockers) == 0 {
		j, up, _ := turns(flagged)
		reason.Kind = ReasonBlockedTogether
		for _, f := range flagged {
			blocking = append(blocking, f)
			reason.Blockers = append(reason.Blockers, blocker(f, k, up, j))
		}
	}
	return blocking, reason
}

// blocker is a flagged cell that turns a yes: its most adverse value and
// what the rule would say then.
func blocker(f Cell, k verdictKey, up bool, j judged) Blocker {
	a := adverse(f, k, up)
	return Blocker{Cell: f, Highest: a.highest, Rate: a.rate, Then: j.outcome, Because: j.reason}
}
