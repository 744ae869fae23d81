package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/units"
)

// The words of the report's first screen: a verdict's answer in a few
// words and in plain sentences a newcomer reads.

// Headline is a verdict's answer in a few words, as the report's first
// screen heads it.
func Headline(v analysis.Verdict) string {
	switch v.Outcome {
	case analysis.Subsumed:
		return "QoS is subsumed in the VM"
	case analysis.NotSubsumed:
		return "QoS is not subsumed in the VM"
	}
	return "this run cannot tell whether QoS is subsumed in the VM"
}

// classText names a class by its number and name: "QoS 33
// (user-interactive)".
func classText(c int) string { return fmt.Sprintf("QoS %d (%s)", c, qos.Class(c)) }

// shiftRange is a shift's interval as ratios, "0.777x..1.5x"; empty
// without one.
func shiftRange(s analysis.Shift) string {
	if s.Low.IsNaN() || s.High.IsNaN() {
		return ""
	}
	return Ratio(math.Exp(float64(s.Low))) + ".." + Ratio(math.Exp(float64(s.High)))
}

// PlainVerdict says in plain words what the run found: what the host did
// with the two classes, what the VM did, and why that is the answer.
func PlainVerdict(v analysis.Verdict) string {
	if len(v.Host.ByThreads) == 0 || len(v.VM.ByThreads) == 0 {
		return "Nothing could be compared: " + VerdictReason(v) + "."
	}
	hi, lo := classText(v.Host.High), classText(v.Host.Low)
	host := v.Host.RatioEstimate()
	if v.Margin.IsNaN() {
		s := fmt.Sprintf("On the host, %s ran %s as fast at %s as at %s, but these repeats do not show that difference to be more than chance", SensitivityName(v.Host), Ratio(host), hi, lo)
		return s + ": without a QoS effect shown on the host, the run cannot show one lost in the VM (" + VerdictReason(v) + ")."
	}
	s := fmt.Sprintf("On the host, %s ran %s faster at %s than at %s. ", SensitivityName(v.Host), Ratio(host), hi, lo)
	band := Ratio(1/float64(v.Margin)) + ".." + Ratio(float64(v.Margin))
	vm := v.VM.RatioEstimate()
	switch {
	case v.Outcome == analysis.Subsumed:
		return s + fmt.Sprintf("In the VM the two classes ran alike: %s, inside the band %s that counts as alike, pooled and at every thread count: inside the VM, the guest's QoS classes made no difference that counts.", Ratio(vm), band)
	case v.Outcome == analysis.NotSubsumed && v.Reversed:
		return s + fmt.Sprintf("In the VM the order is reversed: the higher class ran at %s the lower one's rate.", beyondAt(v, vm))
	case v.Outcome == analysis.NotSubsumed:
		return s + fmt.Sprintf("In the VM the higher class still ran faster: %s, beyond the band %s that counts as alike, so the guest's classes still matter.", beyondAt(v, vm), band)
	case len(v.Blocking) > 0:
		return s + fmt.Sprintf("In the VM the ratio was %s, but a yes would rest on cells whose repeats disagree too much to stand for one number (%s).", Ratio(vm), blockingCells(v))
	}
	if t, r := acrossEdge(v); r != "" {
		return s + fmt.Sprintf("In the VM the ratio was %s, but %sits uncertainty (%s) reaches across the edge of the band %s that counts as alike, so this run cannot tell whether the classes ran alike.", Ratio(vm), t, r, band)
	}
	return s + fmt.Sprintf("In the VM the ratio was %s: %s.", Ratio(vm), VerdictReason(v))
}

// beyondAt is the VM's ratio that lay beyond the band's edge for no: the
// pooled one, vm, "1.61x"; or, when the pooled one did not, the first
// thread count's that did: "1.61x at 4 threads (1x pooled)".
func beyondAt(v analysis.Verdict, vm float64) string {
	m := float64(v.MarginNo)
	if pooledBeyond(v.VM.Shift, m) {
		return Ratio(vm)
	}
	for _, ts := range v.VMByThreads {
		if pooledBeyond(ts.Shift, m) {
			return fmt.Sprintf("%s at %s (%s pooled over every thread count)", Ratio(math.Exp(float64(ts.Shift.Estimate))), units.Plural(ts.Threads, "thread"), Ratio(vm))
		}
	}
	return Ratio(vm)
}

// pooledBeyond says whether a shift's whole interval lies beyond [1/m, m].
func pooledBeyond(s analysis.Shift, m float64) bool {
	lo, hi := math.Exp(float64(s.Low)), math.Exp(float64(s.High))
	return lo > m || hi < 1/m
}

// acrossEdge is where the VM's interval reaches across the band's edge,
// and that interval: the pooled one (where ""), or the first thread
// count's whose does (where "at 2 threads ", to go before a noun).
func acrossEdge(v analysis.Verdict) (where, interval string) {
	m := float64(v.Margin)
	across := func(s analysis.Shift) bool {
		lo, hi := math.Exp(float64(s.Low)), math.Exp(float64(s.High))
		return !math.IsNaN(lo) && (lo < 1/m || hi > m)
	}
	if across(v.VM.Shift) {
		return "", shiftRange(v.VM.Shift)
	}
	for _, ts := range v.VMByThreads {
		if across(ts.Shift) {
			return "at " + units.Plural(ts.Threads, "thread") + " ", shiftRange(ts.Shift)
		}
	}
	return "", ""
}

// blockingCells names the cells that block a yes, as the verdict's JSON
// names them: "host fp qos=9 threads=1 (two groups)"; "; " between.
func blockingCells(v analysis.Verdict) string { return strings.Join(flagNames(v.Blocking), "; ") }
