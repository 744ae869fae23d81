// Package plot draws a run's charts (throughput, thread and process
// completion times, compression times, elapsed times, telemetry timelines)
// with gonum/plot.
package plot

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/suggest"
	"github.com/qoslab/qoslab/internal/telemetry"
)

// Input is what the charts are drawn from: one run's samples, their
// analysis, and its telemetry (none when the run recorded none).
type Input struct {
	// Name is the run's name, shown in subtitles; may be empty.
	Name    string
	Samples []results.Sample
	// Summary is summary.Analyze(Samples, "host", "vm"); when it has no
	// cells but Samples has records, Charts computes it.
	Summary   summary.Summary
	Telemetry []telemetry.Sample
}

// Chart is one chart, ready to render in any of Formats.
type Chart struct {
	// Name is the chart's file stem and --only key: "throughput-fp",
	// "thread-times-fp-host", "process-times", "compression", "elapsed-fp",
	// "telemetry-vm-guest".
	Name string
	// Family is the group Name belongs to, one of Families().
	Family string
	// Title says what the chart compares.
	Title string
	// Notes say what the chart leaves out and why (a panel without data),
	// as the chart itself prints them.
	Notes []string

	fig *figure
}

// Skipped is a chart that was not drawn because the run has no data for it.
type Skipped struct{ Name, Reason string }

// family is one family of a run's charts, as the file that draws it
// registers it (register, from its init): a new chart is its file, and
// nothing else here lists it.
type family struct {
	// name is the family's name: its charts' file stems start with it
	// (stem), and --only takes it.
	name string
	// rank places the family in Families and Charts: ascending, with room
	// between (10, 20, ...) for a family to go between two others.
	rank int
	// lacks says what the family needs that the run does not have, the
	// reason Charts gives when build returns no chart and no skip.
	lacks string
	// build draws the family's charts from the input, and skips with a
	// reason those it cannot draw; nothing at all when the run has none of
	// what the family needs (lacks).
	build func(Input) ([]Chart, []Skipped)
}

// families are the registered families, in rank order.
var families []family

// register adds a chart family. A name or rank registered twice, or a
// family without a build or lacks, is a programming error: it panics at
// start-up, before any chart is drawn.
func register(f family) {
	if f.name == "" || f.build == nil || f.lacks == "" {
		panic(fmt.Sprintf("plot: chart family %q registered without a name, build or lacks", f.name))
	}
	for _, g := range families {
		if g.name == f.name {
			panic(fmt.Sprintf("plot: chart family %q registered twice", f.name))
		}
		if g.rank == f.rank {
			panic(fmt.Sprintf("plot: chart families %q and %q both have rank %d: give each its own", g.name, f.name, f.rank))
		}
	}
	families = append(families, f)
	slices.SortStableFunc(families, func(a, b family) int { return a.rank - b.rank })
}

// Families returns the chart families, the names --only takes besides exact
// chart names, in the order Charts returns their charts.
func Families() []string {
	out := make([]string, len(families))
	for i, f := range families {
		out[i] = f.name
	}
	return out
}

// Formats returns the file formats Render writes.
func Formats() []string { return []string{"png", "svg", "pdf"} }

// Charts builds every chart the input has data for, family by family in
// Families order, and says which charts it skipped and why. It draws
// nothing yet: Render does.
func Charts(in Input) ([]Chart, []Skipped) {
	if len(in.Summary.Cells) == 0 && len(in.Samples) > 0 {
		in.Summary = summary.Analyze(in.Samples, "host", "vm")
	}
	var charts []Chart
	var skipped []Skipped
	for _, f := range families {
		c, s := f.build(in)
		if len(c) == 0 && len(s) == 0 {
			s = []Skipped{{f.name, f.lacks}}
		}
		charts = append(charts, c...)
		skipped = append(skipped, s...)
	}
	return charts, skipped
}

