package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/units"
)

// familyThroughput is the family of throughput against threads per compute workload.
const familyThroughput = "throughput"

func init() {
	register(family{name: familyThroughput, rank: 10, build: throughputCharts,
		lacks: "no thread-scaling workload (fp, int, mmul, pi) in this run"})
}

// throughputCharts draws, per compute workload, each repeat's total rate
// against its thread count with the fitted line R = a + b·T per (target,
// QoS), as reference 001's chart does: host and VM lines that coincide are
// the subsumption the tool looks for.
func throughputCharts(in Input) ([]Chart, []Skipped) {
	workloads := workloadsOf(in.Summary.Cells, isCompute)
	if len(workloads) == 0 {
		return nil, nil // the family's lacks says why
	}
	var out []Chart
	var skipped []Skipped
	for _, w := range workloads {
		cells := cellsOf(in.Summary.Cells, func(c analysis.Cell) bool { return c.Workload == w && c.Phase == "" })
		f, ok := throughputFigure(in, w, cells)
		if !ok {
			skipped = append(skipped, Skipped{stem(familyThroughput, w), "no repeat of " + w + " has a rate"})
			continue
		}
		out = append(out, chart(stem(familyThroughput, w), familyThroughput, f))
	}
	return out, skipped
}

func throughputFigure(in Input, workload string, cells []analysis.Cell) (*figure, bool) {
	var all []float64
	for _, c := range cells {
		all = append(all, c.TotalRates...)
	}
	if len(finite(all)) == 0 {
		return nil, false
	}
	unit, scale := units.ScaleRate(cells[0].Unit, maxFinite(all))
	list, others := seriesOf(cells)
	p := newPlot("threads", "")
	f := &figure{
		title: fmt.Sprintf("%s: total rate against threads, host vs VM at each QoS", workload),
		subtitle: runText(in) + "One point per repeat (all threads' work over first start to last end); " +
			"lines: least-squares fit R = a + b·T per target and QoS.",
	}
	var scaled []float64
	for _, s := range list {
		var xys plotter.XYs
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range cells {
			if c.Target != s.target || c.QoS != s.qos {
				continue
			}
			for _, r := range c.TotalRates {
				if math.IsNaN(r) || math.IsInf(r, 0) {
					continue
				}
				xys = append(xys, plotter.XY{X: float64(c.Threads), Y: r / scale})
				scaled = append(scaled, r/scale)
			}
			lo, hi = min(lo, float64(c.Threads)), max(hi, float64(c.Threads))
		}
		if len(xys) == 0 {
			continue
		}
		pts := &plotter.Scatter{XYs: xys, GlyphStyle: glyphStyle(s.target, others, s.qos)}
		entry := legendEntry{thumbs: []plot.Thumbnailer{glyphThumb{pts.GlyphStyle}}}
		reg, ok := regressionFor(in.Summary.Regressions, s.target, workload, s.qos)
		entry.text = seriesText(s.target, s.qos) + ": no fit (one thread count)"
		if ok && reg.ThreadCounts > 1 {
			entry.text = fmt.Sprintf("%s: no fit (%d thread counts; a line needs %d)", seriesText(s.target, s.qos), reg.ThreadCounts, analysis.MinThreadCounts)
		}
		if ok && !math.IsNaN(float64(reg.A)) && !math.IsNaN(float64(reg.B)) {
			line := &plotter.Line{XYs: fitPoints(reg.Regression, lo, hi, scale), LineStyle: lineStyle(s.target, others, s.qos)}
			if len(line.XYs) >= 2 {
				p.Add(line)
			}
			entry.thumbs = append([]plot.Thumbnailer{lineThumb{line.LineStyle}}, entry.thumbs...)
			// The printed form of summary.md and reference 001: "Host QoS
			// 33: R = (1.411 x 10^7) + (1.4784 x 10^8).T".
			entry.text = render.Regression(render.RegressionLabel(reg), reg.Regression)
			if !math.IsNaN(float64(reg.R2)) {
				entry.text += fmt.Sprintf(", R² %.2f", reg.R2)
			}
		}
		p.Add(pts)
		f.legend = append(f.legend, entry)
	}
	isLog := valueAxis(&p.Y, scaled, false)
	p.Y.Label.Text = "total rate (" + unit + logNote(isLog) + ")"
	countAxis(&p.X, threadCounts(cells))
	f.panels = []panel{{plot: p, height: 5.2 * vg.Inch}}
	return f, true
}

func regressionFor(regs []analysis.ClassRegression, target, workload string, class int) (analysis.ClassRegression, bool) {
	for _, r := range regs {
		if r.Target == target && r.Workload == workload && r.Phase == "" && r.QoS == class {
			return r, true
		}
	}
	return analysis.ClassRegression{}, false
}

// fitPoints samples the line a + b·T over [lo, hi], in steps fine enough to
// draw it curved on a log axis, dropping points at or below zero, which a
// log axis cannot show and a rate never is.
func fitPoints(r analysis.Regression, lo, hi, scale float64) plotter.XYs {
	const steps = 48
	var xys plotter.XYs
	for i := 0; i <= steps; i++ {
		x := lo + (hi-lo)*float64(i)/steps
		if y := (float64(r.A) + float64(r.B)*x) / scale; y > 0 {
			xys = append(xys, plotter.XY{X: x, Y: y})
		}
	}
	return xys
}

func finite(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

func maxFinite(xs []float64) float64 {
	m := 0.0
	for _, x := range finite(xs) {
		m = max(m, math.Abs(x))
	}
	return m
}
