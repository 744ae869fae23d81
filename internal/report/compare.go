package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/plot"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
)

// CompareFiles are the files WriteCompare writes into its directory besides
// the charts: the report, and the table as Markdown, CSV and JSON.
const (
	compareMarkdownFile = "compare.md"
	compareCSVFile      = "compare.csv"
	compareJSONFile     = "compare.json"
)

// Comparison is the report across runs: the N-way table, its charts, and
// what machine each run measured.
type Comparison struct {
	*compare.Comparison
	Charts  []plot.Chart
	Skipped []plot.Skipped
	// SharedPlatform is what every run says of the machines its numbers
	// come from (Report.Platform's sentences that every run has), said
	// once, so a Linux run is never read as a Mac's; Platforms says, per
	// run whose machines differ, the rest, headed by the run.
	SharedPlatform string
	Platforms      []string
	// NextSteps are, per run whose own verdict has one, the command that
	// would decide it (summary.Again.NextParts), as the run's own report
	// says it: its verdict is over all its thread counts, where the
	// table's is over those every run has.
	NextSteps []NextStep
}

// NextStep is one run's next step: the command and what it asks.
type NextStep struct {
	Run, Workload, Command, Rest string
}

// NewComparison draws the charts of c, whose runs are loaded.
func NewComparison(c *compare.Comparison, loaded []*results.Loaded) *Comparison {
	r := &Comparison{Comparison: c}
	r.Charts, r.Skipped = plot.CompareCharts(c)
	per := make([][]string, len(loaded))
	for i, l := range loaded {
		per[i] = (&Report{Run: l.Run}).platformSentences()
	}
	for i, l := range loaded {
		a := summary.Of(l)
		for _, v := range a.Verdicts {
			if cmd, rest := a.Again.NextParts(v.Next); cmd != "" {
				r.NextSteps = append(r.NextSteps, NextStep{Run: c.Columns[i].Heading(), Workload: render.SensitivityName(v.Host), Command: cmd, Rest: rest})
			}
		}
	}
	shared, rest := sharedSentences(per)
	r.SharedPlatform = strings.Join(shared, " ")
	for i, own := range rest {
		if len(own) > 0 {
			r.Platforms = append(r.Platforms, c.Columns[i].Heading()+": "+strings.Join(own, " "))
		}
	}
	return r
}

// sharedSentences splits each run's sentences into those every run has,
// in the first run's order, and each run's others.
func sharedSentences(per [][]string) (shared []string, rest [][]string) {
	rest = make([][]string, len(per))
	if len(per) == 0 {
		return nil, rest
	}
	for _, s := range per[0] {
		every := true
		for _, other := range per[1:] {
			every = every && slices.Contains(other, s)
		}
		if every && !slices.Contains(shared, s) {
			shared = append(shared, s)
		}
	}
	for i, sentences := range per {
		for _, s := range sentences {
			if !slices.Contains(shared, s) {
				rest[i] = append(rest[i], s)
			}
		}
	}
	return shared, rest
}

// VerdictCount is how many runs gave each answer for one workload.
type VerdictCount struct {
	// Workload names what was judged; empty when the runs judged one
	// workload alone.
	Workload string
	Counts   []OutcomeCount
	// Runs counts the runs, those that did not come back too.
	Runs int
}

// OutcomeCount is how many runs gave one answer ("no verdict", "did not
// come back" for those without one).
type OutcomeCount struct {
	Outcome string
	N       int
	// Class is the outcome's class in the HTML, which colours it: the
	// outcome, or "none" for a run without one.
	Class string
}

// Without a verdict: a run that judged nothing, and one that did not come
// back.
const (
	noVerdict  = "no verdict"
	notBack    = "did not come back"
	countOrder = "yes no inconclusive"
)

// VerdictCounts are the answers counted per workload judged, in the order
// the table has them: yes, no, inconclusive, then the runs without one.
func (r *Comparison) VerdictCounts() []VerdictCount {
	type key struct{ workload, phase, params string }
	var keys []key
	tally := map[key]map[string]int{}
	for _, m := range r.Machines {
		k := key{m.Workload, m.Phase, m.Params}
		if tally[k] == nil {
			keys = append(keys, k)
			tally[k] = map[string]int{}
		}
		o := m.Outcome
		if o == "" {
			o = noVerdict
		}
		tally[k][o]++
	}
	out := make([]VerdictCount, 0, len(keys))
	for _, k := range keys {
		vc := VerdictCount{Runs: len(r.Columns) + len(r.Missing)}
		if len(keys) > 1 {
			vc.Workload = strings.TrimSpace(render.WorkloadText(k.workload, k.phase) + " " + k.params)
		}
		for _, o := range append(strings.Fields(countOrder), noVerdict) {
			if n := tally[k][o]; n > 0 {
				vc.Counts = append(vc.Counts, OutcomeCount{o, n, outcomeClass(o)})
			}
		}
		if n := len(r.Missing); n > 0 {
			vc.Counts = append(vc.Counts, OutcomeCount{notBack, n, outcomeClass(notBack)})
		}
		out = append(out, vc)
	}
	return out
}

// outcomeClass is an outcome's class in the HTML: the outcome when it is
// one of the answers, else "none".
func outcomeClass(o string) string {
	if slices.Contains(strings.Fields(countOrder), o) {
		return o
	}
	return "none"
}