// Select returns the charts only names: a comma-separated list of families
// and exact chart names; empty selects every chart. A family this run has
// no chart of selects nothing (Charts' Skipped says why; InFamily picks
// those notes out). A name that is neither a family nor a chart of this run
// is an error that lists what is allowed.
func Select(charts []Chart, only string) ([]Chart, error) {
	if strings.TrimSpace(only) == "" {
		return charts, nil
	}
	var names []string
	for _, c := range charts {
		names = append(names, c.Name)
	}
	for _, w := range splitOnly(only) {
		if slices.Contains(Families(), w) || slices.Contains(names, w) {
			continue
		}
		msg := fmt.Sprintf("unknown chart %q", w)
		if s := suggest.Closest(w, append(Families(), names...)); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return nil, fmt.Errorf("%s: --only takes a family (%s) or a chart of this run (%s)",
			msg, strings.Join(Families(), ", "), orNone(names))
	}
	out := []Chart{}
	for _, c := range charts {
		if InFamily(c.Name, only) {
			out = append(out, c)
		}
	}
	return out, nil
}

// InFamily reports whether only (as Select takes it) selects the chart, or
// the skipped chart, called name: only names it, or names its family.
func InFamily(name, only string) bool {
	fam := familyOf(name)
	for _, w := range splitOnly(only) {
		if w == name || w == fam {
			return true
		}
	}
	return false
}

// familyOf is the family a chart name belongs to ("thread-times" for
// "thread-times-fp-vm"), or "" for none.
func familyOf(name string) string {
	for _, f := range Families() {
		if name == f || strings.HasPrefix(name, f+"-") {
			return f
		}
	}
	return ""
}

func splitOnly(only string) []string {
	var out []string
	for _, w := range strings.Split(only, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Size is the chart's size: chartWidth wide, as tall as its parts need.
func (c Chart) Size() (w, h vg.Length) {
	if c.fig == nil {
		return 0, 0
	}
	return chartWidth, c.fig.height()
}

// Render writes the chart in format (one of Formats): PNG 1200 px wide, or
// SVG or PDF of the same size in points (10 in wide).
func (c Chart) Render(w io.Writer, format string) (err error) {
	if c.fig == nil {
		return fmt.Errorf("render chart %q: it has nothing to draw (a zero Chart; build charts with Charts)", c.Name)
	}
	if err := checkFormat(format); err != nil {
		return fmt.Errorf("render chart %q: %w", c.Name, err)
	}
	width, height := c.Size()
	var canvas interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI))}
	case "svg":
		canvas = vgsvg.New(width, height)
	case "pdf":
		canvas = vgpdf.New(width, height)
	}
	// gonum panics on some degenerate inputs (a log axis meeting a value
	// <= 0, an empty range); one bad chart must cost that chart, not the
	// report.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("render chart %q as %s: %v", c.Name, format, r)
		}
	}()
	c.fig.draw(draw.New(canvas))
	if _, err := canvas.WriteTo(w); err != nil {
		return fmt.Errorf("render chart %q as %s: %w", c.Name, format, err)
	}
	return nil
}

func checkFormat(format string) error {
	if slices.Contains(Formats(), format) {
		return nil
	}
	msg := fmt.Sprintf("unknown chart format %q", format)
	if s := suggest.Closest(format, Formats()); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return fmt.Errorf("%s: use one of %s", msg, strings.Join(Formats(), ", "))
}

// WriteAll renders each chart into dir/<name>.<format>, creating dir, each
// file replaced atomically, and returns the paths written. It stops at the
// first chart that fails, having written the ones before it.
func WriteAll(dir string, charts []Chart, format string) ([]string, error) {
	if err := checkFormat(format); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: charts are readable by others, as the files in them (0644)
		return nil, fmt.Errorf("write charts: %w", err)
	}
	var paths []string
	for _, c := range charts {
		var buf bytes.Buffer
		if err := c.Render(&buf, format); err != nil {
			return paths, err
		}
		path := filepath.Join(dir, c.Name+"."+format)
		if err := atomicfile.Write(path, buf.Bytes()); err != nil {
			return paths, fmt.Errorf("write chart %q: %w", c.Name, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// chart wraps a figure as a Chart.
func chart(name, family string, f *figure) Chart {
	return Chart{Name: name, Family: family, Title: f.title, Notes: f.notes, fig: f}
}

// runText is the subtitle's mention of the run.
func runText(in Input) string {
	if in.Name == "" {
		return ""
	}
	return "Run " + in.Name + ". "
}
