package summary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
)

func viewText(t *testing.T, a Summary, width int) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, render.Text(&b, View(a), width, false))
	return b.String()
}

// The terminal's view leads with the answer: each verdict, its next step
// right under it, before the tables; how to read them comes last.
func TestViewAnswerFirst(t *testing.T) {
	l, err := results.Load(filepath.Join("..", "..", "..", "testdata", "results", "compare-a"))
	require.NoError(t, err)
	a := Of(l)
	require.NotEmpty(t, a.Verdicts)
	out := viewText(t, a, 100)
	verdict := strings.Index(out, "\nVerdict\n")
	next := strings.Index(out, "  - next: `qoslab run --again ")
	table := strings.Index(out, "\nfp\n--\n")
	rule := strings.Index(out, "SI = 1 - ln(vm ratio)")
	assert.True(t, verdict >= 0 && verdict < next && next < table && table < rule, "verdict %d, next %d, table %d, rule %d", verdict, next, table, rule)
	assert.Less(t, next, strings.Index(out, "  - mechanism: "), "the next step first under its verdict")
	assert.Contains(t, out, "- fp: QoS subsumed in VM: inconclusive: ")
	assert.NotContains(t, out, "**", "no Markdown on a terminal")
	assert.NotContains(t, out, "| host |")
}

// At 100 columns a workload's table keeps the median, its interval,
// max/min and the class applied, leaves out the spread and CPU columns
// and says so; wide enough, it keeps every column.
func TestViewTableGivesWay(t *testing.T) {
	a := Analyze(runSamples(), "host", "vm")
	narrow := viewText(t, a, 100)
	for _, l := range strings.Split(narrow, "\n") {
		assert.LessOrEqual(t, render.Width(l), 100, "%q", l)
	}
	head := lineWith(narrow, "target  ")
	for _, col := range []string{"median", "95% CI", "max/min", "QoS"} {
		assert.Contains(t, head, col)
	}
	assert.NotContains(t, head, "per-thread")
	assert.Contains(t, strings.Join(strings.Fields(narrow), " "), "Left out to fit 100 columns: min, max, ")
	assert.Contains(t, strings.Join(strings.Fields(narrow), " "), AllColumns)

	wide := viewText(t, a, 400)
	head = lineWith(wide, "target  ")
	for _, col := range []string{"min", "max", "per-thread", "CPU share", "speed", "time (s)", "QoS applied"} {
		assert.Contains(t, head, col)
	}
	assert.NotContains(t, wide, "Left out")
}

func lineWith(s, part string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, part) {
			return l
		}
	}
	return ""
}

// A verdict's answer and a warning carry their tones in the document, set
// from the verdict's outcome and the warning's being one.
func TestViewTones(t *testing.T) {
	v := verdictOf(analysis.NotSubsumed, analysis.Reason{Kind: analysis.ReasonNoTwoClasses, Workload: "yes, it reads like one", Host: "host", VM: "vm"})
	a := Summary{Verdicts: []analysis.Verdict{v}}
	d := View(a)
	var items []render.Item
	for _, b := range d.Blocks {
		if l, ok := b.(*render.List); ok {
			items = append(items, l.Items...)
		}
	}
	require.NotEmpty(t, items)
	var tones []render.Tone
	for _, s := range items[0].Spans {
		tones = append(tones, s.Tone)
	}
	assert.Equal(t, []render.Tone{render.Plain, render.No, render.Plain}, tones)
	assert.Equal(t, render.Warning, warningItem("x").Spans[1].Tone)
}

// WriteCSV writes what summary.csv holds.
func TestWriteCSVIsTheFile(t *testing.T) {
	dir := t.TempDir()
	a := Analyze(runSamples(), "host", "vm")
	require.NoError(t, Write(dir, a))
	want, err := os.ReadFile(filepath.Join(dir, results.SummaryCSVFile))
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, WriteCSV(&b, a))
	assert.Equal(t, string(want), b.String())
}
