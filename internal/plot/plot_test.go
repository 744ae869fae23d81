package plot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"html"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/telemetry"
)

func names(charts []Chart) []string {
	var out []string
	for _, c := range charts {
		out = append(out, c.Name)
	}
	return out
}

func skippedNames(s []Skipped) []string {
	var out []string
	for _, x := range s {
		out = append(out, x.Name)
	}
	return out
}

// filter keeps the samples keep is true for, and analyses them again.
func filter(in Input, keep func(results.Sample) bool) Input {
	out := Input{Name: in.Name, Telemetry: in.Telemetry}
	for _, s := range in.Samples {
		if keep(s) {
			out.Samples = append(out.Samples, s)
		}
	}
	out.Summary = summary.Analyze(out.Samples, "host", "vm")
	return out
}

func TestChartsFromLinuxFixture(t *testing.T) {
	in := loadRun(t, "linux-fixture")
	charts, skipped := Charts(in)
	assert.Equal(t, []string{
		"throughput-fp",
		"thread-times-fp-host", "thread-times-fp-vm",
		"process-times",
		"compression",
		"elapsed-fp", "elapsed-procs",
		"verdict-compress", "verdict-decompress", "verdict-fp", "verdict-procs",
	}, names(charts))
	assert.Equal(t, []string{"mechanism-fp", "telemetry"}, skippedNames(skipped), "the fixture has no telemetry.jsonl, and its records no CPU time")
	for _, c := range charts {
		assert.Contains(t, Families(), c.Family, c.Name)
		assert.True(t, strings.HasPrefix(c.Name, c.Family), "%s is named after its family %s", c.Name, c.Family)
		assert.NotEmpty(t, c.Title, c.Name)
		_, h := c.Size()
		assert.Greater(t, h, 4*vg.Inch, "%s is too short to read", c.Name)
	}
}

func TestChartsSkipMissingData(t *testing.T) {
	full := loadRun(t, "linux-fixture")
	tel := loadTelemetry(t)
	cases := []struct {
		name        string
		in          Input
		wantCharts  []string
		wantSkipped []string
	}{
		{
			name:        "host-only fp run",
			in:          filter(full, func(s results.Sample) bool { return s.Target == "host" && s.Workload == "fp" }),
			wantCharts:  []string{"throughput-fp", "thread-times-fp-host", "elapsed-fp"},
			wantSkipped: []string{"mechanism-fp", "process-times", "compression", "telemetry", "verdict"},
		},
		{
			name:        "compression only",
			in:          filter(full, func(s results.Sample) bool { return isCompression(s.Workload) }),
			wantCharts:  []string{"compression", "verdict-compress", "verdict-decompress"},
			wantSkipped: []string{"throughput", "mechanism", "thread-times", "process-times", "elapsed", "telemetry"},
		},
		{
			name:        "procs only",
			in:          filter(full, func(s results.Sample) bool { return s.Workload == "procs" }),
			wantCharts:  []string{"process-times", "elapsed-procs", "verdict-procs"},
			wantSkipped: []string{"throughput", "mechanism", "thread-times", "compression", "telemetry"},
		},
		{
			name:        "telemetry only",
			in:          Input{Telemetry: tel},
			wantCharts:  []string{"telemetry-host-host", "telemetry-vm-guest", "telemetry-vm-host"},
			wantSkipped: []string{"throughput", "mechanism", "thread-times", "process-times", "compression", "elapsed", "verdict"},
		},
		{
			name:        "nothing",
			in:          Input{},
			wantSkipped: Families(),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			charts, skipped := Charts(tc.in)
			assert.Equal(t, tc.wantCharts, names(charts))
			assert.Equal(t, tc.wantSkipped, skippedNames(skipped))
			for _, s := range skipped {
				assert.NotEmpty(t, s.Reason, s.Name)
			}
		})
	}
}

