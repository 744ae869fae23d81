package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results/summary"
)

// The report's text is one document, built here of the run's own blocks
// (summary's: its verdicts, warnings, findings, tables and telemetry, as
// summary.md has them): report.md writes it all as Markdown (render.Markdown),
// report.html the same blocks as HTML (render.HTML) inside its page.

// verdictBlocks are the verdict in full: each verdict with its next step,
// mechanism, the host's other work and its warnings (summary.VerdictItems);
// or, without a verdict, why there is none.
func (r *Report) verdictBlocks() []render.Block {
	if len(r.Summary.Verdicts) == 0 {
		return []render.Block{render.Para(render.Words(noRunVerdict))}
	}
	per, _ := summary.Warnings(r.Summary)
	return []render.Block{&render.List{Items: r.Summary.VerdictItems(per)}}
}

// noRunVerdict says why a run has no verdict.
const noRunVerdict = "No verdict: no workload ran on both the host and the VM."

// warningBlocks are the warnings of workloads that have no verdict, none
// when there are none.
func (r *Report) warningBlocks() []render.Block {
	_, rest := summary.Warnings(r.Summary)
	if len(rest) == 0 {
		return nil
	}
	return []render.Block{&render.List{Items: summary.WarningItems(rest)}}
}

// findingBlocks are the findings under their heading, none when there are
// none.
func (r *Report) findingBlocks() []render.Block {
	if len(r.Summary.Findings) == 0 {
		return nil
	}
	return []render.Block{&render.Heading{Level: 2, Text: "Findings"}, summary.FindingsList(r.Summary.Findings)}
}

// tableBlocks are a table per workload (and phase) as summary.md has them
// (summary.TableBlocks), under a third-level heading; a table longer than
// longTable rows is folded under its title and its number of rows.
func (r *Report) tableBlocks() []render.Block {
	if len(r.Tables) == 0 {
		return []render.Block{render.Para(render.Words("No cell finished."))}
	}
	var out []render.Block
	for _, t := range r.Tables {
		blocks := summary.TableBlocks(t, 3)
		if len(t.Rows) > longTable {
			out = append(out, &render.Fold{Title: t.Title + " (" + strconv.Itoa(len(t.Rows)) + " rows)", Blocks: blocks[1:]})
			continue
		}
		out = append(out, blocks...)
	}
	return out
}

// headDocument is report.md up to its charts: the title, the run's state
// and versions, the platforms and contention, the verdict with its
// warnings and rule, and the findings.
func (r *Report) headDocument() render.Document {
	var d render.Document
	d.Add(&render.Heading{Level: 1, Text: "qoslab report: " + r.Run.Name},
		render.Para(render.Words(r.Status()+" · qoslab "+r.Run.ToolVersion+" · results schema "+r.Run.SchemaVersion+" · seed "+fmt.Sprint(r.Run.Seed))))
	if p := r.Summary.Partial; p != "" {
		d.Add(render.Para(render.Span{Text: p + ".", Tone: render.Warning, Strong: true}))
	}
	d.Add(render.Para(render.Words(r.Platform())))
	if c := r.Contention(); c != "" {
		d.Add(render.Para(render.Words(c)))
	}
	d.Add(&render.Heading{Level: 2, Text: "Verdict"})
	d.Add(r.verdictBlocks()...)
	d.Add(r.warningBlocks()...)
	if len(r.Summary.Verdicts) > 0 {
		d.Add(render.Para(render.Words(r.VerdictRule())))
	}
	d.Add(r.findingBlocks()...)
	return d
}

// restDocument is report.md after its charts: the tables, the telemetry,
// the machines, the run's notes, the notes about the data and the spec.
func (r *Report) restDocument() render.Document {
	var d render.Document
	d.Add(&render.Heading{Level: 2, Text: "Summary"})
	d.Add(r.tableBlocks()...)
	d.Add(&render.Heading{Level: 2, Text: "Telemetry"})
	if len(r.TelemetryNotes) > 0 {
		d.Add(plainList(r.TelemetryNotes))
	}
	if len(r.Summary.Telemetry) == 0 {
		d.Add(render.Para(render.Words("Telemetry was not recorded for this run.")))
	} else {
		d.Add(summary.TelemetryBlocks(r.Summary.Telemetry)...)
	}
	d.Add(&render.Heading{Level: 2, Text: "Machines"})
	for _, m := range r.Machines() {
		t := &render.Table{Columns: []render.Column{{Head: "field"}, {Head: "value"}}}
		for _, f := range m.Fields {
			t.Rows = append(t.Rows, render.TextCells(f.Key, f.Value))
		}
		d.Add(&render.Heading{Level: 3, Text: m.Target}, t)
	}
	if len(r.Run.Notes) > 0 {
		d.Add(&render.Heading{Level: 2, Text: "Run notes"}, plainList(r.Run.Notes))
	}
	if len(r.Notes) > 0 {
		d.Add(&render.Heading{Level: 2, Text: "About the data"}, plainList(r.Notes))
	}
	d.Add(&render.Heading{Level: 2, Text: "Spec"}, render.Para(render.Words(r.SpecAgain())),
		&render.Code{Lines: strings.Split(strings.TrimSuffix(r.SpecText(), "\n"), "\n"), Lang: "yaml"})
	return d
}

// plainList is lines as a list, in no tone.
func plainList(lines []string) *render.List {
	l := &render.List{}
	for _, s := range lines {
		l.Items = append(l.Items, render.Item{Spans: []render.Span{render.Words(s)}})
	}
	return l
}
