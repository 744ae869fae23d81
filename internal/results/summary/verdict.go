package summary

import (
	"strings"

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

// MarkdownVerdict is a verdict's list item in Markdown (without its
// newline) in style s: "- fp: QoS subsumed in VM: yes (...)".
func (s Style) MarkdownVerdict(v analysis.Verdict) string {
	l := render.LineOf(v)
	return "- " + mdText(render.SensitivityName(v.Host)+": "+l.Head) + s.answer(l.Answer) + mdText(l.Rest)
}

// warning is a warning's line in style s: Colored yellow, as a terminal
// colours every warning it is given (termcolor.Warn).
func (s Style) warning(line string) string {
	if s == Colored {
		return termcolor.Paint(termcolor.Yellow, line)
	}
	return line
}

// markdownWarning is a warning's list item in summary.md, after lead ("- ",
// or "  - " under its verdict), without its newline.
func markdownWarning(lead, text string) string { return lead + "**warning:** " + mdText(text) }

// Written is a summary.md as a run wrote it, for showing in style s:
// Plain gives it as it is; Colored colours what it holds of summary a,
// found as this package writes it: the answer of each of its verdict
// items, by the item's opening as MarkdownVerdict writes it for one of the
// run's verdicts (its workload and VM), coloured by the outcome the file
// names there (a file written before the samples last changed may name
// another); and each of its warnings, an item as WriteMarkdown writes it
// for one of a's (Warnings).
func (s Style) Written(md string, a Summary) string {
	if s != Colored {
		return md
	}
	warned := map[string]bool{}
	per, rest := Warnings(a)
	for _, ws := range append(per, rest) {
		for _, w := range ws {
			warned[markdownWarning("  - ", w)+"\n"], warned[markdownWarning("- ", w)+"\n"] = true, true
		}
	}
	lines := strings.SplitAfter(md, "\n")
	for i, line := range lines {
		if warned[line] {
			lines[i] = s.warning(strings.TrimSuffix(line, "\n")) + "\n"
			continue
		}
		lines[i] = s.writtenVerdict(line, a.Verdicts)
	}
	return strings.Join(lines, "")
}

// writtenVerdict is line with its answer in style s when it is the item
// of one of verdicts.
func (s Style) writtenVerdict(line string, verdicts []analysis.Verdict) string {
	for _, v := range verdicts {
		open := "- " + mdText(render.SensitivityName(v.Host)+": "+render.LineOf(v).Head)
		rest, ok := strings.CutPrefix(line, open)
		if !ok {
			continue
		}
		for o := range answerColor {
			if after, ok := strings.CutPrefix(rest, string(o)); ok && !startsWithWordChar(after) {
				return open + s.answer(o) + after
			}
		}
		return line
	}
	return line
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
