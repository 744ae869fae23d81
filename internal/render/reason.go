package render

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/units"
)

// VerdictReason is why verdict v's answer is what it is, in words:
// ReasonText of its reason; empty for a yes.
func VerdictReason(v analysis.Verdict) string { return ReasonText(v.Reason) }

// ReasonText words a verdict's reason: "the VM keeps a QoS effect, 33/9 =
// 2.5x", "too few host repeats to tell (...)"; empty for NoReason. A
// reason whose schedule reached its cap says so after it.
func ReasonText(r analysis.Reason) string {
	s := reasonWords(r)
	if r.Cap != nil {
		s += fmt.Sprintf("; the cap of %d repeats (max_repeats) was reached at %s: a larger --max-repeats, or a quieter machine, would tell",
			r.Cap.Repeats, units.Plural(r.Cap.Looks, "look"))
	}
	return s
}

// reasonWords is ReasonText without the cap.
func reasonWords(r analysis.Reason) string {
	switch r.Kind {
	case analysis.NoReason:
		return ""
	case analysis.ReasonParamSets:
		return fmt.Sprintf("%s ran with %d sets of parameters (%s), which one verdict cannot compare; each is judged alone",
			WorkloadText(r.Workload, r.Phase), len(r.Params), strings.Join(r.Params, "; "))
	case analysis.ReasonAllInterfered:
		return fmt.Sprintf("other work on the host took %s during every one of the %d %s cell runs, so none is left to judge; run again on a quieter host",
			cpuText(float64(r.OtherCPU)), r.Runs, r.VM)
	case analysis.ReasonInterferedCells:
		cells := make([]string, len(r.Cells))
		for i, c := range r.Cells {
			cells[i] = CellText(c)
		}
		return fmt.Sprintf("every cell run of %s was interfered with (other work on the host took %s during them), so none is left to judge; run again on a quieter host",
			andList(cells), cpuText(float64(r.OtherCPU)))
	case analysis.ReasonNoTwoClasses:
		return fmt.Sprintf("%s has no two QoS classes run on both %s and %s", WorkloadText(r.Workload, r.Phase), r.Host, r.VM)
	case analysis.ReasonNoThreads:
		return fmt.Sprintf("%s has no thread count run at QoS %d and %d on both %s and %s", WorkloadText(r.Workload, r.Phase), r.High, r.Low, r.Host, r.VM)
	case analysis.ReasonNoRepeats, analysis.ReasonIdle:
		return undefinedText(r.Side)
	case analysis.ReasonVMKeeps, analysis.ReasonVMReversed:
		return noText(r)
	case analysis.ReasonFewVMRepeats:
		return fewVMText(r)
	case analysis.ReasonBetweenEdges, analysis.ReasonOutsideBandAt, analysis.ReasonHostEdge, analysis.ReasonCrossesEdge:
		return edgeText(r)
	case analysis.ReasonBlocked, analysis.ReasonBlockedTogether:
		return blockingText(r)
	}
	return noHostText(r)
}

// noHostText says why the host shows no QoS effect to subsume.
func noHostText(r analysis.Reason) string {
	h := r.Side
	p := func(p float64) string { return strconv.FormatFloat(p, 'g', 2, 64) }
	switch r.Kind {
	case analysis.ReasonTiedHost:
		return fmt.Sprintf("too many tied %s rates to tell: given their ties the smallest reachable p is %s with %s, where untied rates could reach %s; "+
			"rates measured finer (longer cells, or more work per cell) would tell", h.Target, p(float64(h.SmallestP)), strataText(h), p(r.UntiedP))
	case analysis.ReasonFewHostRepeats:
		return fmt.Sprintf("too few %s repeats to tell (smallest reachable p %s with %s)", h.Target, p(float64(h.SmallestP)), strataText(h))
	case analysis.ReasonNoHostEffect:
		return fmt.Sprintf("%s shows no significant QoS effect, so there is nothing to subsume; on a Linux host whose cores are alike QoS only decides who runs when cores are scarce: run with contention, as qoslab run --default contention does", h.Target)
	case analysis.ReasonHostReversed:
		return fmt.Sprintf("on %s QoS %d is faster than QoS %d (%d/%d = %s), so there is no effect to subsume", h.Target, h.Low, h.High, h.High, h.Low, Ratio(h.RatioEstimate()))
	case analysis.ReasonHostReachesOne:
		return fmt.Sprintf("the %s ratio's %.0f%% interval reaches 1x, so the margin has no effect to be a share of", h.Target, 100*r.Confidence)
	}
	return fmt.Sprintf("no reason of kind %d", r.Kind)
}

