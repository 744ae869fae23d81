package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/units"
)

// familyVerdict is the family of the verdict's own picture: per thread
// count, the VM's ratio with the interval the verdict judged against the
// band, beside the host's ratio.
const familyVerdict = "verdict"

func init() {
	register(family{name: familyVerdict, rank: 80, build: verdictCharts,
		lacks: "no verdict in this run (it needs a workload run at two classes on both the host and a VM)"})
}

// VerdictChartName is the name of the chart that pictures verdict v:
// "verdict-fp", or with the verdict's parameters
// (Sensitivity.Name) where the run measured its workload with more than
// one set of them.
func VerdictChartName(v analysis.Verdict) string {
	return stem(familyVerdict, render.SensitivityName(v.Host))
}

// verdictCharts draws one chart per verdict that compared anything: a
// verdict that had no thread count to compare has no ratio to draw, and
// is skipped with its reason.
func verdictCharts(in Input) ([]Chart, []Skipped) {
	var out []Chart
	var skipped []Skipped
	for _, v := range in.Summary.Verdicts {
		name := VerdictChartName(v)
		rows := verdictRows(v)
		if len(rows) == 0 {
			skipped = append(skipped, Skipped{name, "the verdict compared no thread count: " + render.VerdictReason(v)})
			continue
		}
		out = append(out, chart(name, familyVerdict, verdictFigure(in, v, rows)))
	}
	return out, skipped
}

// verdictRow is one row of the picture: a thread count's (or the pooled)
// ratios, as log shifts with their intervals.
type verdictRow struct {
	label    string
	vm, host analysis.Shift
}

// verdictRows are the rows of v's picture, top to bottom: each thread
// count compared, then, with more than one, all of them pooled (the
// verdict judges both). The VM's intervals are those the verdict judged
// (90%, at its look's level); the host's are its own thread count's 95%
// interval and the pooled 90% one.
func verdictRows(v analysis.Verdict) []verdictRow {
	if len(v.Host.ByThreads) == 0 || len(v.VM.ByThreads) == 0 {
		return nil
	}
	pooled := verdictRow{label: "pooled", vm: v.VM.Shift, host: v.Host.Shift}
	if len(v.Threads) <= 1 || len(v.VMByThreads) == 0 {
		pooled.label = units.Plural(v.Threads[0], "thread")
		return []verdictRow{pooled}
	}
	var rows []verdictRow
	for _, ts := range v.VMByThreads {
		row := verdictRow{label: units.Plural(ts.Threads, "thread"), vm: ts.Shift}
		row.host.Estimate = analysis.Float(math.NaN())
		for _, h := range v.Host.ByThreads {
			if h.Threads == ts.Threads {
				row.host = h.Shift
			}
		}
		rows = append(rows, row)
	}
	pooled.label = "pooled"
	return append(rows, pooled)
}

// Where a VM interval lies against the band, told apart by colour and
// shape as the fleet chart tells verdicts: inside (yes), beyond the edge
// for no, or across an edge (cannot tell).
var (
	bandInside  = draw.GlyphStyle{Color: color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, Radius: vg.Points(markerSize), Shape: draw.CircleGlyph{}}
	bandOutside = draw.GlyphStyle{Color: color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, Radius: vg.Points(markerSize), Shape: draw.BoxGlyph{}}
	bandAcross  = draw.GlyphStyle{Color: color.Gray{Y: 0x55}, Radius: vg.Points(markerSize), Shape: marker{shape: "ring"}}
	bandNone    = draw.GlyphStyle{Color: targetColor("vm", nil), Radius: vg.Points(markerSize), Shape: marker{shape: "diamond"}}
	bandFill    = color.NRGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0x30}
)

// bandPlace is the style of a VM interval lo..hi (ratios) against the band
// [1/m, m] and the edge for no, mNo: inside, wholly beyond, or across; the
// VM's own colour where there is no band (the host showed no effect).
func bandPlace(lo, hi, m, mNo float64) draw.GlyphStyle {
	switch {
	case math.IsNaN(m):
		return bandNone
	case math.IsNaN(lo) || math.IsNaN(hi):
		return bandAcross
	case lo >= 1/m && hi <= m:
		return bandInside
	case lo > mNo || hi < 1/mNo:
		return bandOutside
	}
	return bandAcross
}

