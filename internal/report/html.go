package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"

	"github.com/qoslab/qoslab/internal/plot"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results/summary"
)

// WriteHTML writes report.html: one file with its styles and charts inline,
// no script and no external URL, so it can be mailed or opened offline. It
// opens with the answer (htmlAnswers) and folds what is long below it.
func (r *Report) WriteHTML(w io.Writer) error {
	charts, err := htmlCharts(r.Charts)
	if err != nil {
		return err
	}
	answers, rest := htmlAnswers(r.Answers(), charts)
	data := struct {
		*Report
		Answers       []htmlAnswer
		HTMLCharts    []htmlChart
		TelemetryRows []summary.TelemetryRow
		// The report's document's blocks (document.go) as HTML.
		VerdictHTML, WarningsHTML, FindingsHTML, TablesHTML template.HTML
	}{r, answers, rest, summary.TelemetryRows(r.Summary.Telemetry),
		htmlOf(r.verdictBlocks()), htmlOf(r.warningBlocks()), htmlOf(r.findingBlocks()), htmlOf(r.tableBlocks())}
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, data); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// htmlOf is blocks as HTML (render.HTML, which escapes their text); ""
// for none.
func htmlOf(blocks []render.Block) template.HTML {
	var b strings.Builder
	_ = render.HTML(&b, render.Document{Blocks: blocks}) // a strings.Builder does not fail
	return template.HTML(b.String())
}

// longTable is how many rows a table may have before the report folds it.
const longTable = 12

// htmlAnswer is an Answer with the chart that pictures it, if drawn.
type htmlAnswer struct {
	Answer
	Figure *htmlChart
}

// htmlAnswers pairs each answer with its chart, and returns the charts
// left for the report's charts section.
func htmlAnswers(answers []Answer, charts []htmlChart) ([]htmlAnswer, []htmlChart) {
	out := make([]htmlAnswer, len(answers))
	used := map[string]bool{}
	for i, a := range answers {
		out[i].Answer = a
		for j := range charts {
			if charts[j].Name == a.Chart && !used[a.Chart] {
				out[i].Figure = &charts[j]
				used[a.Chart] = true
			}
		}
	}
	var rest []htmlChart
	for _, c := range charts {
		if !used[c.Name] {
			rest = append(rest, c)
		}
	}
	return out, rest
}

// htmlCharts renders charts as inline SVG for a report page.
func htmlCharts(in []plot.Chart) ([]htmlChart, error) {
	charts := make([]htmlChart, 0, len(in))
	for i, c := range in {
		svg, err := inlineSVG(c, i)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.Name, err)
		}
		charts = append(charts, htmlChart{Name: c.Name, Title: c.Title, SVG: template.HTML(svg)})
	}
	return charts, nil
}

type htmlChart struct {
	Name, Title string
	SVG         template.HTML
}

// svgPrologue is everything gonum's SVG writer puts before the <svg> element.
var (
	svgNamespace = regexp.MustCompile(`\s+xmlns(:\w+)?="[^"]*"`)
	svgID        = regexp.MustCompile(`\b(id="|url\(#|href="#)([A-Za-z_][\w.-]*)`)
	svgSize      = regexp.MustCompile(`^<svg([^>]*?)\swidth="([\d.]+)\w*"\s+height="([\d.]+)\w*"`)
)

// inlineSVG renders c as an <svg> element fit to be pasted into HTML5: no
// XML prologue, no namespace declarations (HTML5 supplies them, and a
// report must carry no URL), ids made unique per chart, and a viewBox so it
// scales to the page.
func inlineSVG(c plot.Chart, n int) (string, error) {
	var buf bytes.Buffer
	if err := c.Render(&buf, "svg"); err != nil {
		return "", err
	}
	s := buf.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("the SVG renderer wrote no <svg> element")
	}
	s = s[i:]
	s = svgNamespace.ReplaceAllString(s, "")
	s = svgID.ReplaceAllString(s, fmt.Sprintf("${1}c%d-${2}", n))
	open, _, _ := strings.Cut(s, ">")
	if m := svgSize.FindStringSubmatch(s); m != nil && !strings.Contains(open, "viewBox") {
		s = svgSize.ReplaceAllString(s, fmt.Sprintf(`<svg$1 viewBox="0 0 %s %s" role="img"`, m[2], m[3]))
	}
	return s, nil
}

