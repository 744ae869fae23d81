package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
)

// familyMechanism is the family of CPU share against speed per CPU-second per compute workload.
const familyMechanism = "mechanism"

func init() {
	register(family{name: familyMechanism, rank: 20, build: mechanismCharts,
		lacks: "no thread-scaling workload (fp, int, mmul, pi) in this run"})
}

// mechanismCharts draws, per compute workload whose records carry CPU time
// (results schema 1.2), each repeat's CPU share against its speed per
// CPU-second, a panel per target, host above VM: what happened to the
// threads behind the verdict. A class kept off the CPU moves left (a
// contended Linux host's background class); a class sent to slower cores
// moves down (Apple silicon's); in a VM the classes sit together.
func mechanismCharts(in Input) ([]Chart, []Skipped) {
	workloads := workloadsOf(in.Summary.Cells, isCompute)
	if len(workloads) == 0 {
		return nil, nil // the family's lacks says why
	}
	var out []Chart
	var skipped []Skipped
	for _, w := range workloads {
		cells := cellsOf(in.Summary.Cells, func(c analysis.Cell) bool { return c.Workload == w && c.Phase == "" && c.CPUShare.N > 0 })
		name := stem(familyMechanism, w)
		if len(cells) == 0 {
			skipped = append(skipped, Skipped{name, "the records of " + w + " carry no CPU time (a run written before results schema 1.2)"})
			continue
		}
		out = append(out, chart(name, familyMechanism, mechanismFigure(in, w, cells)))
	}
	return out, skipped
}

func mechanismFigure(in Input, workload string, cells []analysis.Cell) *figure {
	list, others := seriesOf(cells)
	f := &figure{
		title: fmt.Sprintf("%s: CPU share against speed per CPU-second, host and VM at each QoS", workload),
		subtitle: runText(in) + "One point per repeat: its threads' CPU time over their wall time (x), and their work per CPU-second " +
			"over the median of the highest class on the same target at the same thread count (y). " +
			"A thread's rate is the one times the other: a class kept off the CPU moves left, a class on slower cores moves down.",
	}
	var shares []float64
	var panels []*plot.Plot
	for _, target := range targetOrder(targetsOf(cells)) {
		p := newPlot("", "")
		var speeds []float64
		for _, s := range list {
			if s.target != target {
				continue
			}
			xys := shareSpeedPoints(cells, s)
			if len(xys) == 0 {
				continue
			}
			pts := &plotter.Scatter{XYs: xys, GlyphStyle: glyphStyle(s.target, others, s.qos)}
			p.Add(pts)
			for _, xy := range xys {
				shares, speeds = append(shares, xy.X), append(speeds, xy.Y)
			}
			f.legend = append(f.legend, legendEntry{text: seriesText(s.target, s.qos), thumbs: []plot.Thumbnailer{glyphThumb{pts.GlyphStyle}}})
		}
		p.Y.Label.Text = "speed / highest class's (" + render.TargetLabel(target) + logNote(valueAxis(&p.Y, append(speeds, 1), false)) + ")"
		panels = append(panels, p)
	}
	for _, p := range panels {
		p.X.Label.Text = "CPU share (CPU time / wall time" + logNote(valueAxis(&p.X, append(shares, 1), false)) + ")"
	}
	for _, p := range panels {
		f.panels = append(f.panels, panel{plot: p, height: 3.2 * vg.Inch})
	}
	return f
}

// shareSpeedPoints are series s's repeats as (share, relative speed): the
// speed over the median speed of the highest class on the same target and
// thread count, so that host and VM, whose speeds differ by emulation,
// read alike.
func shareSpeedPoints(cells []analysis.Cell, s series) plotter.XYs {
	var xys plotter.XYs
	for _, c := range cells {
		if c.Target != s.target || c.QoS != s.qos {
			continue
		}
		ref := highestSpeed(cells, c)
		for i := range c.CPUShares {
			sh, sp := float64(c.CPUShares[i]), float64(c.Speeds[i])
			if !(sh > 0) || !(sp > 0) || math.IsInf(sh, 0) || math.IsInf(sp, 0) || !(ref > 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: sh, Y: sp / ref})
		}
	}
	return xys
}

// highestSpeed is the median speed of the highest class run beside c (same
// target and thread count), c's own when it is that class.
func highestSpeed(cells []analysis.Cell, c analysis.Cell) float64 {
	best := c
	for _, o := range cells {
		if o.Target == c.Target && o.Threads == c.Threads && o.QoS > best.QoS && o.Speed.N > 0 {
			best = o
		}
	}
	return float64(best.Speed.Median)
}

// targetsOf are the targets of cells, in first appearance.
func targetsOf(cells []analysis.Cell) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cells {
		if !seen[c.Target] {
			seen[c.Target] = true
			out = append(out, c.Target)
		}
	}
	return out
}
