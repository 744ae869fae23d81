package summary

import (
	"fmt"
	"io"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/units"
)

// AllColumns says, under a table a terminal narrowed, where every column
// is.
const AllColumns = "qoslab results show --format md shows every column."

// answerTone is each outcome's tone: what colours it on a terminal.
var answerTone = map[analysis.Outcome]render.Tone{
	analysis.Subsumed:     render.Yes,
	analysis.NotSubsumed:  render.No,
	analysis.Inconclusive: render.Inconclusive,
}

// AnswerTone is outcome o's tone (render.Plain for none).
func AnswerTone(o analysis.Outcome) render.Tone { return answerTone[o] }

// View is the run's summary as a document, for a terminal (render.Text)
// and for summary.md (render.Markdown, WriteMarkdown) alike: the answer
// first, each verdict with its next step, the mechanism and its warnings;
// then the findings, the other warnings and a table per workload (and
// phase), the columns that matter first; then how to read them (the
// tables' legend and the verdict's rule) and the telemetry.
func View(a Summary) render.Document {
	var d render.Document
	title := "qoslab results"
	if a.Name != "" {
		title += ": " + a.Name
	}
	d.Add(&render.Heading{Level: 1, Text: title})
	if a.Partial != "" {
		d.Add(render.Para(render.Span{Text: a.Partial + ".", Tone: render.Warning, Strong: true}))
	}
	per, rest := Warnings(a)
	if len(a.Verdicts) > 0 {
		d.Add(&render.Heading{Level: 2, Text: "Verdict"}, &render.List{Items: a.VerdictItems(per)})
	}
	if len(a.Findings) > 0 {
		d.Add(&render.Heading{Level: 2, Text: "Findings"}, FindingsList(a.Findings))
	}
	if len(rest) > 0 {
		d.Add(&render.Heading{Level: 2, Text: "Warnings"}, &render.List{Items: WarningItems(rest)})
	}
	if len(a.Cells) == 0 {
		d.Add(render.Para(render.Words("No cell finished.")))
	}
	for _, t := range Tables(a) {
		d.Add(TableBlocks(t, 2)...)
	}
	d.Add(a.readingFold())
	if len(a.Telemetry) > 0 {
		d.Add(&render.Fold{Title: "Telemetry", Blocks: TelemetryBlocks(a.Telemetry)})
	}
	return d
}

// WriteMarkdown writes summary.md: the run's document (View) as Markdown,
// the same blocks a terminal shows.
func WriteMarkdown(w io.Writer, a Summary) error { return render.Markdown(w, View(a)) }

// VerdictItems are the verdicts as list items, each answer in its tone;
// under each its next step, mechanism, the host's other work and its
// warnings (per, Warnings' first).
func (a Summary) VerdictItems(per [][]string) []render.Item {
	var items []render.Item
	for i, v := range a.Verdicts {
		l := render.LineOf(v)
		it := render.Item{Spans: []render.Span{render.Words(render.SensitivityName(v.Host) + ": " + l.Head), render.Toned(string(l.Answer), answerTone[l.Answer]), render.Words(l.Rest)}}
		if cmd, more := a.Again.NextParts(v.Next); cmd != "" {
			it.Sub = append(it.Sub, render.Item{Spans: []render.Span{label("next:"), {Text: cmd, Code: true}, render.Words(more)}})
		}
		if m := render.MechanismLine(v); m != "" {
			it.Sub = append(it.Sub, render.Item{Spans: []render.Span{label("mechanism:"), render.Words(m)}})
		}
		if o := render.OtherWorkLine(v); o != "" {
			it.Sub = append(it.Sub, render.Item{Spans: []render.Span{label("host:"), render.Words(o)}})
		}
		if i < len(per) {
			it.Sub = append(it.Sub, WarningItems(per[i])...)
		}
		items = append(items, it)
	}
	return items
}

// label is a list item's label ("next:"), emphasized in Markdown, and the
// space after it.
func label(text string) render.Span { return render.Span{Text: text + " ", Strong: true} }