// htmlParts are the pieces every report page shares: its styles, and its
// charts inline with the list of those not drawn. The styles keep the page
// within the window down to 800 px and less: wide tables scroll inside
// their own box (.wide, and render.HTML's div.table), and code breaks where
// it must; render.HTML's tones (yes, no, inconclusive, warning, note) and
// number cells (num) are coloured and aligned.
var htmlParts = template.Must(template.New("parts").Parse(`{{define "style"}}<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; max-width: 1280px; margin: 0 auto; padding: 0.4em 1em 2em; color: #111; line-height: 1.4; overflow-wrap: break-word; }
h1 { font-size: 1.45em; margin: 0.3em 0 0.1em; }
h2 { font-size: 1.25em; margin: 1.4em 0 0.4em; }
.meta { color: #444; font-size: 0.85em; margin: 0.2em 0; }
.answer { --c: #6b6b6b; --bg: #f4f4f4; border-left: 6px solid var(--c); background: var(--bg); padding: 0.3em 1em; margin: 0.5em 0; display: grid; grid-template-columns: minmax(0, 1fr); column-gap: 1.5em; }
.yes { --c: #00805d; --bg: #eaf6f1; }
.no { --c: #c04f00; --bg: #fcefe6; }
.inconclusive { --c: #8a6500; --bg: #fbf6e3; }
.answer p { margin: 0.3em 0; }
.answer figure { margin: 0.2em 0; }
.answer figure svg { max-height: 320px; }
@media (min-width: 1000px) {
  .answer { grid-template-columns: minmax(0, 5fr) minmax(0, 6fr); }
  .answer > p { grid-column: 1; }
  .answer > figure { grid-column: 2; grid-row: 1 / span 6; align-self: center; }
  .answer figure svg { max-height: none; }
}
.headline { font-size: 1.2em; }
.badge { display: inline-block; padding: 0 0.4em; border-radius: 3px; color: #fff; background: var(--c, #6b6b6b); font-weight: 600; }
.verdict { background: #f3f6fa; border-left: 4px solid #2b6cb0; padding: 0.6em 1em 0.6em 2em; }
.platform { background: #fff8e6; border-left: 4px solid #b7791f; padding: 0.4em 1em; margin: 0.4em 0; }
ul.platform { padding-left: 2em; }
.count { font-size: 1.15em; }
.wide, .table { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.num { text-align: right; }
span.yes, span.no, span.inconclusive, td.yes, td.no, td.inconclusive { color: var(--c); font-weight: 600; }
.warning { color: #8a4b00; }
.note { color: #444; }
tr.yes td, tr.no td, tr.inconclusive td { background: var(--bg); }
tr.yes td:first-child, tr.no td:first-child, tr.inconclusive td:first-child { border-left: 6px solid var(--c); }
figure { margin: 1.5em 0; }
figure svg { width: 100%; height: auto; max-width: 1200px; }
figure.fleet svg { max-width: 900px; }
figcaption { color: #444; font-size: 0.9em; }
code { overflow-wrap: anywhere; background: #eef0f2; padding: 0 0.2em; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
details { margin: 0.6em 0; }
summary { cursor: pointer; font-weight: 600; }
.notes li { color: #444; }
</style>{{end}}
{{define "charts"}}{{range .HTMLCharts}}<figure id="chart-{{.Name}}">
{{.SVG}}
<figcaption>{{.Title}} ({{.Name}})</figcaption>
</figure>
{{else}}<p>No other chart could be drawn from these data.</p>
{{end}}{{if .Skipped}}<details><summary>Not drawn, for want of data ({{len .Skipped}})</summary>
<ul class="notes">{{range .Skipped}}<li>{{.Name}}: {{.Reason}}</li>{{end}}</ul></details>{{end}}{{end}}`))

// page parses a report page's template beside htmlParts.
func page(name, text string) *template.Template {
	return template.Must(template.Must(htmlParts.Clone()).New(name).Parse(text))
}