// Fixed-duration cells have no completion times worth drawing: their
// thread-time and elapsed charts are skipped with the reason, their
// throughput is drawn.
func TestChartsSkipCompletionTimesOfDurationCells(t *testing.T) {
	full := loadRun(t, "linux-fixture")
	in := filter(full, func(s results.Sample) bool { return s.Workload == "fp" })
	for i := range in.Samples {
		in.Samples[i].DurationNs = int64(time.Second)
	}
	charts, skipped := Charts(in)
	assert.Equal(t, []string{"throughput-fp", "verdict-fp"}, names(charts))
	var reasons []string
	for _, s := range skipped {
		if strings.HasPrefix(s.Name, familyThreadTimes) || strings.HasPrefix(s.Name, familyElapsed) {
			reasons = append(reasons, s.Name+": "+s.Reason)
		}
	}
	want := "fp ran for a fixed duration (1s): every thread ends at the deadline by design"
	require.Len(t, reasons, 3, "thread times of host and vm, and elapsed")
	for _, r := range reasons {
		assert.Contains(t, r, want)
	}
	assert.Equal(t, []string{"thread-times-fp-host", "thread-times-fp-vm", "elapsed-fp"}, []string{
		strings.SplitN(reasons[0], ":", 2)[0], strings.SplitN(reasons[1], ":", 2)[0], strings.SplitN(reasons[2], ":", 2)[0]})
}

// TestChartsComputeSummary: a caller that passes samples alone gets the
// same charts as one that analysed them.
func TestChartsComputeSummary(t *testing.T) {
	in := loadRun(t, "linux-fixture")
	withSummary, _ := Charts(in)
	in.Summary = summary.Summary{}
	without, _ := Charts(in)
	require.Equal(t, names(withSummary), names(without))
	var a, b bytes.Buffer
	require.NoError(t, withSummary[0].Render(&a, "svg"))
	require.NoError(t, without[0].Render(&b, "svg"))
	assert.Equal(t, a.String(), b.String())
}

// texts returns the text of every <text> element, unescaped.
func texts(svg string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

func renderSVG(t *testing.T, c Chart) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, c.Render(&buf, "svg"), c.Name)
	// Well-formed XML, which browsers insist on for SVG.
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "%s is not well-formed XML", c.Name)
	}
	return buf.String()
}

// TestSVGStructure checks, for every chart of both runs and the telemetry
// fixture, that the SVG holds the title, both axis labels of every panel,
// every legend entry and every note as text, and that no text is smaller
// than 12 pt.
func TestSVGStructure(t *testing.T) {
	in := loadRun(t, "linux-fixture")
	in.Telemetry = loadTelemetry(t)
	charts, _ := Charts(in)
	contention, _ := Charts(loadRun(t, "linux-contention"))
	charts = append(charts, contention...)
	require.NotEmpty(t, charts)
	for _, c := range charts {
		t.Run(c.Name, func(t *testing.T) {
			svg := renderSVG(t, c)
			all := texts(svg)
			// Wrapped lines are separate elements, split at spaces.
			joined := strings.Join(all, " ")
			assert.Contains(t, joined, c.Title)
			for i, p := range c.fig.panels {
				if p.plot.X.Label.Text != "" {
					assert.Contains(t, all, p.plot.X.Label.Text, "panel %d x label", i)
				}
				if i == len(c.fig.panels)-1 {
					assert.NotEmpty(t, p.plot.X.Label.Text, "the bottom panel says what x is")
				}
				if c.Family != familyTelemetry || p.plot.Y.Label.Text != "" {
					require.NotEmpty(t, p.plot.Y.Label.Text, "panel %d has no y label", i)
					assert.Contains(t, all, p.plot.Y.Label.Text, "panel %d y label", i)
				}
			}
			require.NotEmpty(t, c.fig.legend, "every chart has a legend")
			for _, e := range c.fig.legend {
				assert.Contains(t, all, e.text, "legend entry")
			}
			for _, n := range c.Notes {
				assert.Contains(t, joined, "Note: "+n)
			}
			for _, m := range regexp.MustCompile(`font-size:([0-9.]+)px`).FindAllStringSubmatch(svg, -1) {
				size, err := strconv.ParseFloat(m[1], 64)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, size, 12.0, "text smaller than 12 pt")
			}
		})
	}
}