// WarningItems are warnings as list items, each one's words in the
// warning's tone.
func WarningItems(texts []string) []render.Item {
	var items []render.Item
	for _, t := range texts {
		items = append(items, warningItem(t))
	}
	return items
}

// warningItem is a warning's list item, its words in the warning's tone.
func warningItem(text string) render.Item {
	return render.Item{Spans: []render.Span{{Text: "warning: ", Tone: render.Warning, Strong: true}, render.Toned(text, render.Warning)}}
}

// FindingsList is the findings, one item each.
func FindingsList(findings []analysis.Finding) *render.List {
	var lines []string
	for _, f := range findings {
		lines = append(lines, render.Finding(f))
	}
	return plainList(lines)
}

// TableBlocks are a workload's table under a heading of the given level:
// its title, its units, the table (on a terminal under its short headings,
// the spread and CPU columns giving way first where it is narrow; in a
// file under its headings with units), its marks, the reasons behind its
// "QoS applied" words and its regressions.
func TableBlocks(t Table, level int) []render.Block {
	tb := &render.Table{More: AllColumns}
	for i, h := range t.Short {
		tb.Columns = append(tb.Columns, render.Column{Head: h, Long: t.Header[i], Right: t.RightAlign[i], Drop: t.Drop[i]})
	}
	tb.Columns[1].Wrap = true              // "33 user-interactive"
	tb.Columns[len(t.Short)-1].Wrap = true // "user-interactive (partial)"
	for _, r := range t.Rows {
		tb.Rows = append(tb.Rows, render.TextCells(r...))
	}
	out := []render.Block{&render.Heading{Level: level, Text: t.Title}, render.Para(render.Words(t.Units)), tb}
	for _, m := range t.Marks {
		out = append(out, render.Para(render.Words(m)))
	}
	if len(t.QoSNotes) > 0 {
		out = append(out, render.Para(render.Words(QoSNotesIntro)), plainList(t.QoSNotes))
	}
	if len(t.Regressions) > 0 {
		out = append(out, render.Para(render.Words(fmt.Sprintf("Total rate R (%s) on threads T, one point per repeat:", t.RateUnit))), plainList(t.Regressions))
	}
	return out
}

func plainList(lines []string) *render.List {
	l := &render.List{}
	for _, s := range lines {
		l.Items = append(l.Items, render.Item{Spans: []render.Span{render.Words(s)}})
	}
	return l
}

// readingFold is how to read the tables and the verdict: summary.md's
// opening paragraph and the verdict's rule.
func (a Summary) readingFold() *render.Fold {
	f := &render.Fold{Title: "How to read this"}
	intro := tablesIntro()
	if a.Schema != "" {
		intro += " Result schema " + a.Schema + "."
	}
	f.Blocks = append(f.Blocks, render.Para(render.Words(intro)))
	if len(a.Verdicts) > 0 {
		f.Blocks = append(f.Blocks, render.Para(render.Words(render.VerdictRule(a.Margins))))
	}
	return f
}

// TelemetryBlocks are the telemetry: what it is, one item per target and
// view, then each distinct note once (the per-run detail is in
// summary.json and the HTML report).
func TelemetryBlocks(ss []telemetry.CellSummary) []render.Block {
	views, notes := telemetryViews(ss)
	out := []render.Block{render.Para(render.Words(TelemetryIntro))}
	var lines []string
	for _, v := range views {
		lines = append(lines, fmt.Sprintf("%s, %s view (%s): %s, %s; cores: %s; power: %s; threads followed: %s", v.Target, v.View, v.Sampler,
			units.Plural(v.Runs, "cell run"), units.Plural(v.Samples, "sample"), v.Types, v.Power, v.Threads))
	}
	out = append(out, plainList(lines))
	if len(notes) > 0 {
		out = append(out, render.Para(render.Words("Notes:")), plainList(notes))
	}
	return out
}

// TelemetryIntro says what the telemetry's lines are.
const TelemetryIntro = "Per target and view, over every sample of every cell run: mean busy share and frequency per core type, power, " +
	"and the threads followed (the workload's threads; in the host's view of a VM cell, its vCPU threads). " +
	"Each cell run's own figures are in summary.json and report.html."
