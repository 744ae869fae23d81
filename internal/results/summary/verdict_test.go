package summary

import (
	"path/filepath"
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
		assert.Equal(t, "- "+mdText("compress (verify)")+": "+mdText(render.VerdictText(v)), Plain.MarkdownVerdict(v))
		painted := "QoS subsumed in VM: " + termcolor.Paint(c.color, string(c.outcome)) + ": a "
		rest := " has no two QoS classes run on both host and vm"
		assert.Equal(t, "compress (verify): "+painted+"| b, not QoS subsumed in VM: yes"+rest, Colored.TerminalVerdict(v))
		assert.Equal(t, "- compress (verify): "+painted+`\| b, not QoS subsumed in VM: yes`+rest, Colored.MarkdownVerdict(v))
	}
}

// A summary.md as written is shown as it is, but for its verdict items'
// answers on a terminal: those of the run's verdicts, whole words only.
func TestWrittenColoursItsVerdictItems(t *testing.T) {
	v := verdictOf(analysis.NotSubsumed, analysis.Reason{Kind: analysis.ReasonVMKeeps, High: 33, Low: 9, Shift: analysis.Shift{Estimate: 1}})
	md := "# qoslab results\n\n## Verdict\n\n" + Plain.MarkdownVerdict(v) + "\n" +
		"- fp: QoS subsumed in VM: yes (no verdict of this run)\n" +
		"- compress (verify): QoS subsumed in VM: nothing\n" +
		"  - **warning:** x\n"
	assert.Equal(t, md, Plain.Written(md, Summary{Verdicts: []analysis.Verdict{v}}), "plain: as written")
	assert.Equal(t, md, Colored.Written(md, Summary{}), "no verdicts, no warnings: as written")
	want := "# qoslab results\n\n## Verdict\n\n" + Colored.MarkdownVerdict(v) + "\n" +
		"- fp: QoS subsumed in VM: yes (no verdict of this run)\n" +
		"- compress (verify): QoS subsumed in VM: nothing\n" +
		"  - **warning:** x\n"
	assert.Equal(t, want, Colored.Written(md, Summary{Verdicts: []analysis.Verdict{v}}), "a warning that is not the run's is not coloured: none is found by its words")
	// The file's answer, not the run's, is coloured (a file written before
	// its samples last changed).
	yes := verdictOf(analysis.Subsumed, analysis.Reason{})
	assert.Equal(t, "- compress (verify): QoS subsumed in VM: "+termcolor.Paint(termcolor.Red, "no")+": x\n",
		Colored.Written("- compress (verify): QoS subsumed in VM: no: x\n", Summary{Verdicts: []analysis.Verdict{yes}}))
}

// A summary.md shown on a terminal is coloured as the summary written on
// it in colour: from the run's verdicts and warnings, the values, so each
// warning the file holds is yellow and nothing else is. Every results
// directory under testdata, those with warnings among them.
func TestWrittenIsColouredAsWrittenInColour(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "results", "*", "run.json"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "results", "constructed", "*", "run.json"))
	require.NoError(t, err)
	warned := 0
	for _, f := range append(dirs, more...) {
		l, err := results.Load(filepath.Dir(f))
		if err != nil {
			continue // a damaged run (cpu-past-interval): refused, with nothing to show
		}
		a := Of(l)
		var plain, colored strings.Builder
		require.NoError(t, Plain.WriteMarkdown(&plain, a))
		require.NoError(t, Colored.WriteMarkdown(&colored, a))
		assert.Equal(t, colored.String(), Colored.Written(plain.String(), a), f)
		if strings.Contains(colored.String(), termcolor.Yellow+"- **warning:**") || strings.Contains(colored.String(), termcolor.Yellow+"  - **warning:**") {
			warned++
		}
	}
	assert.NotZero(t, warned, "some run under testdata has a warning")
}
