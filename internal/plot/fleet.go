package plot

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/units"
)

// familyCompare is the family of the charts across runs (CompareCharts).
const familyCompare = "compare"

// CompareCharts draws the charts of an N-way comparison: first the fleet
// chart per judged workload, a row per machine (fleetCharts); then, one
// machine (run) per position on the x axis, the subsumption index of every
// judged workload with its interval, and per workload the host and VM
// rates at each class.
func CompareCharts(c *compare.Comparison) ([]Chart, []Skipped) {
	out, skipped := fleetCharts(c)
	labels := make([]string, len(c.Columns))
	for i, col := range c.Columns {
		labels[i] = col.Heading()
		if i == 0 {
			labels[i] += " (baseline)"
		}
	}
	ticks, key := runTicks(labels)
	var si []compare.FindingRow
	for _, f := range c.Findings {
		if f.Kind == compare.KindSubsumption {
			si = append(si, f)
		}
	}
	if len(si) == 0 {
		skipped = append(skipped, Skipped{"compare-subsumption", "no run has a subsumption index (it needs a workload run at two classes on both the host and a VM, with a QoS effect on the host)"})
	} else {
		f := subsumptionFigure(ticks, si)
		f.notes = append(f.notes, key...)
		out = append(out, chart("compare-subsumption", familyCompare, f))
	}
	var workloads []string
	for _, r := range c.Rows {
		if r.Phase == "" && !slices.Contains(workloads, r.Workload) {
			workloads = append(workloads, r.Workload)
		}
	}
	for _, w := range workloads {
		f, ok := ratesFigure(ticks, c.Rows, w)
		if !ok {
			skipped = append(skipped, Skipped{stem("compare-rates", w), "no thread count of " + w + " was run by every run"})
			continue
		}
		f.notes = append(f.notes, key...)
		out = append(out, chart(stem("compare-rates", w), familyCompare, f))
	}
	return out, skipped
}

// seriesShapes tell the series of a chart apart besides their colour.
var seriesShapes = []string{"diamond", "ring", "square", "triangle", "cross", "plus"}

// subsumptionFigure: SI per machine, a series per workload, whiskers its
// interval; the band between 1 - EquivalenceMargin and 1 is where QoS is
// lost in the VM.
func subsumptionFigure(labels []string, rows []compare.FindingRow) *figure {
	p := newPlot("", "subsumption index")
	p.NominalX(labels...)
	p.X.Tick.Label.Font = sans(tickSize)
	f := &figure{
		title: "Subsumption index per machine",
		subtitle: "SI = 1 - ln(VM ratio)/ln(host ratio), the ratios being the rate at the highest class over the lowest: 1 means QoS is subsumed in the VM, 0 that the VM keeps the host's effect. " +
			"Point: the Hodges-Lehmann estimate; whisker: its 95% interval. " +
			"Series are spread a little sideways so that whiskers do not overlap.",
	}
	var values []float64
	for i, r := range rows {
		var xys plotter.XYs
		var errs plotter.YErrors
		for j, v := range r.Values {
			if !v.Present {
				continue
			}
			lo, hi := float64(v.Low), float64(v.High)
			if math.IsNaN(lo) || math.IsNaN(hi) {
				lo, hi = float64(v.Median), float64(v.Median)
			}
			xys = append(xys, plotter.XY{X: float64(j) + dodge(i, len(rows), 0.3), Y: float64(v.Median)})
			errs = append(errs, struct{ Low, High float64 }{float64(v.Median) - lo, hi - float64(v.Median)})
			values = append(values, lo, hi, float64(v.Median))
		}
		if len(xys) == 0 {
			continue
		}
		col := threadColor(i)
		gs := draw.GlyphStyle{Color: col, Radius: vg.Points(markerSize), Shape: marker{shape: seriesShapes[i%len(seriesShapes)]}}
		ls := draw.LineStyle{Color: col, Width: vg.Points(1.6)}
		eb := &plotter.YErrorBars{XYs: xys, YErrors: errs, LineStyle: ls, CapWidth: vg.Points(10)}
		pts := &plotter.Scatter{XYs: xys, GlyphStyle: gs}
		p.Add(eb, pts)
		f.legend = append(f.legend, legendEntry{text: render.WorkloadText(r.Workload, r.Phase), thumbs: []plot.Thumbnailer{lineThumb{ls}, glyphThumb{gs}}})
	}
	values = append(values, 0, 1)
	lo, hi := slices.Min(values), slices.Max(values)
	pad := 0.05 * (hi - lo)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5
	f.panels = []panel{{plot: p, height: 4.5 * vg.Inch}}
	return f
}

