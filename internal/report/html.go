package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/plot"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results/summary"
)

// WriteHTML writes report.html: one file with its styles and charts inline,
// no script and no external URL, so it can be mailed or opened offline.
func (r *Report) WriteHTML(w io.Writer) error {
	charts, err := htmlCharts(r.Charts)
	if err != nil {
		return err
	}
	data := struct {
		*Report
		HTMLCharts    []htmlChart
		QoSIntro      string
		TelemetryRows []summary.TelemetryRow
		Findings      []string
	}{r, charts, summary.QoSNotesIntro, summary.TelemetryRows(r.Summary.Telemetry), findingLines(r.Summary.Findings)}
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, data); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// findingLines are the findings in words.
func findingLines(fs []analysis.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = render.Finding(f)
	}
	return out
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
	if m := svgSize.FindStringSubmatch(s); m != nil && !strings.Contains(m[1], "viewBox") {
		s = svgSize.ReplaceAllString(s, fmt.Sprintf(`<svg$1 viewBox="0 0 %s %s" role="img"`, m[2], m[3]))
	}
	return s, nil
}

// htmlParts are the pieces every report page shares: its styles, and its
// charts inline with the list of those not drawn.
var htmlParts = template.Must(template.New("parts").Parse(`{{define "style"}}<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; max-width: 1280px; margin: 2em auto; padding: 0 1em; color: #111; line-height: 1.45; }
h1 { margin-bottom: 0.2em; }
.meta { color: #444; }
.verdict { font-size: 1.1em; background: #f3f6fa; border-left: 4px solid #2b6cb0; padding: 0.6em 1em; }
.platform { background: #fff8e6; border-left: 4px solid #b7791f; padding: 0.6em 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1.5em 0; }
figure svg { width: 100%; height: auto; max-width: 1200px; }
figcaption { color: #444; font-size: 0.9em; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
.notes li { color: #444; }
</style>{{end}}
{{define "charts"}}{{range .HTMLCharts}}<figure id="chart-{{.Name}}">
{{.SVG}}
<figcaption>{{.Title}} ({{.Name}})</figcaption>
</figure>
{{else}}<p>No chart could be drawn from these data.</p>
{{end}}{{if .Skipped}}<p>Not drawn, for want of data:</p>
<ul class="notes">{{range .Skipped}}<li>{{.Name}}: {{.Reason}}</li>{{end}}</ul>{{end}}{{end}}`))

// page parses a report page's template beside htmlParts.
func page(name, text string) *template.Template {
	return template.Must(template.Must(htmlParts.Clone()).New(name).Parse(text))
}

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
<p class="platform">{{.Platform}}</p>
{{with .Contention}}<p class="platform">{{.}}</p>{{end}}

<h2>Verdict</h2>
{{if .Summary.Verdicts}}<ul class="verdict">{{range .VerdictLines}}<li>{{.Text}}{{if or .Mechanism .OtherWork .Next .Warnings}}<ul class="warnings">{{with .Mechanism}}<li><strong>mechanism:</strong> {{.}}</li>{{end}}{{with .OtherWork}}<li><strong>host:</strong> {{.}}</li>{{end}}{{range .Warnings}}<li><strong>warning:</strong> {{.}}</li>{{end}}{{if .NextCommand}}<li><strong>next:</strong> <code>{{.NextCommand}}</code>{{.NextRest}}</li>{{end}}</ul>{{end}}</li>{{end}}</ul>
<p class="meta">{{.VerdictRule}}</p>
{{else}}<p>No verdict: no workload ran on both the host and the VM.</p>{{end}}
{{with .OtherWarnings}}<ul class="verdict">{{range .}}<li><strong>warning:</strong> {{.}}</li>{{end}}</ul>{{end}}
{{with .Findings}}<h2>Findings</h2>
<ul class="verdict">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h2>Charts</h2>
{{template "charts" .}}

<h2>Summary</h2>
{{range $t := .Tables}}<h3>{{.Title}}</h3>
<table>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if index $t.RightAlign $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
{{range .Marks}}<p>{{.}}</p>{{end}}{{if .QoSNotes}}<p>{{$.QoSIntro}}</p><ul class="notes">{{range .QoSNotes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Regressions}}<p>Total rate R ({{.RateUnit}}) on threads T, one point per repeat:</p><ul>{{range .Regressions}}<li><code>{{.}}</code></li>{{end}}</ul>{{end}}
{{else}}<p>No cell finished.</p>
{{end}}
<h2>Telemetry</h2>
{{if .TelemetryNotes}}<ul class="notes">{{range .TelemetryNotes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .TelemetryRows}}<table>
<tr><th>cell</th><th>repeat</th><th>view</th><th>sampler</th><th>samples</th><th>cores (mean busy, mean frequency)</th><th>power</th><th>threads followed</th><th>notes</th></tr>
{{range .TelemetryRows}}<tr><td>{{.Cell}}</td><td class="num">{{.Repeat}}</td><td>{{.View}}</td><td>{{.Sampler}}</td><td class="num">{{.Samples}}</td><td>{{.Types}}</td><td>{{.Power}}</td><td>{{.Threads}}</td><td>{{.Notes}}</td></tr>
{{end}}</table>
{{else}}<p>Telemetry was not recorded for this run.</p>{{end}}

<h2>Machines</h2>
{{range .Machines}}<h3>{{.Target}}</h3>
<table>{{range .Fields}}<tr><th>{{.Key}}</th><td>{{.Value}}</td></tr>{{end}}</table>
{{end}}
{{if .Run.Notes}}<h2>Run notes</h2>
<ul class="notes">{{range .Run.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Notes}}<h2>About the data</h2>
<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h2>Spec</h2>
<p>{{.SpecAgain}}</p>
<pre>{{.SpecText}}</pre>
</body>
</html>
`)