// TestThroughputLegendCarriesRegressions: each (target, QoS) of the
// fixture's fp has its regression printed as summary.md prints it, and the
// units are in the axis labels.
func TestThroughputLegendCarriesRegressions(t *testing.T) {
	in := loadRun(t, "linux-fixture")
	charts, _ := Charts(in)
	sel, err := Select(charts, "throughput-fp")
	require.NoError(t, err)
	require.Len(t, sel, 1)
	all := texts(renderSVG(t, sel[0]))
	n := 0
	for _, r := range in.Summary.Regressions {
		if r.Workload != "fp" {
			continue
		}
		n++
		want := render.Regression(render.RegressionLabel(r), r.Regression)
		if r.ThreadCounts < analysis.MinThreadCounts {
			want = render.RegressionLabel(r) + " " + qos.Class(r.QoS).String() + ": no fit (2 thread counts; a line needs 3)"
		}
		assert.True(t, slices.ContainsFunc(all, func(s string) bool { return strings.HasPrefix(s, want) }), "no legend entry %q in %q", want, all)
	}
	assert.Equal(t, 4, n, "host and vm at QoS 9 and 33")
	assert.True(t, slices.ContainsFunc(all, func(s string) bool { return strings.HasPrefix(s, "total rate (M loops/s") }), "rate axis in M loops/s: %q", all)
	assert.Contains(t, all, "threads")
}

// TestTargetsByColourQoSByDash: host and VM series are drawn in different
// colours, and the two classes in different dash patterns.
func TestTargetsByColourQoSByDash(t *testing.T) {
	charts, _ := Charts(loadRun(t, "linux-fixture"))
	sel, err := Select(charts, "elapsed-fp")
	require.NoError(t, err)
	svg := renderSVG(t, sel[0])
	assert.Contains(t, svg, "stroke:#103A7A", "host colour")
	assert.Contains(t, svg, "stroke:#E69F00", "VM colour")
	// Background is dashed, user-interactive solid.
	assert.Contains(t, svg, "stroke-dasharray:9,5")
	assert.NotEqual(t, qosDashes(9), qosDashes(33))
	assert.NotEqual(t, qosShape(9), qosShape(33))
}

func TestTelemetryCharts(t *testing.T) {
	charts, skipped := Charts(Input{Name: "constructed", Telemetry: loadTelemetry(t)})
	require.Equal(t, []string{"telemetry-host-host", "telemetry-vm-guest", "telemetry-vm-host"}, names(charts))
	byName := map[string]Chart{}
	for _, c := range charts {
		byName[c.Name] = c
	}
	assert.NotContains(t, skippedNames(skipped), "telemetry")

	guest := byName["telemetry-vm-guest"]
	assert.Len(t, guest.fig.panels, 2, "busy and threads; no MHz panel")
	assert.True(t, slices.ContainsFunc(guest.Notes, func(n string) bool { return strings.Contains(n, "MHz panel is left out") }), "notes: %q", guest.Notes)

	vmHost := byName["telemetry-vm-host"]
	assert.Len(t, vmHost.fig.panels, 3, "busy, MHz and vCPU threads")
	all := texts(renderSVG(t, vmHost))
	joined := strings.Join(all, " ")
	for _, want := range []string{"vcpu 0: default (SCHED_OTHER, nice 0)", "vcpu 1: default (SCHED_OTHER, nice 0)", "fp q9 ×2 r1", "fp q33 ×2 r2", "CPU 3 P", "frequency: 970 MHz (light) to 3210 MHz (dark)"} {
		assert.Contains(t, joined, want)
	}

	host := byName["telemetry-host-host"]
	assert.True(t, slices.ContainsFunc(host.Notes, func(n string) bool { return strings.Contains(n, "2 samples taken between cell runs") }), "notes: %q", host.Notes)
	assert.Contains(t, strings.Join(texts(renderSVG(t, host)), " "), "worker 0: background (SCHED_IDLE); user-interactive (SCHED_OTHER, nice -10)", "each policy in plain words, with the class it belongs to")
}

