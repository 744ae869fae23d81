package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// familyElapsed is the family of elapsed time against threads per workload.
const familyElapsed = "elapsed"

func init() {
	register(family{name: familyElapsed, rank: 60, build: elapsedCharts,
		lacks: "no thread-scaling workload (fp, int, mmul, pi) or procs in this run"})
}

// elapsedCharts draws, per thread-scaling workload (and procs, against its
// process count), the time a repeat took against the thread count: the
// table of reference 003 and the first chart of reference 004 as lines, one
// per (target, QoS).
func elapsedCharts(in Input) ([]Chart, []Skipped) {
	workloads := workloadsOf(in.Summary.Cells, func(w string) bool { return isCompute(w) || w == catalog.Procs })
	if len(workloads) == 0 {
		return nil, nil // the family's lacks says why
	}
	var out []Chart
	var skipped []Skipped
	timed := durationWorkloads(in.Samples)
	for _, w := range workloads {
		if d, ok := timed[w]; ok {
			skipped = append(skipped, Skipped{stem(familyElapsed, w), durationReason(w, d)})
			continue
		}
		cells := cellsOf(in.Summary.Cells, func(c analysis.Cell) bool {
			return c.Workload == w && c.Phase == "" && c.Seconds.N > 0 && !math.IsNaN(float64(c.Seconds.Median))
		})
		name := stem(familyElapsed, w)
		if len(cells) == 0 {
			skipped = append(skipped, Skipped{name, "no repeat of " + w + " has a time"})
			continue
		}
		out = append(out, chart(name, familyElapsed, elapsedFigure(in, w, cells)))
	}
	return out, skipped
}

func elapsedFigure(in Input, name string, cells []analysis.Cell) *figure {
	what := "threads"
	if name == catalog.Procs {
		what = "processes"
	}
	list, others := seriesOf(cells)
	repeats := 0
	for _, c := range cells {
		repeats = max(repeats, c.Seconds.N)
	}
	p := newPlot(what+" in the cell", "")
	f := &figure{
		title: fmt.Sprintf("%s: elapsed time against %s, host vs VM at each QoS", name, what),
		subtitle: runText(in) + fmt.Sprintf("Point: median over %d repeats of the time from first start to last end; whisker: fastest to slowest repeat. ", repeats) +
			"Series are spread a little sideways at each count so that whiskers do not overlap.",
	}
	var values []float64
	for i, s := range list {
		var xys plotter.XYs
		var errs plotter.YErrors
		for _, c := range cells {
			if c.Target != s.target || c.QoS != s.qos {
				continue
			}
			x := float64(c.Threads) + dodge(i, len(list), 0.3)
			xys = append(xys, plotter.XY{X: x, Y: float64(c.Seconds.Median)})
			errs = append(errs, struct{ Low, High float64 }{float64(c.Seconds.Median - c.Seconds.Min), float64(c.Seconds.Max - c.Seconds.Median)})
			values = append(values, float64(c.Seconds.Min), float64(c.Seconds.Max))
		}
		if len(xys) == 0 {
			continue
		}
		sortXY(xys, errs)
		ls := lineStyle(s.target, others, s.qos)
		if len(xys) >= 2 {
			p.Add(&plotter.Line{XYs: xys, LineStyle: ls})
		}
		eb := &plotter.YErrorBars{XYs: xys, YErrors: errs, LineStyle: ls, CapWidth: vg.Points(10)}
		eb.Dashes = nil // a dashed whisker reads as a gap
		eb.Width = vg.Points(1.6)
		pts := &plotter.Scatter{XYs: xys, GlyphStyle: glyphStyle(s.target, others, s.qos)}
		p.Add(eb, pts)
		f.legend = append(f.legend, legendEntry{text: seriesText(s.target, s.qos), thumbs: []plot.Thumbnailer{lineThumb{ls}, glyphThumb{pts.GlyphStyle}}})
	}
	isLog := valueAxis(&p.Y, values, false)
	p.Y.Label.Text = "elapsed time per repeat (s" + logNote(isLog) + ")"
	countAxis(&p.X, threadCounts(cells))
	f.panels = []panel{{plot: p, height: 5.2 * vg.Inch}}
	return f
}

// sortXY orders points (and their errors alongside) by x, so that the line
// through them runs left to right.
func sortXY(xys plotter.XYs, errs plotter.YErrors) {
	for i := 1; i < len(xys); i++ {
		for j := i; j > 0 && xys[j].X < xys[j-1].X; j-- {
			xys[j], xys[j-1] = xys[j-1], xys[j]
			errs[j], errs[j-1] = errs[j-1], errs[j]
		}
	}
}