// Write writes into dir (made if missing) the PNG charts in dir/plots,
// report.html, compare.md, compare.csv and compare.json, each replaced
// atomically, and returns the paths written.
func (r *Comparison) Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: a report is readable by others, as the files in it (0644)
		return nil, fmt.Errorf("create the report directory: %w", err)
	}
	paths, err := plot.WriteAll(filepath.Join(dir, results.PlotsDir), r.Charts, "png")
	if err != nil {
		return paths, err
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{results.ReportFile, r.WriteHTML},
		{compareMarkdownFile, func(w io.Writer) error { return compare.Write(w, "markdown", r.Comparison) }},
		{compareCSVFile, func(w io.Writer) error { return compare.WriteCSV(w, r.Comparison) }},
		{compareJSONFile, func(w io.Writer) error { return compare.Write(w, "json", r.Comparison) }},
	}
	for _, f := range files {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			return paths, fmt.Errorf("render %s: %w", f.name, err)
		}
		p := filepath.Join(dir, f.name)
		if err := atomicfile.Write(p, buf.Bytes()); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// WriteHTML writes the comparison's report.html: one file, styles and
// charts inline, no script and no external URL. It opens with the count of
// each answer and the verdict per machine, a coloured row per run, and
// the fleet charts; what every run shares is said once. Its tables and
// their words are render.HTML's of the blocks compare's own document is
// made of (compare.Comparison.MachineBlocks, RunBlocks, SectionBlocks), a
// table longer than longTable rows folded.
func (r *Comparison) WriteHTML(w io.Writer) error {
	charts, err := htmlCharts(r.Charts)
	if err != nil {
		return err
	}
	var fleet, rest []htmlChart
	for _, c := range charts {
		if strings.HasPrefix(c.Name, "compare-fleet") {
			fleet = append(fleet, c)
		} else {
			rest = append(rest, c)
		}
	}
	var tables []render.Block
	for _, s := range r.Sections() {
		if len(s.Rows) > longTable {
			tables = append(tables, &render.Fold{Title: fmt.Sprintf("%s (%d rows)", s.Name, len(s.Rows)), Blocks: compare.SectionBlocks(s)})
			continue
		}
		tables = append(tables, &render.Heading{Level: 3, Text: s.Name})
		tables = append(tables, compare.SectionBlocks(s)...)
	}
	if len(tables) == 0 {
		tables = append(tables, render.Para(render.Words("No cell to compare.")))
	}
	data := struct {
		*Comparison
		Fleet, HTMLCharts              []htmlChart
		Machines, Runs, Tables, Footer template.HTML
	}{Comparison: r, Fleet: fleet, HTMLCharts: rest,
		Machines: compareHTML(r.MachineBlocks()), Runs: compareHTML(r.RunBlocks()),
		Tables: compareHTML(tables), Footer: compareHTML([]render.Block{r.FooterList()})}
	var buf bytes.Buffer
	if err := compareTemplate.Execute(&buf, data); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// compareHTML is blocks as render.HTML writes them (escaped), for the
// page to hold as they are.
func compareHTML(blocks []render.Block) template.HTML {
	var b strings.Builder
	_ = render.HTML(&b, render.Document{Blocks: blocks}) // a strings.Builder does not fail
	return template.HTML(b.String())                     //nolint:gosec // G203: render.HTML escapes every text it writes
}

// compareStyle styles what render.HTML writes, beside the report's
// style: a table scrolls in its own box (div.table), never the page; a
// run's row in the verdict per machine is coloured by its answer (yes,
// no, inconclusive), edged in the answer's colour, its verdict's cell in
// bold; a warning's and a note's words are marked; numbers align right.
const compareStyle = `<style>
div.table { overflow-x: auto; max-width: 100%; }
.yes { --c: #00805d; --bg: #eaf6f1; }
.no { --c: #c04f00; --bg: #fcefe6; }
.inconclusive { --c: #8a6500; --bg: #fbf6e3; }
tr.yes > td, tr.no > td, tr.inconclusive > td { background: var(--bg); }
tr.yes > td:first-child, tr.no > td:first-child, tr.inconclusive > td:first-child { border-left: 6px solid var(--c); }
td.yes, td.no, td.inconclusive { font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.warning { color: #8a6500; }
.note, div.notes li { color: #444; }
</style>`

var compareTemplate = page("compare", `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>qoslab comparison: {{len .Columns}} runs</title>
{{template "style"}}
`+compareStyle+`
</head>
<body>
<h1>qoslab comparison: {{len .Columns}} runs</h1>
{{range .VerdictCounts}}<p class="count">{{with .Workload}}<strong>{{.}}:</strong> {{end}}{{range $i, $c := .Counts}}{{if $i}}, {{end}}<span class="badge {{$c.Class}}">{{$c.N}} {{$c.Outcome}}</span>{{end}} of {{.Runs}} runs</p>
{{end}}{{with .Missing}}<p class="platform">Not every run meant to be compared is here: {{range $i, $m := .}}{{if $i}}; {{end}}{{$m.Label}} did not come back ({{$m.Reason}}){{end}}.</p>{{end}}
<h2>Verdict per machine</h2>
{{.Machines}}{{with .NextSteps}}<p class="next"><strong>Next step</strong>, as each run's own report says it (over all its thread counts):</p>
<ul class="next">{{range .}}<li>{{.Run}}, {{.Workload}}: <code>{{.Command}}</code>{{.Rest}}</li>{{end}}</ul>{{end}}
{{with .SharedPlatform}}<p class="platform">Every run: {{.}}</p>{{end}}
{{with .Platforms}}<ul class="platform">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{range .Fleet}}<figure class="fleet" id="chart-{{.Name}}">
{{.SVG}}
<figcaption>{{.Title}} ({{.Name}})</figcaption>
</figure>
{{end}}
<h2>Runs</h2>
<p>The first run is the baseline every change is measured against.</p>
{{.Runs}}
<h2>Charts</h2>
{{template "charts" .}}

<h2>Table</h2>
{{.Tables}}<div class="notes">
{{.Footer}}</div>
</body>
</html>`)