func TestTelemetryWithoutReadings(t *testing.T) {
	samples := []telemetry.Sample{
		{Cell: "vm fp qos=9 threads=1", Repeat: 1, Target: "vm", View: "guest", TNs: 0},
		{Cell: "vm fp qos=9 threads=1", Repeat: 1, Target: "vm", View: "guest", TNs: 1e8, IntervalNs: 1e8, CPUs: []telemetry.CPU{{ID: 0}}},
		{Cell: "", Target: "host", View: "host", TNs: 1e8, IntervalNs: 1e8, CPUs: []telemetry.CPU{{ID: 0, Busy: telemetry.Float(0.5)}}},
	}
	charts, skipped := Charts(Input{Telemetry: samples})
	assert.Empty(t, charts)
	require.Len(t, skipped, 9, "seven families without samples, and two telemetry views without readings")
	assert.Equal(t, "telemetry-host-host", skipped[6].Name)
	assert.Contains(t, skipped[6].Reason, "no samples taken during a cell run")
	assert.Equal(t, "telemetry-vm-guest", skipped[7].Name)
	assert.Contains(t, skipped[7].Reason, "read no CPU busy share, frequency or thread time")
}

func TestCellLabel(t *testing.T) {
	cases := []struct {
		cell   string
		repeat int
		want   string
	}{
		{"vm fp qos=9 threads=1 loops=10000000", 2, "fp q9 ×1 r2"},
		{"host compress qos=33 threads=1 size=16777216 ratio=3 codec=zstd", 1, "compress q33 ×1 r1"},
		{"odd", 3, "odd r3"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, cellLabel(tc.cell, tc.repeat))
	}
}

func TestRenderPNG(t *testing.T) {
	charts, _ := Charts(loadRun(t, "linux-fixture"))
	for _, c := range charts {
		var buf bytes.Buffer
		require.NoError(t, c.Render(&buf, "png"), c.Name)
		img, err := png.Decode(&buf)
		require.NoError(t, err, c.Name)
		assert.Equal(t, 1200, img.Bounds().Dx(), c.Name)
		_, h := c.Size()
		assert.InDelta(t, float64(h/vg.Inch)*120, img.Bounds().Dy(), 1, c.Name)
	}
}

func TestRenderPDF(t *testing.T) {
	charts, _ := Charts(loadRun(t, "linux-fixture"))
	sel, err := Select(charts, "compression")
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, sel[0].Render(&buf, "pdf"))
	assert.True(t, bytes.HasPrefix(buf.Bytes(), []byte("%PDF")), "starts %q", buf.Bytes()[:min(8, buf.Len())])
	assert.True(t, bytes.Contains(buf.Bytes()[max(0, buf.Len()-64):], []byte("%%EOF")), "PDF is complete")
}

// TestRenderIsDeterministic: the same input gives the same bytes, so that
// regenerating plots leaves unchanged files unchanged.
func TestRenderIsDeterministic(t *testing.T) {
	in := loadRun(t, "linux-fixture")
	in.Telemetry = loadTelemetry(t)
	first, _ := Charts(in)
	second, _ := Charts(in)
	for i := range first {
		assert.Equal(t, renderSVG(t, first[i]), renderSVG(t, second[i]), first[i].Name)
	}
}

func TestRenderErrors(t *testing.T) {
	charts, _ := Charts(loadRun(t, "linux-fixture"))
	err := charts[0].Render(io.Discard, "pnf")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `did you mean "png"`)
	assert.Contains(t, err.Error(), "png, svg, pdf")

	err = Chart{Name: "empty"}.Render(io.Discard, "png")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing to draw")

	// A chart gonum cannot draw (a log axis reaching zero) is an error for
	// that chart, not a panic.
	p := newPlot("x", "y")
	valueAxis(&p.Y, []float64{1, 1000}, false)
	p.Add(&plotter.Scatter{XYs: plotter.XYs{{X: 1, Y: 10}}, GlyphStyle: glyphStyle("host", nil, 9)})
	p.Y.Min = -1
	bad := chart("bad", familyThroughput, &figure{title: "bad", panels: []panel{{plot: p, height: vg.Inch}}})
	err = bad.Render(io.Discard, "png")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `render chart "bad" as png`)
}

