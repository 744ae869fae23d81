package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// familyCompression is the family of compression times, host against VM.
const familyCompression = "compression"

func init() {
	register(family{name: familyCompression, rank: 50, build: compressionCharts,
		lacks: "no compress or decompress workload in this run"})
}

// compressionCharts draws compression and decompression times as grouped
// bars, host beside VM at each QoS, with min–max whiskers, as reference
// 001 reports them: a VM whose times do not move with QoS while the host's
// do is capped by something other than the CPU (its virtual disk).
func compressionCharts(in Input) ([]Chart, []Skipped) {
	cells := cellsOf(in.Summary.Cells, func(c analysis.Cell) bool {
		return isCompression(c.Workload) && c.Seconds.N > 0 && !math.IsNaN(float64(c.Seconds.Median))
	})
	if len(cells) == 0 {
		return nil, nil // the family's lacks says why
	}
	return []Chart{chart(familyCompression, familyCompression, compressionFigure(in, cells))}, nil
}

func compressionFigure(in Input, cells []analysis.Cell) *figure {
	groups := barGroups(cells)
	list, others := seriesOf(cells)
	var targets []string
	var classes []int
	for _, s := range list {
		if !slices.Contains(targets, s.target) {
			targets = append(targets, s.target)
		}
		if !slices.Contains(classes, s.qos) {
			classes = append(classes, s.qos)
		}
	}
	slices.Sort(classes)
	manyCounts := len(threadCounts(cells)) > 1

	p := newPlot("workload and QoS class", "")
	f := &figure{
		title:    "Compression and decompression times: host vs VM at each QoS",
		subtitle: runText(in) + "Bar and figure: median time of a repeat, first start to last end; whisker: fastest to slowest repeat.",
	}
	const groupWidth = 0.7
	barWidth := groupWidth / float64(len(targets))
	var ticks plot.ConstantTicks
	var tops, medians []float64
	repeats := 0
	for gi, g := range groups {
		label := render.WorkloadText(g.workload, g.phase) + "\n" + qosText(g.qos)
		if g.params != "" {
			label += "\n" + g.params
		}
		if manyCounts {
			label += "\n" + strconv.Itoa(g.threads) + " threads"
		}
		ticks = append(ticks, plot.Tick{Value: float64(gi), Label: label})
		for ti, t := range targets {
			i := slices.IndexFunc(cells, func(c analysis.Cell) bool {
				return c.Target == t && c.Workload == g.workload && c.Phase == g.phase && c.Params == g.params && c.QoS == g.qos && c.Threads == g.threads
			})
			if i < 0 {
				continue // this target did not run the group: no bar, rather than a zero one
			}
			c := cells[i]
			repeats = max(repeats, c.Seconds.N)
			x := float64(gi) + dodge(ti, len(targets), groupWidth-barWidth)
			p.Add(&bar{
				x: x, width: barWidth * 0.92, y: float64(c.Seconds.Median),
				fill:    targetColor(t, others),
				outline: draw.LineStyle{Color: color.Black, Width: vg.Points(1.6), Dashes: qosDashes(g.qos)},
			})
			p.Add(&whisker{x: x, lo: float64(c.Seconds.Min), hi: float64(c.Seconds.Max), mid: float64(c.Seconds.Median)})
			tops = append(tops, float64(c.Seconds.Max))
			medians = append(medians, float64(c.Seconds.Median))
		}
	}
	f.legend = barLegend(targets, classes, repeats, others)
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	p.X.Tick.Length = 0
	timeAxis(f, p, medians, tops)
	f.panels = []panel{{plot: p, height: 5 * vg.Inch}}
	return f
}

// barGroup is one bar cluster: a workload (and phase, and set of
// parameters where its cells carry them: analysis.CellKey.Params) at one
// QoS and thread count.
type barGroup struct {
	workload, phase, params string
	qos, threads            int
}

// barGroups are the clusters of cells in the order they are drawn:
// compress before decompress, each by phase in the order they ran, then
// thread count, then class ascending.
func barGroups(cells []analysis.Cell) []barGroup {
	var groups []barGroup
	for _, w := range []string{catalog.Compress, catalog.Decompress} {
		var mine []barGroup
		var phases []string // in the order they ran
		for _, c := range cells {
			g := barGroup{c.Workload, c.Phase, c.Params, c.QoS, c.Threads}
			if c.Workload == w && !slices.Contains(mine, g) {
				mine = append(mine, g)
			}
			if c.Workload == w && !slices.Contains(phases, c.Phase) {
				phases = append(phases, c.Phase)
			}
		}
		slices.SortStableFunc(mine, func(a, b barGroup) int {
			if pa, pb := slices.Index(phases, a.phase), slices.Index(phases, b.phase); pa != pb {
				return pa - pb
			}
			if c := analysis.CompareParams(a.params, b.params); c != 0 {
				return c
			}
			if a.threads != b.threads {
				return a.threads - b.threads
			}
			return a.qos - b.qos
		})
		groups = append(groups, mine...)
	}
	return groups
}

