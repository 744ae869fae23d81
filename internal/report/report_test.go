package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/spec"
)

// fixtureDir copies a results fixture into a temporary directory, with the
// constructed telemetry when withTelemetry.
func fixtureDir(t *testing.T, name string, withTelemetry bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	src := filepath.Join("..", "..", "testdata", "results", name)
	for _, f := range []string{results.RunFile, results.SamplesFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	if withTelemetry {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "results", "telemetry-constructed.jsonl"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, results.TelemetryFile), b, 0o644))
	}
	return dir
}

func TestReportIsOneSelfContainedFile(t *testing.T) {
	dir := fixtureDir(t, "linux-fixture", true)
	r, err := Load(dir)
	require.NoError(t, err)
	require.NotEmpty(t, r.Charts)
	paths, err := r.Write()
	require.NoError(t, err)
	assert.Contains(t, paths, filepath.Join(dir, results.ReportFile))
	assert.Contains(t, paths, filepath.Join(dir, markdownFile))

	b, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	require.NoError(t, err)
	html := string(b)
	assert.NotContains(t, html, "http:", "no external URL, not even a namespace")
	assert.NotContains(t, html, "https:")
	assert.NotContains(t, html, "<script")
	assert.NotContains(t, html, "<?xml", "SVG inlined without its XML prologue")
	assert.Equal(t, len(r.Charts), strings.Count(html, "<svg"), "one inline SVG per chart")
	assert.Equal(t, len(r.Charts), strings.Count(html, "</svg>"))
	for _, c := range r.Charts {
		assert.Contains(t, html, `id="chart-`+c.Name+`"`)
	}
	// Charts drawn by the same renderer reuse ids; inlined together they
	// must not collide, or one chart's clip path would cut another's.
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(`\bid="([^"]+)"`).FindAllStringSubmatch(html, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		assert.Equal(t, 1, n, "id %q used %d times", id, n)
	}

	for _, want := range []string{
		"qoslab report: fixture",
		`<h2 id="verdict">The verdict in full</h2>`, "fp: ",
		"total rate median (", "QoS applied",
		"Intel(R) Xeon(R) Processor", // both machines' Info
		"QEMU",
		"not Apple silicon results",
		"\ncontention: 2\n", // the spec, as a spec file
		"Run it again, with a new seed: qoslab run --again ",
		"<h2>Telemetry</h2>", "vcpu 0",
		// Beside the verdict: what SI is, the margins and the level.
		"SI = 1 - ln(vm ratio)/ln(host ratio)", "10% of the host&#39;s effect", "1.25x either way", "two one-sided tests at 5%",
	} {
		assert.True(t, strings.Contains(html, want), "report.html lacks %q", want)
	}

	md, err := os.ReadFile(filepath.Join(dir, markdownFile))
	require.NoError(t, err)
	for _, c := range r.Charts {
		link := "(" + results.PlotsDir + "/" + c.Name + ".png)"
		assert.Contains(t, string(md), link)
		assert.FileExists(t, filepath.Join(dir, results.PlotsDir, c.Name+".png"), "report.md's links resolve")
	}
	assert.Contains(t, string(md), "## Verdict")
	// The spec section is a spec file run --spec takes, not run.json's JSON.
	block := regexp.MustCompile("(?s)## Spec\n\n[^\n]*\n\n```yaml\n(.*?)```").FindStringSubmatch(string(md))
	require.NotNil(t, block, "report.md has the spec as YAML")
	s, err := spec.ParseSpec([]byte(block[1]), "again")
	require.NoError(t, err, block[1])
	assert.Equal(t, r.Run.Spec.Value(), s)
	assert.Contains(t, string(md), "not Apple silicon results")
	assert.Contains(t, string(md), "whose edge is the smaller of 10% of the host's effect at the low end of its interval (relative margin) and 1.25x either way (absolute margin): two one-sided tests at 5%")
}

func TestReportWithoutTelemetrySaysSo(t *testing.T) {
	dir := fixtureDir(t, "linux-contention", false)
	r, err := Load(dir)
	require.NoError(t, err)
	var html, md strings.Builder
	require.NoError(t, r.WriteHTML(&html))
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, html.String(), "Telemetry was not recorded for this run.")
	assert.Contains(t, md.String(), "Telemetry was not recorded for this run.")
	assert.Contains(t, md.String(), "\n- fp: QoS subsumed in VM: ", "each verdict names its workload")
	assert.Contains(t, html.String(), "<li>fp: QoS subsumed in VM: ")
	var skipped []string
	for _, s := range r.Skipped {
		skipped = append(skipped, s.Name)
	}
	assert.Contains(t, html.String(), "Not drawn, for want of data", "skipped charts are named, not drawn empty")
	for _, s := range r.Skipped {
		assert.Contains(t, html.String(), s.Name+": ")
	}
	assert.NotEmpty(t, skipped, "an fp-only run has no compression chart")
}

