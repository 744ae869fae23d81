package summary

import (
	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/termcolor"
)

// Style is how a verdict's answer is written: Plain as it is (files,
// pipes, reports), Colored in a terminal's colour by its outcome (yes
// green, no red, inconclusive yellow).
type Style int

// The styles.
const (
	Plain Style = iota
	Colored
)

// answerColor is each outcome's colour on a terminal.
var answerColor = map[analysis.Outcome]string{
	analysis.Subsumed:     termcolor.Green,
	analysis.NotSubsumed:  termcolor.Red,
	analysis.Inconclusive: termcolor.Yellow,
}

// answer is the outcome's word in style s.
func (s Style) answer(o analysis.Outcome) string {
	if c, ok := answerColor[o]; ok && s == Colored {
		return termcolor.Paint(c, string(o))
	}
	return string(o)
}

// Answer is the outcome's word in style s: a table's verdict column.
func (s Style) Answer(o analysis.Outcome) string { return s.answer(o) }

// VerdictText is a verdict's line as plain text, named by its workload:
// "fp: QoS subsumed in VM: yes (...)". The HTML report escapes it.
func VerdictText(v analysis.Verdict) string { return Plain.TerminalVerdict(v) }

// TerminalVerdict is a verdict's line on a terminal in style s, named by
// its workload: "fp: QoS subsumed in VM: yes (...)".
func (s Style) TerminalVerdict(v analysis.Verdict) string {
	l := render.LineOf(v)
	return render.SensitivityName(v.Host) + ": " + l.Head + s.answer(l.Answer) + l.Rest
}
