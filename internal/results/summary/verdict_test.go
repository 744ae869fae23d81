package summary

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/termcolor"
)

// verdictOf is a verdict on compress's verify phase with the outcome and
// reason given; its reason may read like another verdict's answer.
func verdictOf(o analysis.Outcome, reason analysis.Reason) analysis.Verdict {
	return analysis.Verdict{Outcome: o, Reason: reason,
		Host: analysis.Sensitivity{Target: "host", Workload: "compress", Phase: "verify", High: 33, Low: 9},
		VM:   analysis.Sensitivity{Target: "vm", Workload: "compress", Phase: "verify", High: 33, Low: 9}}
}

// Every format writes the verdict's line; only the terminal's Colored
// style colours the answer, by the outcome, whatever the text around it
// says (a reason that reads "QoS subsumed in VM: yes" stays uncoloured).
func TestVerdictFormatsColourTheOutcomeNotTheText(t *testing.T) {
	for _, c := range []struct {
		outcome analysis.Outcome
		color   string
	}{{analysis.Subsumed, termcolor.Green}, {analysis.NotSubsumed, termcolor.Red}, {analysis.Inconclusive, termcolor.Yellow}} {
		// A workload named so that the reason's words read "a | b, not QoS subsumed in VM: yes ...".
		v := verdictOf(c.outcome, analysis.Reason{Kind: analysis.ReasonNoTwoClasses, Workload: "a | b, not QoS subsumed in VM: yes", Host: "host", VM: "vm"})
		line := "compress (verify): " + render.VerdictText(v)
		assert.Equal(t, line, VerdictText(v))
		assert.Equal(t, line, Plain.TerminalVerdict(v))
		painted := "QoS subsumed in VM: " + termcolor.Paint(c.color, string(c.outcome)) + ": a "
		rest := " has no two QoS classes run on both host and vm"
		assert.Equal(t, "compress (verify): "+painted+"| b, not QoS subsumed in VM: yes"+rest, Colored.TerminalVerdict(v))
		var md strings.Builder
		require.NoError(t, WriteMarkdown(&md, Summary{Verdicts: []analysis.Verdict{v}}))
		assert.Contains(t, md.String(), "- compress (verify): QoS subsumed in VM: "+string(c.outcome)+`: a \| b, not QoS subsumed in VM: yes`+rest+"\n", "Markdown is never coloured")
	}
}

// summary.md and the terminal's view are one document (View) in two
// encoders: on every results directory under testdata they have the same
// headings, in the same order, and the same verdict lines; neither holds
// the other's markup, and Markdown holds no colour.
func TestMarkdownAndTerminalAreOneDocument(t *testing.T) {
	verdicts := 0
	for _, f := range testdataDirs(t) {
		l, err := results.Load(f)
		if err != nil {
			continue // a damaged run (cpu-past-interval): refused, with nothing to show
		}
		a := Of(l)
		var md, term strings.Builder
		require.NoError(t, WriteMarkdown(&md, a))
		require.NoError(t, render.Text(&term, View(a), 1000, false))
		heads, folds := markdownHeadings(md.String())
		assert.Equal(t, heads, textHeadings(term.String()), f)
		for _, title := range folds {
			assert.Contains(t, term.String(), "\n"+title+"\n", f)
		}
		assert.NotContains(t, md.String(), "\x1b[", "%s: Markdown is never coloured", f)
		plain := term.String()
		for _, v := range a.Verdicts {
			line := VerdictText(v)
			assert.Contains(t, md.String(), "\n- "+render.Escape(line)+"\n", f)
			assert.Contains(t, plain, "\n- "+line+"\n", f)
			verdicts++
		}
	}
	assert.NotZero(t, verdicts, "some run under testdata has a verdict")
}

// markdownHeadings are the headings of a Markdown document, unescaped,
// and the titles of its folds, in order.
func markdownHeadings(md string) (heads, folds []string) {
	for _, l := range strings.Split(md, "\n") {
		if h := strings.TrimLeft(l, "#"); h != l && strings.HasPrefix(h, " ") {
			heads = append(heads, strings.ReplaceAll(strings.TrimSpace(h), `\`, ""))
		}
		if t, ok := strings.CutPrefix(l, "<summary>"); ok {
			folds = append(folds, strings.TrimSuffix(t, "</summary>"))
		}
	}
	return heads, folds
}

// textHeadings are the headings of render.Text's output: each line
// underlined with "=" or "-".
func textHeadings(text string) []string {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 1; i < len(lines); i++ {
		u := strings.Trim(lines[i], "=-")
		if lines[i] != "" && u == "" && lines[i-1] != "" {
			out = append(out, lines[i-1])
		}
	}
	return out
}