func TestReportOfAStoppedRunSaysWhy(t *testing.T) {
	dir := fixtureDir(t, "linux-contention", false)
	d, err := results.Open(dir)
	require.NoError(t, err)
	d.Run.Error = "vm: QEMU ended"
	d.Run.Notes = append(d.Run.Notes, "telemetry unavailable on host: powermetrics telemetry unavailable: needs root. To enable it: run qoslab with sudo")
	require.NoError(t, d.SaveRun())
	r, err := Load(dir)
	require.NoError(t, err)
	assert.Contains(t, r.Status(), "before finishing: vm: QEMU ended")
	var html, md strings.Builder
	require.NoError(t, r.WriteHTML(&html))
	require.NoError(t, r.WriteMarkdown(&md))
	for _, out := range []string{html.String(), md.String()} {
		tel := out[strings.Index(out, "Telemetry</h2>")+1:]
		if strings.Contains(out, "## Telemetry") {
			tel = out[strings.Index(out, "## Telemetry"):]
		}
		assert.Contains(t, tel, "To enable it: run qoslab with sudo", "why telemetry is missing is said where telemetry is")
	}
}

func TestLoadRefusesNonResults(t *testing.T) {
	_, err := Load(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a qoslab results directory")
}

// The spinners' placement and class, as run.json records them, are in both
// reports; a run without the record (older, or no contention) says nothing.
func TestReportShowsContentionPlacement(t *testing.T) {
	dir := fixtureDir(t, "linux-contention", false)
	r, err := Load(dir)
	require.NoError(t, err)
	assert.Empty(t, r.Contention(), "the fixture predates the record")

	d, err := results.Open(dir)
	require.NoError(t, err)
	d.Run.Contention, err = results.DecodeRecorded[contention.Contention]([]byte(`{"asked":"all","threads":2,"pid":77,"allowed_cpus":[0,1],"spinners":[
		{"cpu":0,"pinned":true,"allowed":[0],"tid":78,"qos":{"asked":21,"applied":21,"full":true}},
		{"cpu":1,"pinned":true,"allowed":[1],"tid":79,"qos":{"asked":21,"applied":21,"full":true}}]}`))
	require.NoError(t, err)
	require.NoError(t, d.SaveRun())
	r, err = Load(dir)
	require.NoError(t, err)
	want := "2 spinner threads at default, pinned to CPUs 0,1, one per allowed CPU (0,1) (pid 77)"
	assert.Contains(t, r.Contention(), want)
	var html, md strings.Builder
	require.NoError(t, r.WriteHTML(&html))
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, html.String(), want)
	assert.Contains(t, md.String(), want)
}

// A cell whose repeats disagree is warned about under its workload's
// verdict in report.md and report.html, and marked in its table: in the
// contention fixture, measured on a 2-CPU Linux machine, one of the five
// background repeats on one thread ran while the spinners were not holding
// the CPUs (1.1M to 1.8M loops/s, and 349M).
func TestReportWarnsBesideTheVerdict(t *testing.T) {
	r, err := Load(fixtureDir(t, "linux-contention", false))
	require.NoError(t, err)
	var html, md strings.Builder
	require.NoError(t, r.WriteHTML(&html))
	require.NoError(t, r.WriteMarkdown(&md))
	warn := "host fp qos=9 threads=1: repeats range 1.105M..348.8M loops/s (316x apart): the records carry no CPU time (a run written before results schema 1.2), " +
		"so whether the threads lost CPU share or speed cannot be told"
	mech := "not recorded: the records carry no CPU time (a run written before results schema 1.2), so share and speed cannot be told apart"
	assert.Regexp(t, `\n- fp: QoS subsumed in VM: [^\n]*\n(  - \*\*next:\*\* [^\n]*\n)?  - \*\*mechanism:\*\* `+regexp.QuoteMeta(mech)+`\n  - \*\*warning:\*\* `+regexp.QuoteMeta(warn)+"\n",
		md.String(), "under the fp verdict, after its next step and mechanism")
	assert.Regexp(t, `<li>fp: QoS subsumed in VM: <span class="(yes|no|inconclusive)">[a-z]+</span>[^<]*\n<ul>\n(<li><strong>next: </strong><code>qoslab run [^<]*</code>[^<`+"`"+`]*</li>\n)?`+
		`<li><strong>mechanism: </strong>`+regexp.QuoteMeta(mech)+`</li>\n`+
		`<li><span class="warning"><strong>warning: </strong></span><span class="warning">`+regexp.QuoteMeta(warn)+`</span></li>\n</ul>\n</li>`, html.String(),
		"the verdict in full is render.HTML's: the answer in its tone, the next step's command as code, no backticks, the warning in its tone")
	assert.Contains(t, html.String(), `<p class="mechanism"><strong>Mechanism:</strong> `+mech+`.</p>`, "the mechanism with the answer")
	assert.Equal(t, strings.Count(md.String(), "**warning:**"), strings.Count(html.String(), "<strong>warning: </strong>"))
	assert.Equal(t, strings.Count(md.String(), "**warning:**"), strings.Count(md.String(), " ! |"), "each warned cell is marked in its table")

	// The same cell with its five repeats close together is not warned about.
	for i, c := range r.Summary.Cells {
		if c.Dispersion.Flag != analysis.FlagNone {
			r.Summary.Cells[i].Dispersion = analysis.Disperse([]float64{1.1e6, 1.12e6, 1.13e6, 1.15e6, 1.14e6}, "loops/s")
		}
	}
	md.Reset()
	require.NoError(t, r.WriteMarkdown(&md))
	assert.NotContains(t, md.String(), warn)
}