func TestSelect(t *testing.T) {
	charts, _ := Charts(loadRun(t, "linux-fixture"))
	hostOnly, _ := Charts(filter(loadRun(t, "linux-fixture"), func(s results.Sample) bool { return s.Target == "host" && s.Workload == "fp" }))
	cases := []struct {
		name    string
		charts  []Chart
		only    string
		want    []string
		wantErr []string
	}{
		{name: "empty selects all", charts: charts, only: "", want: names(charts)},
		{name: "family", charts: charts, only: "thread-times", want: []string{"thread-times-fp-host", "thread-times-fp-vm"}},
		{name: "exact name", charts: charts, only: "thread-times-fp-vm", want: []string{"thread-times-fp-vm"}},
		{name: "list keeps chart order", charts: charts, only: "elapsed-procs, throughput", want: []string{"throughput-fp", "elapsed-procs"}},
		{name: "typo", charts: charts, only: "thruput", wantErr: []string{`unknown chart "thruput"`, `did you mean "throughput"?`, "throughput, mechanism, thread-times, process-times, compression, elapsed, telemetry", "elapsed-procs"}},
		{name: "unknown without suggestion", charts: charts, only: "histogram", wantErr: []string{`unknown chart "histogram"`, "--only takes a family"}},
		{name: "family without data selects nothing", charts: hostOnly, only: "compression", want: nil},
		{name: "family without data beside one with", charts: hostOnly, only: "compression,elapsed", want: []string{"elapsed-fp"}},
		{name: "chart of another run", charts: hostOnly, only: "thread-times-fp-vm", wantErr: []string{`unknown chart "thread-times-fp-vm"`, "throughput-fp, thread-times-fp-host, elapsed-fp"}},
		{name: "no charts at all", charts: nil, only: "telemetry-vm-guest", wantErr: []string{"none"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Select(tc.charts, tc.only)
			if len(tc.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tc.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, names(got))
		})
	}
}

func TestWriteAll(t *testing.T) {
	charts, _ := Charts(loadRun(t, "linux-fixture"))
	dir := filepath.Join(t.TempDir(), "plots")
	paths, err := WriteAll(dir, charts, "svg")
	require.NoError(t, err)
	require.Len(t, paths, len(charts))
	for i, p := range paths {
		assert.Equal(t, filepath.Join(dir, charts[i].Name+".svg"), p)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(b, []byte("<?xml")), p)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, len(charts), "no temporary files left behind")

	_, err = WriteAll(filepath.Join(t.TempDir(), "none"), charts, "jpeg")
	require.Error(t, err)
	_, statErr := os.Stat(filepath.Join(t.TempDir(), "none"))
	assert.True(t, os.IsNotExist(statErr), "nothing created for an unknown format")
}

// TestDegenerateSamples: runs that are odd but possible (one repeat, zero
// durations, one thread count, an unknown class and target) still render in
// every format.
func TestDegenerateSamples(t *testing.T) {
	cases := []struct {
		name    string
		samples []results.Sample
	}{
		{"one sample", []results.Sample{{Target: "host", Workload: "fp", QoS: 9, Threads: 1, Repeat: 1, EndNs: 2e9, Work: 1e6, Unit: "loops", Rate: 5e5}}},
		{"zero durations", []results.Sample{
			{Target: "host", Workload: "int", QoS: 33, Threads: 1, Repeat: 1, Work: 1e6, Unit: "loops"},
			{Target: "vm", Workload: "int", QoS: 33, Threads: 2, Repeat: 1, Work: 1e6, Unit: "loops"},
		}},
		{"unknown class and target", []results.Sample{
			{Target: "container", Workload: "pi", QoS: 0, Threads: 1, Repeat: 1, EndNs: 1e9, Work: 1e6, Unit: "iterations", Rate: 1e6},
			{Target: "container", Workload: "pi", QoS: 0, Threads: 3, Repeat: 1, EndNs: 1e9, Work: 3e6, Unit: "iterations", Rate: 1e6},
			{Target: "container", Workload: "procs", QoS: 0, Threads: 1, Repeat: 1, EndNs: 1e9, Work: 3e6, Unit: "loops", Rate: 1e6},
			{Target: "container", Workload: "compress", Phase: "compress", QoS: 0, Threads: 1, Repeat: 1, EndNs: 1e9, Work: 3e6, Unit: "bytes", Rate: 3e6},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			charts, _ := Charts(Input{Samples: tc.samples})
			require.NotEmpty(t, charts)
			for _, c := range charts {
				for _, f := range Formats() {
					require.NoError(t, c.Render(io.Discard, f), "%s as %s", c.Name, f)
				}
			}
		})
	}
}