// verdictFigure draws v's rows: left, the VM's ratio and interval, marked
// by where it lies against the shaded band; right, the host's; both on
// log scales, a row per thread count.
func verdictFigure(in Input, v analysis.Verdict, rows []verdictRow) *figure {
	n := len(rows)
	rowY := func(i int) float64 { return float64(n - 1 - i) }
	labels := make([]string, n)
	for i, r := range rows {
		labels[i] = r.label
	}
	m, mNo := float64(v.Margin), float64(v.MarginNo)
	vm := newPlot("VM ratio (log scale)", "threads")
	vm.Y.Tick.Marker = rowTicks(labels, rowY)
	host := newPlot("host ratio (log scale)", "")
	host.HideY()
	vmValues, hostValues := []float64{1}, []float64{1}
	for _, r := range rows {
		vmValues = append(vmValues, shiftEnds(r.vm)...)
		hostValues = append(hostValues, shiftEnds(r.host)...)
	}
	var edges []float64
	if !math.IsNaN(m) && m > 0 {
		edges = append(edges, 1/m, m)
		if verdictEdgeDiffers(m, mNo) {
			edges = append(edges, 1/mNo, mNo)
		}
	}
	vmValues = append(vmValues, edges...)
	for _, p := range []*plot.Plot{vm, host} {
		p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
		p.Add(rowGuides{n: n})
	}
	logRatioAxis(&vm.X, vmValues)
	logRatioAxis(&host.X, hostValues)
	vm.X.Tick.Marker = bandTicks{edges: append(slices.Clone(edges), intervalEnds(v.VM.Shift)...)}
	host.X.Tick.Marker = ratioLabels{decadeTicks{}}
	if host.X.Max/host.X.Min < 10 { // under a decade: label the pooled interval's ends too
		host.X.Tick.Marker = bandTicks{edges: intervalEnds(v.Host.Shift)}
	}
	vm.Add(verdictBand{m: m, mNo: mNo})
	hostStyle := draw.GlyphStyle{Color: targetColor("host", nil), Radius: vg.Points(markerSize), Shape: marker{shape: "diamond"}}
	vm.Add(shiftRows{rows: rows, rowY: rowY, shift: func(r verdictRow) analysis.Shift { return r.vm },
		style: func(r verdictRow) draw.GlyphStyle {
			return bandPlace(math.Exp(float64(r.vm.Low)), math.Exp(float64(r.vm.High)), m, mNo)
		}})
	host.Add(shiftRows{rows: rows, rowY: rowY, shift: func(r verdictRow) analysis.Shift { return r.host },
		style: func(verdictRow) draw.GlyphStyle { return hostStyle }})
	f := &figure{
		title:    fmt.Sprintf("%s: QoS subsumed in the VM? %s", render.SensitivityName(v.Host), v.Outcome),
		subtitle: runText(in) + verdictSubtitle(v),
	}
	f.legend = verdictLegend(rows, m, mNo, hostStyle)
	f.panels = []panel{{plot: vm, beside: host, besideShare: 0.36,
		height: max(2.5*vg.Inch, vg.Length(n)*fleetRowHeight()+vg.Points(64))}}
	return f
}

// verdictSubtitle says what the picture shows, in the verdict's classes.
func verdictSubtitle(v analysis.Verdict) string {
	s := fmt.Sprintf("The rate at QoS %d over the rate at QoS %d: 1x means the classes ran alike. ", v.Host.High, v.Host.Low)
	if v.Margin.IsNaN() {
		s += "No band: the host showed no QoS effect for the VM to lose. "
	} else {
		s += fmt.Sprintf("Shaded: the band %s..%s, where the VM's whole interval must lie for yes. ",
			render.FormatRatio(1/v.Margin), render.FormatRatio(v.Margin))
	}
	return s + "Point: the estimate; whisker: the interval the verdict judged (the host's per thread count: 95%)."
}

// verdictEdgeDiffers says whether the edge for no, mNo, prints apart from
// the band's edge m.
func verdictEdgeDiffers(m, mNo float64) bool {
	return !math.IsNaN(mNo) && render.FormatRatio(analysis.Float(m)) != render.FormatRatio(analysis.Float(mNo))
}