// htmlTemplate is report.html: the answer first (per verdict, what was
// found in plain words, its picture, the mechanism and the next step),
// then what it ran on, the verdict in full with its rule folded, the
// charts, and the tables, folded where they are long.
var htmlTemplate = page("report", `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>qoslab report: {{.Run.Name}}</title>
{{template "style"}}
</head>
<body>
<h1>qoslab report: {{.Run.Name}}</h1>
<p class="meta">{{.Status}} · qoslab {{.Run.ToolVersion}} · results schema {{.Run.SchemaVersion}} · seed {{.Run.Seed}}</p>
{{with .Summary.Partial}}<p class="meta"><strong>{{.}}.</strong></p>{{end}}
{{range .Answers}}<section class="answer {{.Outcome}}" id="answer-{{.Chart}}">
<p class="headline"><span class="badge">{{.Outcome}}</span> <strong>{{.Workload}}: {{.Headline}}.</strong></p>
<p class="found">{{.Sentence}}</p>
{{with .Figure}}<figure id="chart-{{.Name}}">
{{.SVG}}
</figure>
{{end}}{{with .Mechanism}}<p class="mechanism"><strong>Mechanism:</strong> {{.}}.</p>
{{end}}{{if .NextCommand}}<p class="next"><strong>Next step:</strong> <code>{{.NextCommand}}</code>{{.NextRest}}.</p>
{{else if .Again}}<p class="next"><strong>Next step:</strong> more repeats alone would not decide it (see why above); to run it again, with a new seed: <code>{{.Again}}</code>.</p>
{{end}}{{range .Caveats}}<p class="caveat"><strong>Caveat:</strong> {{.}}.</p>
{{end}}{{with .WarningsText}}<p class="meta">{{.}} below, under <a href="#verdict">the verdict in full</a>.</p>
{{end}}</section>
{{else}}<p class="answer">No verdict: no workload ran on both the host and the VM.</p>
{{end}}
<p class="platform">{{.Platform}}</p>
{{with .Contention}}<p class="platform">{{.}}</p>{{end}}

<h2 id="verdict">The verdict in full</h2>
{{if .Summary.Verdicts}}<div class="verdict">
{{.VerdictHTML}}</div>
<details><summary>The rule: how a verdict is decided</summary>
<p>{{.VerdictRule}}</p>
</details>
{{else}}{{.VerdictHTML}}{{end}}
{{with .WarningsHTML}}<div class="verdict">
{{.}}</div>{{end}}
{{.FindingsHTML}}
<h2>Charts</h2>
{{template "charts" .}}

<h2>Summary</h2>
{{.TablesHTML}}
<h2>Telemetry</h2>
{{if .TelemetryNotes}}<ul class="notes">{{range .TelemetryNotes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .TelemetryRows}}<details><summary>Telemetry per cell run ({{len .TelemetryRows}} rows)</summary>
<div class="wide"><table>
<tr><th>cell</th><th>repeat</th><th>view</th><th>sampler</th><th>samples</th><th>cores (mean busy, mean frequency)</th><th>power</th><th>threads followed</th><th>notes</th></tr>
{{range .TelemetryRows}}<tr><td>{{.Cell}}</td><td class="num">{{.Repeat}}</td><td>{{.View}}</td><td>{{.Sampler}}</td><td class="num">{{.Samples}}</td><td>{{.Types}}</td><td>{{.Power}}</td><td>{{.Threads}}</td><td>{{.Notes}}</td></tr>
{{end}}</table></div>
</details>
{{else}}<p>Telemetry was not recorded for this run.</p>{{end}}

<h2>Machines</h2>
<details><summary>What each machine reported{{range $i, $m := .Machines}}{{if $i}},{{else}}:{{end}} {{$m.Target}}{{end}}</summary>
{{range .Machines}}<h3>{{.Target}}</h3>
<div class="wide"><table>{{range .Fields}}<tr><th>{{.Key}}</th><td>{{.Value}}</td></tr>{{end}}</table></div>
{{end}}</details>
{{if .Run.Notes}}<h2>Run notes</h2>
<ul class="notes">{{range .Run.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Notes}}<h2>About the data</h2>
<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h2>Spec</h2>
<p>{{.SpecAgain}}</p>
<details><summary>The spec as run</summary>
<pre>{{.SpecText}}</pre>
</details>
</body>
</html>
`)
