package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/plot"
	"github.com/qoslab/qoslab/internal/results"
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
	// Platforms say, per run, what machines its numbers come from
	// (Report.Platform), so a Linux run is never read as a Mac's.
	Platforms []string
}

// NewComparison draws the charts of c, whose runs are loaded.
func NewComparison(c *compare.Comparison, loaded []*results.Loaded) *Comparison {
	r := &Comparison{Comparison: c}
	r.Charts, r.Skipped = plot.CompareCharts(c)
	for i, l := range loaded {
		r.Platforms = append(r.Platforms, c.Columns[i].Heading()+": "+(&Report{Run: l.Run}).Platform())
	}
	return r
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
// charts inline, no script and no external URL.
func (r *Comparison) WriteHTML(w io.Writer) error {
	charts, err := htmlCharts(r.Charts)
	if err != nil {
		return err
	}
	diffHead, diffRows := r.DifferenceTable()
	data := struct {
		*Comparison
		HTMLCharts []htmlChart
		Machines   compare.Section
		Sections   []compare.Section
		DiffHead   []string
		DiffRows   [][]string
	}{r, charts, r.MachineSection(), r.Sections(), diffHead, diffRows}
	var buf bytes.Buffer
	if err := compareTemplate.Execute(&buf, data); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

var compareTemplate = page("compare", `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>qoslab comparison: {{len .Columns}} runs</title>
{{template "style"}}
</head>
<body>
<h1>qoslab comparison: {{len .Columns}} runs</h1>
{{with .Missing}}<p class="platform">Not every run meant to be compared is here: {{range $i, $m := .}}{{if $i}}; {{end}}{{$m.Label}} did not come back ({{$m.Reason}}){{end}}.</p>{{end}}
{{with .Machines}}<h2>Verdict per machine</h2>
<p>{{.About}}.</p>
{{with .Lead}}<p>{{.}}</p>{{end}}
{{template "compare-section" .}}{{end}}
<h2>Runs</h2>
<p>The first run is the baseline every change is measured against.</p>
<ul>{{range .Legend}}<li>{{.}}</li>{{end}}</ul>
<ul class="platform">{{range .Platforms}}<li>{{.}}</li>{{end}}</ul>
<p{{if .Differences}} class="platform"{{end}}>{{.DifferenceText}}</p>
{{if .Differences}}<table>
<tr>{{range .DiffHead}}<th>{{.}}</th>{{end}}</tr>
{{range .DiffRows}}<tr>{{range $i, $c := .}}{{if $i}}<td>{{$c}}</td>{{else}}<th>{{$c}}</th>{{end}}{{end}}</tr>
{{end}}</table>{{end}}

<h2>Charts</h2>
{{template "charts" .}}

<h2>Table</h2>
{{range .Sections}}<h3>{{.Title}}</h3>
{{template "compare-section" .}}
{{else}}<p>No cell to compare.</p>
{{end}}
<ul class="notes">{{range .Footer}}<li>{{.}}</li>{{end}}</ul>
</body>
</html>
{{define "compare-section"}}<table>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if index $.Numeric $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>{{with .Notes}}
<ul class="notes">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}{{end}}`)