// barLegend is a fill per target and an outline per QoS class.
func barLegend(targets []string, classes []int, repeats int, others []string) []legendEntry {
	var out []legendEntry
	for _, t := range targets {
		out = append(out, legendEntry{
			text:   fmt.Sprintf("%s: median of %d repeats, whisker min–max", render.TargetLabel(t), repeats),
			thumbs: []plot.Thumbnailer{swatch{fill: targetColor(t, others), outline: draw.LineStyle{Color: color.Black, Width: vg.Points(1)}}},
		})
	}
	for _, q := range classes {
		out = append(out, legendEntry{
			text:   qosText(q) + " (bar outline)",
			thumbs: []plot.Thumbnailer{swatch{fill: color.White, outline: draw.LineStyle{Color: color.Black, Width: vg.Points(1.6), Dashes: qosDashes(q)}}},
		})
	}
	return out
}

// timeAxis sets p's y axis of times. One wild repeat (a 35 s compression
// among 6 s ones) would squash every bar to the floor: the axis stops at
// 2.5 times the largest median, and a whisker that runs past it is cut
// with an arrow and its value printed, which f's notes say.
func timeAxis(f *figure, p *plot.Plot, medians, tops []float64) {
	limit := 2.5 * maxFinite(medians)
	if lim := maxFinite(tops); lim < limit {
		limit = lim
	}
	valueAxis(&p.Y, []float64{0, limit}, true)
	p.Y.Max = limit * 1.1
	if maxFinite(tops) > p.Y.Max {
		f.notes = append(f.notes, "a whisker that ends in an arrow runs past the top of the axis; its slowest repeat is printed beside the arrow.")
	}
	p.Y.Label.Text = "time per repeat (s)"
}

// bar is one bar, its width in data units (gonum's BarChart takes it in
// points, which cannot be matched to whiskers placed in data units).
type bar struct {
	x, width, y float64
	fill        color.Color
	outline     draw.LineStyle
}

func (b *bar) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x0, x1 := trX(b.x-b.width/2), trX(b.x+b.width/2)
	y0, y1 := trY(0), trY(b.y)
	pts := []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}
	c.FillPolygon(b.fill, c.ClipPolygonY(pts))
	c.StrokeLines(b.outline, c.ClipLinesY(append(pts, pts[0]))...)
}

func (b *bar) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.x - b.width/2, b.x + b.width/2, min(0, b.y), max(0, b.y)
}

// whisker is a min–max bar with caps, and the median printed on the bar.
type whisker struct{ x, lo, hi, mid float64 }

func (w *whisker) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x, lo, mid := trX(w.x), trY(w.lo), trY(w.mid)
	ls := draw.LineStyle{Color: color.Black, Width: vg.Points(1.6)}
	capWidth := vg.Points(6)
	sty := textStyle(noteSize)
	cut := w.hi > p.Y.Max
	hi := trY(min(w.hi, p.Y.Max))
	if cut {
		hi = c.Max.Y
	}
	c.StrokeLine2(ls, x, lo, x, hi)
	c.StrokeLine2(ls, x-capWidth, lo, x+capWidth, lo)
	if cut {
		arrow := []vg.Point{{X: x - capWidth, Y: hi - capWidth*1.4}, {X: x, Y: hi}, {X: x + capWidth, Y: hi - capWidth*1.4}}
		c.StrokeLines(ls, arrow)
		st := sty
		st.XAlign, st.YAlign = draw.XLeft, draw.YTop
		c.FillText(st, vg.Point{X: x + capWidth + vg.Points(3), Y: hi}, "max "+secondsText(w.hi))
	} else {
		c.StrokeLine2(ls, x-capWidth, hi, x+capWidth, hi)
	}
	// The median sits on its bar, on a white box the whisker passes behind;
	// above the cap instead when the cap is too close to the bar for both.
	label := secondsText(w.mid)
	height := lineHeight(sty)
	y := mid + vg.Points(3)
	if !cut && hi >= mid && hi < y+height {
		y = hi + vg.Points(3)
	}
	width := sty.Width(label) + vg.Points(4)
	box := vg.Rectangle{Min: vg.Point{X: x - width/2, Y: y}, Max: vg.Point{X: x + width/2, Y: y + height*0.8}}
	c.SetColor(color.White)
	c.Fill(box.Path())
	st := sty
	st.XAlign = draw.XCenter
	c.FillText(st, vg.Point{X: x, Y: y + vg.Points(2)}, label)
}

func (w *whisker) DataRange() (xmin, xmax, ymin, ymax float64) {
	return w.x, w.x, w.lo, w.hi
}

// secondsText prints a time with three significant digits: "6.18 s",
// "0.0733 s".
func secondsText(s float64) string {
	return strconv.FormatFloat(s, 'g', 3, 64) + " s"
}