// undefinedText says why a side has no ratio.
func undefinedText(s analysis.Sensitivity) string {
	var idle []string
	if s.IdleHigh > 0 {
		idle = append(idle, fmt.Sprintf("QoS %d", s.High))
	}
	if s.IdleLow > 0 {
		idle = append(idle, fmt.Sprintf("QoS %d", s.Low))
	}
	if len(idle) == 0 {
		return fmt.Sprintf("%s has no repeats at QoS %d and %d to compare", s.Target, s.High, s.Low)
	}
	return fmt.Sprintf("on %s %s did no work in any repeat (rate 0), so its %d/%d ratio is undefined", s.Target, strings.Join(idle, " and "), s.High, s.Low)
}

// classRatio is "33/9 = 1.3x" of a shift's estimate.
func classRatio(high, low int, sh analysis.Shift) string {
	return fmt.Sprintf("%d/%d = %s", high, low, Ratio(math.Exp(float64(sh.Estimate))))
}

// noText says why the answer is no: the VM keeps an effect or reverses
// the classes, pooled or at one thread count.
func noText(r analysis.Reason) string {
	what := "the VM keeps a QoS effect"
	if r.Kind == analysis.ReasonVMReversed {
		what = "QoS reversed in the VM"
	}
	if r.Threads == 0 {
		return what + ", " + classRatio(r.High, r.Low, r.Shift)
	}
	bare := analysis.Shift{Low: r.Shift.Low, High: r.Shift.High, Confidence: analysis.Float(analysis.EquivalenceConfidence)}
	return what + fmt.Sprintf(" at %s (%s%s, a %.1f%% interval: %.0f%% over the %d thread counts)", units.Plural(r.Threads, "thread"),
		classRatio(r.High, r.Low, r.Shift), Interval(bare), 100*r.Level, 100*analysis.EquivalenceConfidence, r.ThreadCounts)
}

// fewVMText says the VM's repeats are too few for the interval asked.
func fewVMText(r analysis.Reason) string {
	if r.Threads == 0 {
		return fmt.Sprintf("too few %s repeats for a %s interval of its ratio (%s reach %s)", r.VM, coverage(r.Confidence, r.Sequential), strataText(r.Side),
			coverage(float64(r.Shift.Confidence), r.Sequential))
	}
	return fmt.Sprintf("too few %s repeats at %s for a %s interval of its ratio (%d vs %d repeats reach %s), and yes needs every thread count inside the band",
		r.VM, units.Plural(r.Threads, "thread"), coverage(r.Confidence, r.Sequential), r.N1, r.N2, coverage(float64(r.Shift.Confidence), r.Sequential))
}

// edgeText says why the VM's interval is not inside the band.
func edgeText(r analysis.Reason) string {
	at := ""
	if r.Threads != 0 {
		at = " at " + units.Plural(r.Threads, "thread")
	}
	what := fmt.Sprintf("the %s ratio%s, %s%s,", r.VM, at, classRatio(r.High, r.Low, r.Shift), Interval(r.Shift))
	host := fmt.Sprintf("%s %s%s", r.Host, classRatio(r.High, r.Low, r.Side.Shift), Interval(r.Side.Shift))
	switch r.Kind {
	case analysis.ReasonBetweenEdges:
		return fmt.Sprintf("%s lies between the band's yes edge %s and its no edge %s, which differ by the host's uncertainty (%s): "+
			"the host's interval decides, and more host repeats would narrow it", what, Ratio(r.Yes), Ratio(r.No), host)
	case analysis.ReasonOutsideBandAt:
		return what + " is not inside the band, and yes needs every thread count inside it: more repeats would tell"
	case analysis.ReasonHostEdge:
		return fmt.Sprintf("the %s ratio's interval crosses the band's edge %s, which the low end of the host's interval sets (%s): "+
			"more repeats would tell, the host's most: its interval is what narrows the band", r.VM, Ratio(r.Yes), host)
	}
	return fmt.Sprintf("the %s ratio's interval crosses the band's edge: more repeats would tell", r.VM)
}