// ratesFigure: per machine, the median total rate of every (target, class)
// series of workload w at the largest thread count every run has, with its
// interval; false when no thread count is in every run.
func ratesFigure(labels []string, rows []compare.Row, w string) (*figure, bool) {
	sel, threads := sharedRows(rows, w)
	if len(sel) == 0 {
		return nil, false
	}
	cells := make([]analysis.Cell, len(sel)) // one per series, for seriesOf
	for i, r := range sel {
		cells[i] = analysis.Cell{CellKey: r.CellKey}
	}
	list, others := seriesOf(cells)
	var lo, hi float64 = math.Inf(1), 0
	for _, r := range sel {
		for _, v := range r.Values {
			if v.Present && v.Median > 0 {
				lo, hi = min(lo, float64(v.Median)), max(hi, float64(v.Median))
			}
		}
	}
	unit, scale := units.ScaleRate(sel[0].Unit, math.Sqrt(lo*hi))
	p := newPlot("", "")
	p.NominalX(labels...)
	p.X.Tick.Label.Font = sans(tickSize)
	f := &figure{
		title: fmt.Sprintf("%s: rate per machine at each class, host and VM, at %s", w, units.Plural(threads, "thread")),
		subtitle: "Point: median total rate over the run's repeats; whisker: the median's 95% interval. A class a run lacks has no point. " +
			"Series are spread a little sideways so that whiskers do not overlap.",
	}
	var values []float64
	for i, s := range list {
		xys, errs, ends := seriesRates(sel, s, dodge(i, len(list), 0.4), scale)
		values = append(values, ends...)
		if len(xys) == 0 {
			continue
		}
		ls := lineStyle(s.target, others, s.qos)
		ls.Dashes = nil
		ls.Width = vg.Points(1.6)
		eb := &plotter.YErrorBars{XYs: xys, YErrors: errs, LineStyle: ls, CapWidth: vg.Points(8)}
		pts := &plotter.Scatter{XYs: xys, GlyphStyle: glyphStyle(s.target, others, s.qos)}
		p.Add(eb, pts)
		f.legend = append(f.legend, legendEntry{text: seriesText(s.target, s.qos), thumbs: []plot.Thumbnailer{glyphThumb{pts.GlyphStyle}}})
	}
	isLog := valueAxis(&p.Y, values, false)
	p.Y.Label.Text = "total rate (" + unit + logNote(isLog) + ")"
	p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5
	f.panels = []panel{{plot: p, height: 5 * vg.Inch}}
	return f, true
}

// sharedRows are workload w's rows without a phase at the largest thread
// count that every run has a cell of, and that count; none when no
// thread count is in every run.
func sharedRows(rows []compare.Row, w string) (sel []compare.Row, threads int) {
	var mine []compare.Row
	inAll := map[int]bool{}
	for _, r := range rows {
		if r.Workload != w || r.Phase != "" {
			continue
		}
		mine = append(mine, r)
		all := true
		for _, v := range r.Values {
			all = all && v.Present
		}
		if all {
			inAll[r.Threads] = true
		}
	}
	if len(inAll) == 0 {
		return nil, 0
	}
	for t := range inAll {
		threads = max(threads, t)
	}
	for _, r := range mine {
		if r.Threads == threads {
			sel = append(sel, r)
		}
	}
	return sel, threads
}

// seriesRates are series s's points, one per run that has its cell with
// a rate, at the run's position moved by dx, each with its interval as a
// whisker (none when it has no interval), in rate units of scale; ends
// are the whiskers' ends, for the axis.
func seriesRates(sel []compare.Row, s series, dx, scale float64) (xys plotter.XYs, errs plotter.YErrors, ends []float64) {
	for _, r := range sel {
		if r.Target != s.target || r.QoS != s.qos {
			continue
		}
		for j, v := range r.Values {
			if !v.Present || v.Median <= 0 {
				continue
			}
			m := float64(v.Median) / scale
			lo, hi := float64(v.Low)/scale, float64(v.High)/scale
			if math.IsNaN(lo) || math.IsNaN(hi) {
				lo, hi = m, m
			}
			xys = append(xys, plotter.XY{X: float64(j) + dx, Y: m})
			errs = append(errs, struct{ Low, High float64 }{m - lo, hi - m})
			ends = append(ends, lo, hi)
		}
	}
	return xys, errs, ends
}

// maxTickLines is how many lines a run's label may take under the x axis
// before the chart names its runs in a key instead.
const maxTickLines = 3

// runTicks are the x axis labels of a chart with one position per run,
// which must never run into each other: each run's label wrapped at spaces
// to the width of its position, when every one fits in maxTickLines lines;
// otherwise short names ("#1", "#2") and a key, a note under the chart,
// naming each run in full. When even the short names cannot all fit (50
// runs), only every k-th run's is written (#5, #10, ..., and #1), k the
// smallest of 2, 5, 10, ... that gives them room; the rest are unlabelled
// ticks.
func runTicks(labels []string) (ticks, key []string) {
	sty := textStyle(tickSize)
	// The data area is the figure's width less the margins and the y axis
	// (about 90 points with its label and ticks); each run has an equal
	// part of it, and a little space between neighbours.
	per := (chartWidth - vg.Points(2*margin+90)) / vg.Length(max(1, len(labels)))
	slot := per - vg.Points(12)
	ticks = make([]string, len(labels))
	fits := true
	for i, l := range labels {
		lines := wrap(l, sty, slot)
		for _, line := range lines {
			fits = fits && sty.Width(line) <= slot
		}
		fits = fits && len(lines) <= maxTickLines
		ticks[i] = strings.Join(lines, "\n")
	}
	if fits {
		return ticks, nil
	}
	parts := make([]string, len(labels))
	for i, l := range labels {
		ticks[i] = "#" + strconv.Itoa(i+1)
		parts[i] = ticks[i] + ": " + l
	}
	stride := tickStride(sty.Width(ticks[len(ticks)-1]), per)
	for i := range ticks {
		if stride > 1 && (i+1)%stride != 0 && (i != 0 || stride < 3) {
			ticks[i] = ""
		}
	}
	return ticks, []string{"Runs: " + strings.Join(parts, "; ") + "."}
}

// tickStride is how many runs apart short names must be for the widest,
// widest, to fit between them with a little space, each run per wide: 1,
// 2, 5, 10, 20, 50, ...
func tickStride(widest, per vg.Length) int {
	for k := 1; ; k *= 10 {
		for _, m := range []int{1, 2, 5} {
			if vg.Length(k*m)*per-vg.Points(6) >= widest {
				return k * m
			}
		}
	}
}