// verdictLegend names the markers the rows use, and the band.
func verdictLegend(rows []verdictRow, m, mNo float64, hostStyle draw.GlyphStyle) []legendEntry {
	var out []legendEntry
	for _, e := range []struct {
		style draw.GlyphStyle
		text  string
	}{{bandInside, "VM: inside the band"}, {bandOutside, "VM: beyond the edge for no"}, {bandAcross, "VM: across an edge"}, {bandNone, "VM (no band to judge it by)"}} {
		for _, r := range rows {
			if bandPlace(math.Exp(float64(r.vm.Low)), math.Exp(float64(r.vm.High)), m, mNo) == e.style {
				out = append(out, legendEntry{text: e.text, thumbs: []plot.Thumbnailer{glyphThumb{e.style}}})
				break
			}
		}
	}
	if !math.IsNaN(m) {
		out = append(out, legendEntry{text: "band: yes", thumbs: []plot.Thumbnailer{swatch{fill: bandFill}}})
	}
	return append(out, legendEntry{text: "host", thumbs: []plot.Thumbnailer{glyphThumb{hostStyle}}})
}

// shiftEnds are a shift's estimate and interval ends as ratios, those a
// log axis can show.
func shiftEnds(s analysis.Shift) []float64 {
	var out []float64
	for _, v := range []analysis.Float{s.Estimate, s.Low, s.High} {
		if r := math.Exp(float64(v)); r > 0 && !math.IsInf(r, 0) {
			out = append(out, r)
		}
	}
	return out
}

// intervalEnds are a shift's interval ends as ratios, where it has them:
// labelled on an axis too narrow for round values to say much.
func intervalEnds(s analysis.Shift) []float64 {
	if s.Low.IsNaN() || s.High.IsNaN() {
		return nil
	}
	return []float64{math.Exp(float64(s.Low)), math.Exp(float64(s.High))}
}

// verdictBand shades the band [1/m, m], dashes the edges for no when
// they lie apart from it, and marks 1, no effect.
type verdictBand struct{ m, mNo float64 }

func (b verdictBand) Plot(c draw.Canvas, p *plot.Plot) {
	x, _ := p.Transforms(&c)
	dashed := draw.LineStyle{Color: color.Gray{Y: 0x80}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	if !math.IsNaN(b.m) && b.m > 0 {
		lo, hi := x(1/b.m), x(b.m)
		c.FillPolygon(bandFill, c.ClipPolygonXY([]vg.Point{{X: lo, Y: c.Min.Y}, {X: hi, Y: c.Min.Y}, {X: hi, Y: c.Max.Y}, {X: lo, Y: c.Max.Y}}))
		if verdictEdgeDiffers(b.m, b.mNo) {
			edge := draw.LineStyle{Color: bandOutside.Color, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(3)}}
			for _, e := range []float64{1 / b.mNo, b.mNo} {
				if ex := x(e); ex >= c.Min.X && ex <= c.Max.X {
					c.StrokeLine2(edge, ex, c.Min.Y, ex, c.Max.Y)
				}
			}
		}
	}
	c.StrokeLine2(dashed, x(1), c.Min.Y, x(1), c.Max.Y)
}

// shiftRows draws each row's ratio (shift picks it) as a marker with its
// interval as a whisker; a row without one is left empty.
type shiftRows struct {
	rows  []verdictRow
	rowY  func(int) float64
	shift func(verdictRow) analysis.Shift
	style func(verdictRow) draw.GlyphStyle
}

func (s shiftRows) Plot(c draw.Canvas, p *plot.Plot) {
	x, y := p.Transforms(&c)
	for i, r := range s.rows {
		sh := s.shift(r)
		if sh.Estimate.IsNaN() {
			continue
		}
		sty := s.style(r)
		pt := vg.Point{X: x(math.Exp(float64(sh.Estimate))), Y: y(s.rowY(i))}
		if !sh.Low.IsNaN() && !sh.High.IsNaN() {
			lo, hi := math.Exp(float64(sh.Low)), math.Exp(float64(sh.High))
			ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(1.6)}
			c.StrokeLines(ls, c.ClipLinesX([]vg.Point{{X: x(lo), Y: pt.Y}, {X: x(hi), Y: pt.Y}})...)
			for _, e := range []float64{lo, hi} {
				if ex := x(e); ex >= c.Min.X && ex <= c.Max.X {
					c.StrokeLine2(ls, ex, pt.Y-vg.Points(4), ex, pt.Y+vg.Points(4))
				}
			}
		}
		c.DrawGlyph(sty, pt)
	}
}