// blockingText names the flagged cells that would turn a yes, each with
// the value that does and what the rule would say then.
func blockingText(r analysis.Reason) string {
	var named, parts, at []string
	for _, b := range r.Blockers {
		name := flagName(b.Cell)
		named = append(named, name)
		parts = append(parts, fmt.Sprintf("%s: %s the answer would not be yes (%s): repeats of it that agree would decide it",
			name, adverseText(b), outcomeText(b.Then, b.Because)))
		at = append(at, CellText(b.Cell.CellKey)+" "+adverseText(b))
	}
	if r.Kind == analysis.ReasonBlocked || len(r.Blockers) == 0 {
		return strings.Join(parts, "; ")
	}
	b := r.Blockers[0]
	return fmt.Sprintf("%s: together, %s, they would turn the answer (%s): repeats of them that agree would decide it",
		strings.Join(named, "; "), strings.Join(at, " and "), outcomeText(b.Then, b.Because))
}

// adverseText is "at its highest repeat (1.69M loops/s)".
func adverseText(b analysis.Blocker) string {
	which := "lowest"
	if b.Highest {
		which = "highest"
	}
	return fmt.Sprintf("at its %s repeat (%s %s/s)", which, units.SI(b.Rate), b.Cell.Unit)
}

// outcomeText is an answer and its reason in a few words: "no: the VM
// keeps a QoS effect, 33/9 = 1.3x", "inconclusive: ...".
func outcomeText(o analysis.Outcome, r analysis.Reason) string {
	if r.Kind == analysis.NoReason {
		return string(o)
	}
	return string(o) + ": " + ReasonText(r)
}

