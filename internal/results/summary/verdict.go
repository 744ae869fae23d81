package summary

import (
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
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

// VerdictText is a verdict's line as plain text, named by its workload:
// "fp: QoS subsumed in VM: yes (...)". The HTML report escapes it.
func VerdictText(v analysis.Verdict) string { return Plain.TerminalVerdict(v) }

// TerminalVerdict is a verdict's line on a terminal in style s, named by
// its workload: "fp: QoS subsumed in VM: yes (...)".
func (s Style) TerminalVerdict(v analysis.Verdict) string {
	l := v.Line()
	return v.Host.Name() + ": " + l.Head + s.answer(l.Answer) + l.Rest
}

// MarkdownVerdict is a verdict's list item in Markdown (without its
// newline) in style s: "- fp: QoS subsumed in VM: yes (...)".
func (s Style) MarkdownVerdict(v analysis.Verdict) string {
	l := v.Line()
	return "- " + mdText(v.Host.Name()+": "+l.Head) + s.answer(l.Answer) + mdText(l.Rest)
}

// Written is a summary.md as a run wrote it, for showing in style s:
// Plain gives it as it is; Colored colours the answer of each of its
// verdict items, found by the item's opening as MarkdownVerdict writes it
// for one of the run's verdicts (its workload and VM), and coloured by the
// outcome the file names there (a file written before the samples last
// changed may name another).
func (s Style) Written(md string, verdicts []analysis.Verdict) string {
	if s != Colored || len(verdicts) == 0 {
		return md
	}
	lines := strings.SplitAfter(md, "\n")
	for i, line := range lines {
		for _, v := range verdicts {
			open := "- " + mdText(v.Host.Name()+": "+v.Line().Head)
			rest, ok := strings.CutPrefix(line, open)
			if !ok {
				continue
			}
			for o := range answerColor {
				if after, ok := strings.CutPrefix(rest, string(o)); ok && !startsWithWordChar(after) {
					lines[i] = open + s.answer(o) + after
					break
				}
			}
			break
		}
	}
	return strings.Join(lines, "")
}

// startsWithWordChar says whether s goes on with a letter, digit or
// underscore, so that a word before it is not whole.
func startsWithWordChar(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
