package report

import (
	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/plot"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/units"
)

// Answer is one verdict as the report's first screen says it: in plain
// words, with the chart that pictures it, what happened to the threads,
// and the command that would decide it when it is undecided.
type Answer struct {
	Outcome analysis.Outcome
	// Workload names what was judged (Sensitivity.Name): "fp".
	Workload string
	// Headline is the answer in a few words, beside its outcome: "QoS is
	// subsumed in the VM".
	Headline string
	// Sentence says what was found on the host and in the VM, in plain
	// words, and why the answer is what it is.
	Sentence string
	// Chart is the name of the chart that pictures the verdict
	// (plot.VerdictChartName); the report shows it beside the answer.
	Chart string
	// Mechanism and OtherWork are the verdict's mechanism and host lines
	// (VerdictLine's).
	Mechanism, OtherWork string
	// NextCommand and NextRest are the next step (VerdictLine's), empty
	// when there is none.
	NextCommand, NextRest string
	// Again is the command that runs the run again, for an answer other
	// than yes that no number of repeats would decide (no next step);
	// empty otherwise, or when the run's spec was not recorded.
	Again string
	// Caveats are what the reader must weigh beside the answer
	// (Verdict.Caveats).
	Caveats []string
	// WarningsText counts the verdict's warnings, said in full below: "3
	// warnings"; empty without any.
	WarningsText string
}

// Answers are the run's verdicts as its report's first screen says them,
// in the order of VerdictLines.
func (r *Report) Answers() []Answer {
	lines := r.VerdictLines()
	out := make([]Answer, len(r.Summary.Verdicts))
	for i, v := range r.Summary.Verdicts {
		out[i] = Answer{
			Outcome:     v.Outcome,
			Workload:    render.SensitivityName(v.Host),
			Headline:    render.Headline(v),
			Sentence:    render.PlainVerdict(v),
			Chart:       plot.VerdictChartName(v),
			Mechanism:   lines[i].Mechanism,
			OtherWork:   lines[i].OtherWork,
			NextCommand: lines[i].NextCommand,
			NextRest:    lines[i].NextRest,
			Caveats:     v.Caveats,
		}
		if n := len(lines[i].Warnings); n > 0 {
			out[i].WarningsText = units.Plural(n, "warning")
		}
		if v.Outcome != analysis.Subsumed && out[i].NextCommand == "" && r.Summary.Again != nil && r.Run.Spec.Present() {
			out[i].Again = r.Summary.Again.Command()
		}
	}
	return out
}