func TestLogTicks(t *testing.T) {
	ticks := logTicks{}.Ticks(0.009, 7)
	var labels []string
	for _, tk := range ticks {
		assert.GreaterOrEqual(t, tk.Value, 0.009)
		assert.LessOrEqual(t, tk.Value, 7.0)
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5"}, labels)

	var wide []string
	for _, tk := range (logTicks{}).Ticks(1, 1e7) {
		if tk.Label != "" {
			wide = append(wide, tk.Label)
		}
	}
	assert.Equal(t, []string{"1", "10", "100", "1000", "10000", "100000", "1000000", "10000000"}, wide, "powers of ten only over many decades")
}

func TestLinearTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		want   []string
	}{
		{0, 17.6, []string{"0", "5", "10", "15"}},
		{0, 1.08, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{0, 105, []string{"0", "20", "40", "60", "80", "100"}},
		{0, 2.9, []string{"0.0", "0.5", "1.0", "1.5", "2.0", "2.5"}},
	}
	for _, tc := range cases {
		var labels []string
		for _, tk := range (linearTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		assert.Equal(t, tc.want, labels, "%g..%g", tc.lo, tc.hi)
	}
}

func TestValueAxis(t *testing.T) {
	cases := []struct {
		name      string
		values    []float64
		zeroBased bool
		wantLog   bool
	}{
		{"narrow spread is linear from zero", []float64{5, 9, 12}, false, false},
		{"wide spread is log", []float64{1.1e6, 5e8}, false, true},
		{"bars stay linear", []float64{0.07, 35}, true, false},
		{"a zero forbids log", []float64{0, 5e8}, false, false},
		{"NaN ignored", []float64{math.NaN(), 3, 4}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlot("", "")
			got := valueAxis(&p.Y, tc.values, tc.zeroBased)
			assert.Equal(t, tc.wantLog, got)
			if !got {
				assert.Equal(t, 0.0, float64(p.Y.Min))
			}
			assert.Greater(t, float64(p.Y.Max), float64(p.Y.Min))
		})
	}
}

func TestBinHeat(t *testing.T) {
	// Two rows of 3000 boxes of 0.1 s, values alternating 0 and 1.
	var cells []heatCell
	for row := range 2 {
		for i := range 3000 {
			cells = append(cells, heatCell{x0: float64(i) * 0.1, x1: float64(i+1) * 0.1, row: row, v: float64(i % 2)})
		}
	}
	binned := binHeat(cells, 300)
	require.Len(t, binned, 2000, "1000 columns per row")
	for _, c := range binned {
		assert.InDelta(t, 0.5, c.v, 0.34, "a bin averages its boxes")
		assert.InDelta(t, 0.3, c.x1-c.x0, 1e-9)
	}
	few := cells[:10]
	assert.Equal(t, few, binHeat(few, 300), "few boxes are kept as they are")
}

func TestInFamily(t *testing.T) {
	cases := []struct {
		name, only string
		want       bool
	}{
		{"thread-times-fp-vm", "thread-times", true},
		{"thread-times-fp-vm", "thread-times-fp-vm", true},
		{"thread-times-fp-vm", "elapsed, thread-times", true},
		{"thread-times-fp-vm", "thread-times-fp-host", false},
		{"compression", "compression", true},
		{"telemetry-vm-guest", "telemetry", true},
		{"telemetry", "telemetry", true},
		{"elapsed-procs", "process-times", false},
		{"throughput-fp", "", false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, InFamily(tc.name, tc.only), "%s in %q", tc.name, tc.only)
	}
}
