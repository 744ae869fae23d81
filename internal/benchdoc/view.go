package benchdoc

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/report"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/units"
)

// TextWidth is the width the text format fits off a terminal (a pipe, a
// file): a 100-column terminal's.
const TextWidth = 100

// Terminal is how the text format is shown: the columns it fits (0 for
// TextWidth) and whether it is coloured from its tones.
type Terminal struct {
	Width  int
	Colour bool
}

// WriteBench writes b in format, one of render.Formats or render.FormatAliases: the view
// (View) as text fitted to term or as Markdown, the JSON, or the tidy CSV
// of its samples (SampleTable).
func WriteBench(w io.Writer, format string, b *Bench, term Terminal) error {
	switch render.FormatOf(format) {
	case render.FormatJSON:
		return writeJSON(w, b)
	case render.FormatCSV:
		return render.CSV(w, SampleTable(b.Samples))
	case render.FormatMarkdown:
		return render.Markdown(w, b.View(false))
	case render.FormatText:
		width := term.Width
		if width <= 0 {
			width = TextWidth
		}
		return render.Text(w, b.View(true), width, term.Colour)
	}
	return fmt.Errorf("unknown format %q: allowed %s (or %s)", format, strings.Join(render.Formats, ", "), strings.Join(slices.Sorted(maps.Keys(render.FormatAliases)), ", "))
}

// writeJSON writes b as JSON with each cell's summary and the flagged
// cells' warnings.
func writeJSON(w io.Writer, r *Bench) error {
	doc := *r
	doc.Cells = analysis.SortCells(results.Cells(r.Samples))
	doc.Warnings = []string{}
	for _, c := range doc.Cells {
		if c.Flagged() {
			doc.Warnings = append(doc.Warnings, render.DispersionWarnings([]analysis.Cell{c}, c.Workload, c.Phase)...)
		}
	}
	doc.Cells = render.WithFlags(doc.Cells)
	if doc.Cells == nil {
		doc.Cells = []analysis.Cell{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&doc)
}

// SampleTable is the tidy CSV's table: a row per record (a thread's or a
// process's), its columns results.CSVHeader's, their names and values an
// interface scripts read.
func SampleTable(samples []results.Sample) *render.Table {
	t := &render.Table{}
	for _, h := range results.CSVHeader() {
		t.Columns = append(t.Columns, render.Column{Head: h})
	}
	for _, s := range samples {
		t.Rows = append(t.Rows, render.TextCells(s.CSVRow()...))
	}
	return t
}

// View is b as a document: its table of cells (Table), or "no cells
// finished", then what is to be known to read it (under). On a terminal
// the table's headings are in capitals, as a terminal's tables have them.
func (b *Bench) View(terminal bool) render.Document {
	cells := analysis.SortCells(results.Cells(b.Samples))
	var d render.Document
	t := cellTable(cells, findings(b.Runs))
	if len(t.Rows) == 0 {
		d.Add(render.Para(render.Words("no cells finished")))
	} else {
		if terminal {
			for i := range t.Columns {
				t.Columns[i].Head = strings.ToUpper(t.Columns[i].Head)
			}
		}
		d.Add(t)
	}
	if items := b.under(cells); len(items) > 0 {
		d.Add(&render.List{Items: items})
	}
	if b.Error != "" {
		// The error itself is qoslab's last word (and in the JSON): not
		// said twice.
		d.Add(render.Para(render.Words(fmt.Sprintf("incomplete: %s finished before the run stopped", units.Plural(len(b.Runs), "cell run")))))
	}
	return d
}

// Said are the texts of the warnings View says under the table: the
// session's warnings (a cell too short to mean anything) and each flagged
// cell's; where the view is shown they need not be said again.
func (b *Bench) Said() []string {
	out := slices.Clone(b.warnings)
	for _, c := range analysis.SortCells(results.Cells(b.Samples)) {
		if c.Flagged() {
			out = append(out, render.DispersionWarnings([]analysis.Cell{c}, c.Workload, c.Phase)[0])
		}
	}
	return out
}

// under are the items under bench's table: the legends of "!" and of idle
// repeats, the classes not applied and why, the runs' notes, the
// contention, the device models, and the warnings, each in its tone.
func (b *Bench) under(cells []analysis.Cell) []render.Item {
	var items []render.Item
	plain := func(s string) { items = append(items, render.Item{Spans: []render.Span{render.Words(s)}}) }
	if slices.ContainsFunc(cells, analysis.Cell.Flagged) {
		plain(summary.DispersionMark)
	}
	if slices.ContainsFunc(cells, func(c analysis.Cell) bool { return c.Idle() > 0 }) {
		plain(summary.IdleNote)
	}
	if lines := summary.QoSNotes(cells); len(lines) > 0 {
		it := render.Item{Spans: []render.Span{render.Words(summary.QoSNotesIntro)}}
		for _, l := range lines {
			it.Sub = append(it.Sub, render.Item{Spans: []render.Span{render.Words(l)}})
		}
		items = append(items, it)
	}
	runNotes := map[string]bool{}
	for _, run := range b.Runs {
		for _, n := range run.Notes {
			runNotes[n] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(runNotes)) {
		items = append(items, labelled("note:", n, render.Note))
	}
	if b.Contention != nil {
		plain(fmt.Sprintf("contention: %s ran on the host, outside the agents, throughout", b.Contention.Text()))
	}
	for _, t := range slices.Sorted(maps.Keys(b.Machines)) {
		if line := report.ModelLine(t, b.Machines[t]); line != "" {
			plain(line)
		}
	}
	// The run's warnings (a cell too short to mean anything) are said
	// here, where the numbers are read, and not as it runs.
	for _, w := range b.Said() {
		items = append(items, labelled("warning:", w, render.Warning))
	}
	return items
}

// labelled is an item of text after its label ("warning:"), both in tone,
// the label strong.
func labelled(label, text string, tone render.Tone) render.Item {
	return render.Item{Spans: []render.Span{{Text: label, Tone: tone, Strong: true}, render.Toned(" "+text, tone)}}
}