// strataText says how many repeats a sensitivity compared: "3 vs 3
// repeats", "1 vs 1 repeats at each of 4 thread counts", or per thread
// count when they differ.
func strataText(s analysis.Sensitivity) string {
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

// coverage prints an interval's coverage: whole percents for the one-look
// 90%, one decimal for a look's (95.5%).
func coverage(c float64, sequential bool) string {
	if !sequential {
		return fmt.Sprintf("%.0f%%", 100*c)
	}
	return strconv.FormatFloat(100*c, 'f', 1, 64) + "%"
}

// Interval is " [low..high]" of a shift's interval as ratios, with the
// coverage reached when under the verdict's 90%; empty without one.
func Interval(sh analysis.Shift) string {
	if sh.Low.IsNaN() {
		return ""
	}
	s := fmt.Sprintf(" [%s..%s]", ratioNumber(math.Exp(float64(sh.Low))), ratioNumber(math.Exp(float64(sh.High))))
	if c := float64(sh.Confidence); c < analysis.EquivalenceConfidence-1e-9 {
		s += fmt.Sprintf(" (%.0f%%)", 100*c)
	}
	return s
}

// Ratio is analysis.FormatRatio, except within 1% of 1, where three
// significant digits would print a 0.5% effect as 1x or 1.01x: there it
// keeps two significant digits of the distance from 1 (1.005x, 1.0096x,
// 0.9995x).
func Ratio(r float64) string {
	d := math.Abs(r - 1)
	if !(d < 0.01) || d == 0 {
		return FormatRatio(analysis.Float(r))
	}
	decimals := min(12, 1-int(math.Floor(math.Log10(d))))
	s := strings.TrimRight(strconv.FormatFloat(r, 'f', decimals, 64), "0")
	return strings.TrimSuffix(s, ".") + "x"
}

// ratioNumber is Ratio without the "x".
func ratioNumber(r float64) string { return strings.TrimSuffix(Ratio(r), "x") }

// threadList lists thread counts: "1 thread", "1 and 2 threads", "1, 2 and
// 4 threads".
func threadList(threads []int) string {
	parts := make([]string, len(threads))
	for i, t := range threads {
		parts[i] = strconv.Itoa(t)
	}
	switch len(parts) {
	case 0:
		return "no thread count"
	case 1:
		return units.Plural(threads[0], "thread")
	}
	return andList(parts) + " threads"
}

// VerdictLine is a verdict's line (VerdictText) in its three parts, so
// that each output format writes the answer its own way (a terminal in
// colour) from the outcome, never by finding it in the text.
type VerdictLine struct {
	// Head opens the line: "QoS subsumed in VM: ".
	Head string
	// Answer is the outcome, whose word comes next.
	Answer analysis.Outcome
	// Rest is what follows the answer: the reason and what the verdict
	// rests on.
	Rest string
}

// LineOf is verdict v's line in its parts.
func LineOf(v analysis.Verdict) VerdictLine {
	return VerdictLine{Head: "QoS subsumed in " + TargetLabel(v.VM.Target) + ": ", Answer: v.Outcome, Rest: verdictRest(v)}
}

// VerdictText renders verdict v as one line, the outcome and its reason
// first, then what it rests on:
//
//	QoS subsumed in VM: yes (SI 0.990 [0.985..0.995]; host 33/9 = 254x [231..280], p<0.001; vm 33/9 = 1.05x [0.98..1.12]; band 0.8x..1.25x: margins 1.72x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)
//	QoS subsumed in VM: no: QoS reversed in the VM, 33/9 = 0.194x (SI 1.296 [...]; ...)
//	QoS subsumed in VM: inconclusive: host fp qos=9 threads=1 repeats 77x apart (SI ...)
//
// When no cells could be compared, the parenthesis is left out. SI prints
// with three decimals and its interval ("n/a" unless the host's effect is
// shown), with the coverage that interval has when under 90%; the ratios
// are the Hodges-Lehmann estimates with their 90% intervals (and the
// coverage reached, when under 90%); the host's p value is its stratified
// rank-sum test's. A side whose thread counts disagree is said after the
// parenthesis, with each thread count's ratio.
func VerdictText(v analysis.Verdict) string {
	l := LineOf(v)
	return l.Head + string(l.Answer) + l.Rest
}

// verdictRest is the verdict's line after its answer.
func verdictRest(v analysis.Verdict) string {
	head := ""
	if v.Outcome == analysis.Subsumed {
		if took := tookText(v.Looks); took != "" {
			head += " " + took
		}
	}
	if v.Reason.Kind != analysis.NoReason {
		head += ": " + ReasonText(v.Reason)
	}
	if len(v.Host.ByThreads) == 0 || len(v.VM.ByThreads) == 0 { // nothing was compared
		return head
	}
	parts := []string{"at " + threadList(v.Threads), "SI " + siText(v), sideText(v.Host) + ", " + FormatP(v.Host.Test.P), sideText(v.VM)}
	if !v.Margin.IsNaN() {
		parts = append(parts, bandText(v))
	}
	parts = append(parts, intervalsText(v.Looks))
	return head + " (" + strings.Join(parts, "; ") + ")" + verdictTail(v)
}

// siText is SI with three decimals and its interval, with the coverage
// that interval has when under 90%; "n/a" without a host effect.
func siText(v analysis.Verdict) string {
	if v.SI.IsNaN() {
		return "n/a"
	}
	f := func(x analysis.Float) string { return strconv.FormatFloat(float64(x), 'f', 3, 64) }
	si := f(v.SI)
	if !v.SILow.IsNaN() {
		si += " [" + f(v.SILow) + ".." + f(v.SIHigh) + "]"
		if c := float64(v.SIConfidence); c < analysis.EquivalenceConfidence-1e-9 {
			si += fmt.Sprintf(" (%.0f%%)", 100*c)
		}
	}
	return si
}

// sideText is a side's ratio with its interval: "host 33/9 = 3.1x
// [3.04..3.16]".
func sideText(s analysis.Sensitivity) string {
	return fmt.Sprintf("%s %d/%d = %s%s", s.Target, s.High, s.Low, Ratio(s.RatioEstimate()), Interval(s.Shift))
}

// bandText is the band and the margins it came from.
func bandText(v analysis.Verdict) string {
	band := fmt.Sprintf("band %s..%s: margins %s (%.0f%% of the host's effect at its interval's low end) and %s (absolute)",
		Ratio(float64(1/v.Margin)), Ratio(float64(v.Margin)), Ratio(float64(v.RelativeMargin)), 100*v.Margins.Relative, Ratio(v.Margins.Absolute))
	if Ratio(float64(v.MarginNo)) != Ratio(float64(v.Margin)) {
		band += fmt.Sprintf(", no only outside %s..%s (at its high end)", Ratio(float64(1/v.MarginNo)), Ratio(float64(v.MarginNo)))
	}
	return band
}

// verdictTail is what the line says after its parenthesis: flagged cells
// that cannot change it, interference, dropped thread counts,
// disagreeing thread counts and the caveats.
func verdictTail(v analysis.Verdict) string {
	line := ""
	if v.FlagsChecked {
		line += fmt.Sprintf("; %s cannot change it: at %s most adverse repeats the answer stays yes",
			units.Plural(len(v.Flagged), "flagged cell"), map[bool]string{true: "its", false: "their"}[len(v.Flagged) == 1])
	}
	if i := v.Interference; i != nil && i.Kind == analysis.InterferenceSome {
		line += fmt.Sprintf("; judged without %d of %d %s cell runs, in which other work on the host took their vCPUs' CPU (see its warning)", len(i.Runs), i.Judged, v.VM.Target)
	}
	for _, d := range v.Dropped {
		line += fmt.Sprintf("; left out %s, where only %s ran both classes (%s %d/%d = %s)", units.Plural(d.Threads, "thread"), d.Side, d.Side, v.Host.High, v.Host.Low, Ratio(float64(d.Ratio)))
	}
	for _, h := range HeterogeneityText(v) {
		line += "; " + h
	}
	for _, c := range v.Caveats {
		line += "; caveat: " + c
	}
	return line
}

// HeterogeneityText says, per side whose thread counts disagree, each
// thread count's ratio: "host 33/9 differs by thread count beyond the 95%
// intervals: 206x [199..214] at 1 thread, 356x [341..370] at 2 threads".
func HeterogeneityText(v analysis.Verdict) []string {
	var out []string
	for _, s := range v.Heterogeneity {
		parts := make([]string, len(s.ByThreads))
		for i, r := range s.ByThreads {
			parts[i] = fmt.Sprintf("%s [%s..%s] at %s", Ratio(math.Exp(float64(r.Shift.Estimate))),
				ratioNumber(math.Exp(float64(r.Shift.Low))), ratioNumber(math.Exp(float64(r.Shift.High))), units.Plural(r.Threads, "thread"))
		}
		out = append(out, fmt.Sprintf("%s %d/%d differs by thread count beyond the 95%% intervals: %s", s.Target, s.High, s.Low, strings.Join(parts, ", ")))
	}
	return out
}

// intervalsText says what coverage a verdict's intervals have at its
// looks: "90% intervals, two one-sided tests at 5%" for one look; "95.5%
// intervals at look 1 of 3 (two one-sided tests at 2.26%; 5% over the 3
// looks)" when every thread count is at one look, else each thread
// count's.
func intervalsText(looks []analysis.ThreadLook) string {
	if !analysis.Sequential(looks) {
		return fmt.Sprintf("%.0f%% intervals, two one-sided tests at %.0f%%", 100*analysis.EquivalenceConfidence, 100*analysis.EquivalenceLevel)
	}
	pct := func(l float64) string { return strconv.FormatFloat(100*l, 'g', 3, 64) + "%" }
	spent := fmt.Sprintf("%.0f%% over the %d looks", 100*analysis.EquivalenceLevel, looks[0].Of)
	first := looks[0]
	same := !slices.ContainsFunc(looks, func(l analysis.ThreadLook) bool { return l.Index != first.Index })
	if same {
		return fmt.Sprintf("%s intervals at look %d of %d (two one-sided tests at %s; %s)", coverage(1-2*first.Level, true), first.Index, first.Of, pct(first.Level), spent)
	}
	var parts []string
	for _, l := range looks {
		parts = append(parts, fmt.Sprintf("%s at %s (look %d of %d)", coverage(1-2*l.Level, true), units.Plural(l.Threads, "thread"), l.Index, l.Of))
	}
	return fmt.Sprintf("intervals at each thread count's look: %s, pooled %s (two one-sided tests; %s)", strings.Join(parts, ", "),
		coverage(analysis.PooledConfidence(looks), true), spent)
}

// LooksTook says what a verdict's looks took, at the end of a run that
// added blocks of repeats for it: "fp yes after 12 repeats at 1 thread and
// 18 at 2 threads, 3 looks of 3", each thread count's repeats as the
// verdict judged them (a thread count decided at the first look is not
// named), with the reason when the answer is not yes; empty when the
// verdict was judged at one look.
func LooksTook(v analysis.Verdict) string {
	took := tookText(v.Looks)
	if took == "" {
		return ""
	}
	what := v.VM.Workload
	if v.VM.Phase != "" {
		what += " " + v.VM.Phase
	}
	line := fmt.Sprintf("%s %s %s of %d", what, v.Outcome, took, v.Looks[0].Of)
	if v.Outcome != analysis.Subsumed {
		if reason := VerdictReason(v); reason != "" {
			line += ": " + reason
		}
	}
	return line
}

// tookText says what a yes after more than one look took: "after 12
// repeats at 2 threads, 2 looks"; empty after one.
func tookText(looks []analysis.ThreadLook) string {
	if !analysis.Sequential(looks) || analysis.LastLook(looks) < 2 {
		return ""
	}
	var parts []string
	var ts []int
	for i, l := range looks {
		if l.Index < 2 {
			continue
		}
		ts = append(ts, l.Threads)
		if i+1 < len(looks) && looks[i+1].Index >= 2 && looks[i+1].Repeats == l.Repeats {
			continue // said together with the next
		}
		n := strconv.Itoa(l.Repeats)
		if len(parts) == 0 {
			n = units.Plural(l.Repeats, "repeat")
		}
		parts = append(parts, n+" at "+threadList(ts))
		ts = nil
	}
	return "after " + strings.Join(parts, " and ") + ", " + units.Plural(analysis.LastLook(looks), "look")
}

// VerdictRule says in words what SI is and how the verdict is reached with
// these margins: what the summaries and the report print beside the
// verdicts.
func VerdictRule(m analysis.Margins) string {
	return fmt.Sprintf("SI = 1 - ln(vm ratio)/ln(host ratio) is the share of the host's QoS effect, on a log scale, that the VM loses: "+
		"1 when the VM keeps none of it, 0 when it keeps it all, above 1 when the VM reverses the classes; its interval spans both sides' 95%% intervals. "+
		"Each ratio is the high class's rate over the low one's (Hodges-Lehmann, within thread counts), with its %.0f%% interval. "+
		"yes: the host's effect is significant (stratified rank-sum test, two-sided, %g) and the VM ratio's whole %.0f%% interval lies inside the band, "+
		"pooled and at every thread count compared, "+
		"whose edge is the smaller of %.0f%% of the host's effect at the low end of its interval (relative margin) and %s either way (absolute margin): "+
		"two one-sided tests at %.0f%%. no: that interval lies wholly outside the band (above it, or below it: QoS reversed), pooled or at one thread count "+
		"(then at the Bonferroni level for the thread counts compared), the edge then taken at the high end of the host's interval. "+
		"inconclusive: anything else, with the reason. A cell whose repeats disagree blocks a yes only when its most adverse repeats would turn it "+
		"(a host low class at its highest, a host high class at its lowest, a VM cell at the end that pushes the VM ratio out of the band): then the verdict names it. "+
		"Exact distributions (conditional on ties) below 50 repeats per side. "+
		"A run whose spec allows more repeats than it plans (max_repeats) decides at looks, adding repeats of the undecided thread counts' cells between them: "+
		"the 5%% of each one-sided test is spent over the looks (Pocock-type alpha spending, 5%%·ln(1+(e-1)·n/max_repeats) by n repeats), "+
		"so each look's intervals are wider than 90%% and a false yes over all looks stays within 5%%; the verdict says each interval's coverage and look.",
		100*analysis.EquivalenceConfidence, analysis.Alpha, 100*analysis.EquivalenceConfidence, 100*m.Relative, FormatRatio(analysis.Float(m.Absolute)), 100*analysis.EquivalenceLevel)
}

// SimDesign names a simulated case's design: "fixed 6", "sequential
// 6..18".
func SimDesign(c analysis.SimCase) string {
	if !c.Sequential() {
		return fmt.Sprintf("fixed %d", c.Repeats)
	}
	return fmt.Sprintf("sequential %d..%d", c.Repeats, c.MaxRepeats)
}

// VerdictJSON is a verdict as the JSON documents hold it (summary.json,
// results show --json, results list --json): analysis' values, with its
// reason and its disagreeing thread counts worded, in the field order
// analysis.Verdict has always had.
type VerdictJSON struct {
	Outcome        analysis.Outcome             `json:"outcome"`
	Reason         string                       `json:"reason,omitempty"`
	Reversed       bool                         `json:"reversed,omitempty"`
	SI             analysis.Float               `json:"si"`
	SILow          analysis.Float               `json:"si_low"`
	SIHigh         analysis.Float               `json:"si_high"`
	SIConfidence   analysis.Float               `json:"si_confidence"`
	Host           analysis.Sensitivity         `json:"host"`
	VM             analysis.Sensitivity         `json:"vm"`
	Threads        []int                        `json:"threads"`
	Dropped        []analysis.DroppedThreads    `json:"dropped,omitempty"`
	VMByThreads    []analysis.ThreadShift       `json:"vm_by_threads,omitempty"`
	Margins        analysis.Margins             `json:"margins"`
	Level          float64                      `json:"level"`
	Looks          []analysis.ThreadLook        `json:"looks,omitempty"`
	MoreRepeats    *analysis.MoreRepeats        `json:"more_repeats,omitempty"`
	Next           *analysis.NextStep           `json:"next_step,omitempty"`
	RelativeMargin analysis.Float               `json:"relative_margin_ratio"`
	Margin         analysis.Float               `json:"margin"`
	MarginNo       analysis.Float               `json:"margin_no"`
	Flagged        []string                     `json:"flagged,omitempty"`
	Blocking       []string                     `json:"blocking,omitempty"`
	FlagsChecked   bool                         `json:"flags_checked,omitempty"`
	Heterogeneity  []string                     `json:"heterogeneity,omitempty"`
	Mechanism      []analysis.Mechanism         `json:"mechanism"`
	Caveats        []string                     `json:"caveats,omitempty"`
	OtherWork      *analysis.OtherWork          `json:"other_work,omitempty"`
	Interference   *analysis.InterferenceReport `json:"interference,omitempty"`
}

// VerdictDocument is verdict v as the JSON documents hold it.
func VerdictDocument(v analysis.Verdict) VerdictJSON {
	return VerdictJSON{Outcome: v.Outcome, Reason: VerdictReason(v), Reversed: v.Reversed, SI: v.SI, SILow: v.SILow, SIHigh: v.SIHigh, SIConfidence: v.SIConfidence,
		Host: v.Host, VM: v.VM, Threads: v.Threads, Dropped: v.Dropped, VMByThreads: v.VMByThreads, Margins: v.Margins, Level: v.Level, Looks: v.Looks,
		MoreRepeats: v.MoreRepeats, Next: v.Next, RelativeMargin: v.RelativeMargin, Margin: v.Margin, MarginNo: v.MarginNo, Flagged: flagNames(v.Flagged),
		Blocking: flagNames(v.Blocking), FlagsChecked: v.FlagsChecked, Heterogeneity: HeterogeneityText(v), Mechanism: v.Mechanism, Caveats: v.Caveats,
		OtherWork: v.OtherWork, Interference: v.Interference}
}

// flagName names a flagged cell with why: "host fp qos=9 threads=1
// repeats 77x apart".
func flagName(c analysis.Cell) string { return CellText(c.CellKey) + " " + FlagText(c) }

// flagNames are flagName of each of cells; nil for none.
func flagNames(cells []analysis.Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, flagName(c))
	}
	return out
}

// VerdictDocuments are verdicts as the JSON documents hold them, [] for
// none.
func VerdictDocuments(verdicts []analysis.Verdict) []VerdictJSON {
	out := make([]VerdictJSON, len(verdicts))
	for i, v := range verdicts {
		out[i] = VerdictDocument(v)
	}
	return out
}