// A VM in the vz model is said to be QEMU's in the report's platform line
// (as under bench's table): never taken for a Mac.
func TestVZModelIsSaidToBeQEMUs(t *testing.T) {
	machines, err := results.NewRecorded(map[string]hv.MachineInfo{"vm": {Backend: "qemu", Accel: "tcg", Model: hv.ModelVZ}})
	require.NoError(t, err)
	vm, err := results.RecordInfo(json.RawMessage(`{"os": "linux", "arch": "arm64", "virtualized": true}`))
	require.NoError(t, err)
	r := &Report{Run: results.Run{Machines: machines, Targets: results.Targets{"vm": vm}}}
	assert.Contains(t, r.Platform(), "Measured on vm: linux/arm64, virtualized. vm: qemu (tcg), device model vz: the guest laid out as Virtualization.framework lays it out")
	assert.Contains(t, r.Platform(), "not Apple silicon results")
}

// An undecided verdict's next step is in the report, in Markdown and
// HTML, as the command that would tell, beside the terminal's summary.
func TestReportNamesTheNextStep(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "results", "constructed", "capped")
	r, err := Load(dir)
	require.NoError(t, err)
	want := "`qoslab run --again " + dir + " --max-repeats 24` lets the run add repeats up to 24 per cell, which would tell"
	lines := r.VerdictLines()
	require.Len(t, lines, 1)
	assert.Equal(t, want, lines[0].Next)
	var md strings.Builder
	require.NoError(t, r.WriteMarkdown(&md))
	assert.Contains(t, md.String(), "  - **next:** "+want+"\n")
	var term strings.Builder
	summary.WriteTerminal(&term, r.Summary)
	assert.Contains(t, strings.Join(strings.Fields(term.String()), " "), " - next: "+want+" ")
}

// The report's verdicts, warnings and tables are the run's document's
// blocks (summary's, as summary.md has them): report.html holds them as
// render.HTML writes them, report.md as render.Markdown does, and the
// page's style sheet styles render.HTML's classes.
func TestReportTablesAreRenderedBlocks(t *testing.T) {
	r, err := Load(fixtureDir(t, "linux-contention", false))
	require.NoError(t, err)
	require.NotEmpty(t, r.Tables)
	var html, md strings.Builder
	require.NoError(t, r.WriteHTML(&html))
	require.NoError(t, r.WriteMarkdown(&md))
	for _, tb := range r.Tables {
		blocks := summary.TableBlocks(tb, 3)
		var h, m strings.Builder
		require.NoError(t, render.HTML(&h, render.Document{Blocks: blocks}))
		require.NoError(t, render.Markdown(&m, render.Document{Blocks: blocks}))
		assert.Contains(t, html.String(), h.String(), "report.html's table %s", tb.Title)
		assert.Contains(t, md.String(), m.String(), "report.md's table %s", tb.Title)
	}
	per, _ := summary.Warnings(r.Summary)
	var h strings.Builder
	require.NoError(t, render.HTML(&h, render.Document{Blocks: []render.Block{&render.List{Items: r.Summary.VerdictItems(per)}}}))
	assert.Contains(t, html.String(), h.String(), "the verdict in full")
	for _, rule := range []string{".wide, .table { overflow-x: auto;", "td.num {", "th.num {", "span.yes, span.no, span.inconclusive", ".warning {", ".note {"} {
		assert.Contains(t, html.String(), rule)
	}
	assert.NotContains(t, md.String(), "\x1b[", "Markdown is never coloured")
}
