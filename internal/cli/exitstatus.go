package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
)

// exitStatusHelp is --exit-status's help, the same on run and results show.
const exitStatusHelp = "exit 0 when every verdict is yes, 3 when any is no, 4 when any is inconclusive and none is no (or there is no verdict, or the run did not finish); for CI"

// exitStatusDoc is the exit statuses as the help of run and results show
// gives them.
const exitStatusDoc = `Exit status: 0 done, 1 a failure, 2 a usage error, 130 (143) interrupted by
Ctrl-C (SIGTERM). With --exit-status, a run that ended fine exits by its
verdicts: 0 when every verdict is yes, 3 when any is no, 4 when any is
inconclusive and none is no; also 4 when the run has no verdict (a spec at
one class, or on one target) or did not finish every cell.`

// verdictStatus is what --exit-status makes of a run's verdicts: nil when
// every one is yes, else an *exitError (exitNo when any is no, else
// exitInconclusive) naming them. A run that did not finish (unfinished says
// how far it got) gives no yes: part of the cells cannot stand for all.
func verdictStatus(verdicts []analysis.Verdict, unfinished string) error {
	if len(verdicts) == 0 {
		return &exitError{Code: exitInconclusive, Reason: "the run has no verdict (it needs a workload at two or more classes on both host and vm), so nothing says QoS is subsumed"}
	}
	var no, inconclusive, parts []string
	for _, v := range verdicts {
		name := render.SensitivityName(v.Host)
		switch v.Outcome {
		case analysis.NotSubsumed:
			no = append(no, name)
		case analysis.Subsumed:
		default:
			inconclusive = append(inconclusive, name)
		}
		parts = append(parts, name+" "+string(v.Outcome))
	}
	switch {
	case len(no) > 0:
		return &exitError{Code: exitNo, Reason: fmt.Sprintf("QoS is not subsumed for %s (%s)", strings.Join(no, ", "), strings.Join(parts, ", "))}
	case len(inconclusive) > 0:
		return &exitError{Code: exitInconclusive, Reason: fmt.Sprintf("inconclusive for %s (%s)", strings.Join(inconclusive, ", "), strings.Join(parts, ", "))}
	case unfinished != "":
		return &exitError{Code: exitInconclusive, Reason: fmt.Sprintf("every verdict is yes (%s), but the run did not finish: %s", strings.Join(parts, ", "), unfinished)}
	}
	return nil
}

// failOn is compare --fail-on: how large a significant change may be
// before compare exits exitNo, as a ratio bound (1.1 for 10%).
type failOn struct {
	// Bound is the largest ratio allowed either way: a change fails when
	// its ratio r has max(r, 1/r) > Bound.
	Bound float64
	// Text is the limit as given, for messages.
	Text string
}

// parseFailOn reads --fail-on: a percentage ("10", "10%") or a ratio
// ("2x", the same as 100%).
func parseFailOn(name, s string) (failOn, error) {
	t := strings.TrimSpace(s)
	bad := func() (failOn, error) {
		return failOn{}, usageErrorf("%s %q: want a percentage such as 10 or 10%% (a change larger than that either way fails), or a ratio such as 2x", name, s)
	}
	if r, ok := strings.CutSuffix(t, "x"); ok {
		v, err := strconv.ParseFloat(r, 64)
		if err != nil || !(v > 1) || math.IsInf(v, 0) {
			return bad()
		}
		return failOn{Bound: v, Text: strconv.FormatFloat(v, 'g', -1, 64) + "x"}, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return bad()
	}
	return failOn{Bound: 1 + v/100, Text: strconv.FormatFloat(v, 'g', -1, 64) + "%"}, nil
}

// exceeds reports whether a ratio r is beyond the bound either way: a
// decrease counts by its ratio form (-50% is 2x), since a decrease in
// percent never passes 100.
func (f failOn) exceeds(r float64) bool {
	if math.IsNaN(r) || r <= 0 {
		return false
	}
	return math.Max(r, 1/r) > f.Bound
}

// check returns an *exitError (exitNo) naming the significant changes
// against the baseline beyond the bound: every cell's, and every QoS
// sensitivity's (a subsumption index's change is a difference, with no
// ratio, and a geometric mean's has no test). A cell's change behind which
// stand cell runs other work on the host took CPU from (compare's
// DeltaInterference) counts only when it is still significant and beyond
// the bound without them: other work explains the rest.
func (f failOn) check(c *compare.Comparison) error {
	var hits []string
	for _, r := range c.Rows {
		for i, v := range r.Values {
			if i == 0 {
				continue
			}
			if _, ok := v.Delta.Counts(f.exceeds); !ok {
				continue
			}
			cell := fmt.Sprintf("%s %s qos=%s threads=%d", r.Target, render.WorkloadText(r.Workload, r.Phase), qos.Class(r.QoS), r.Threads)
			hit := fmt.Sprintf("%s in %s: %s (%s)", cell, c.Columns[i].Label, compare.ChangeText(v.Delta.Ratio), render.FormatP(v.Delta.P))
			if d := v.Delta.Interference; d != nil {
				hit += fmt.Sprintf(", and %s (%s) without the %d of %d cell runs other work took CPU from", compare.ChangeText(d.Without.Ratio), render.FormatP(d.Without.P), d.Runs, d.Of)
			}
			hits = append(hits, hit)
		}
	}
	for _, r := range c.Findings {
		if r.Kind != compare.KindSensitivity {
			continue
		}
		for i, v := range r.Values {
			if i == 0 || v.Delta == nil || !v.Delta.Significant || !f.exceeds(float64(v.Delta.Ratio)) {
				continue
			}
			hits = append(hits, fmt.Sprintf("QoS sensitivity %s %s %d/%d in %s: %s (their intervals do not overlap)", r.Target, render.WorkloadText(r.Workload, r.Phase), r.High, r.Low, c.Columns[i].Label, compare.ChangeText(v.Delta.Ratio)))
		}
	}
	if len(hits) == 0 {
		return nil
	}
	const shown = 5
	more := ""
	if len(hits) > shown {
		more = fmt.Sprintf("; and %d more", len(hits)-shown)
		hits = hits[:shown]
	}
	return &exitError{Code: exitNo, Reason: fmt.Sprintf("significant changes against the baseline beyond --fail-on %s: %s%s", f.Text, strings.Join(hits, "; "), more)}
}
