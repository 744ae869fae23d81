package plot

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/render"
)

// Verdict colours and shapes, told apart without colour too: yes a filled
// disc in bluish green, no a filled square in vermillion, inconclusive an
// open ring in grey (Okabe-Ito).
var outcomeStyles = []struct {
	outcome analysis.Outcome
	color   color.Color
	shape   draw.GlyphDrawer
}{
	{analysis.Subsumed, color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, draw.CircleGlyph{}},
	{analysis.NotSubsumed, color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, draw.BoxGlyph{}},
	{analysis.Inconclusive, color.Gray{Y: 0x55}, marker{shape: "ring"}},
}

// outcomeGlyph is the VM ratio's marker for a verdict.
func outcomeGlyph(outcome string) draw.GlyphStyle {
	for _, o := range outcomeStyles {
		if string(o.outcome) == outcome {
			return draw.GlyphStyle{Color: o.color, Radius: vg.Points(markerSize), Shape: o.shape}
		}
	}
	return draw.GlyphStyle{Color: color.Gray{Y: 0x90}, Radius: vg.Points(markerSize), Shape: marker{shape: "diamond"}}
}

// bandColor shades where the verdict says yes.
var bandColor = color.NRGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0x30}

// maxRowLabel is the widest a machine's label may be at the left of the
// fleet chart before the chart names the machines #1, #2, ... in a key.
const maxRowLabel = 200 // points

// fleetRowHeight is the height of one machine's row: its label with a
// little air, or its marker, whichever is taller.
func fleetRowHeight() vg.Length {
	return max(lineHeight(textStyle(tickSize))*1.15, vg.Points(2*markerSize+8))
}

// fleetCharts are the fleet charts of c: per workload (and phase) that a
// run has a QoS ratio of, one row per machine in the order given (the
// baseline on top, then any run that did not come back).
func fleetCharts(c *compare.Comparison) ([]Chart, []Skipped) {
	type key struct{ workload, phase string }
	var keys []key
	for _, m := range c.Machines {
		k := key{m.Workload, m.Phase}
		if !slices.Contains(keys, k) && (!m.HostRatio.Value.IsNaN() || !m.VMRatio.Value.IsNaN()) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, []Skipped{{"compare-fleet", "no run has a QoS ratio (it needs a workload run at two classes)"}}
	}
	var out []Chart
	for _, k := range keys {
		var rows []compare.MachineVerdict
		for _, m := range c.Machines {
			if m.Workload == k.workload && m.Phase == k.phase {
				rows = append(rows, m)
			}
		}
		name := stem("compare-fleet", k.workload)
		if k.phase != "" && k.phase != k.workload {
			name = stem("compare-fleet", k.workload, k.phase)
		}
		out = append(out, chart(name, familyCompare, fleetFigure(c, rows)))
	}
	return out, nil
}

// fleetFigure draws one workload's rows: left, each machine's VM ratio
// with its interval, marked by its verdict, against its band; right, its
// host's ratio with its interval; both on log scales, a row per machine.
func fleetFigure(c *compare.Comparison, rows []compare.MachineVerdict) *figure {
	labels := make([]string, 0, len(rows)+len(c.Missing))
	for _, m := range rows {
		labels = append(labels, c.Columns[m.Run].Heading())
	}
	for _, gone := range c.Missing {
		labels = append(labels, gone.Label)
	}
	ticks, key := rowLabels(labels)
	n := len(labels)
	// Machine i's row is at y = n-1-i, so the first is on top.
	rowY := func(i int) float64 { return float64(n - 1 - i) }
	classes := "the highest class over the lowest"
	if c := sharedClasses(rows); c != "" {
		classes = "QoS " + strings.Replace(c, "/", " over QoS ", 1)
	}
	workload := render.WorkloadText(rows[0].Workload, rows[0].Phase)

	vm := newPlot("VM ratio (log scale)", "machine")
	vm.Y.Tick.Marker = rowTicks(ticks, rowY)
	host := newPlot("host ratio (log scale)", "")
	host.HideY()
	var vmValues, hostValues []float64
	for _, m := range rows {
		vmValues = append(vmValues, ratioEnds(m.VMRatio)...)
		for _, w := range threadWhiskers(m) {
			vmValues = append(vmValues, ratioEnds(w.Ratio)...)
		}
		if !m.Band.IsNaN() {
			vmValues = append(vmValues, 1/float64(m.Band), float64(m.Band))
		}
		hostValues = append(hostValues, ratioEnds(m.HostRatio)...)
	}
	for _, p := range []*plot.Plot{vm, host} {
		p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
		p.Add(rowGuides{n: n})
	}
	logRatioAxis(&vm.X, append(vmValues, 1))
	logRatioAxis(&host.X, append(hostValues, 1))
	vm.X.Tick.Marker = bandTicks{edges: bandEdges(rows)}
	host.X.Tick.Marker = ratioLabels{decadeTicks{}}
	vm.Add(fleetBands{rows: rows, rowY: rowY}, fleetThreads{rows: rows, rowY: rowY})
	vm.Add(fleetPoints{rows: rows, rowY: rowY, ratio: func(m compare.MachineVerdict) compare.Ratio { return m.VMRatio },
		style: func(m compare.MachineVerdict) draw.GlyphStyle { return outcomeGlyph(m.Outcome) },
		empty: func(m compare.MachineVerdict) string {
			if m.Outcome == "" {
				return "no verdict: " + m.Reason
			}
			return "no VM ratio"
		}, missing: len(c.Missing), missingText: "did not come back"})
	hostStyle := draw.GlyphStyle{Color: targetColor("host", nil), Radius: vg.Points(markerSize), Shape: marker{shape: "diamond"}}
	host.Add(fleetPoints{rows: rows, rowY: rowY, ratio: func(m compare.MachineVerdict) compare.Ratio { return m.HostRatio },
		style: func(compare.MachineVerdict) draw.GlyphStyle { return hostStyle },
		empty: func(compare.MachineVerdict) string { return "no host ratio" }})

	f := &figure{
		title: fmt.Sprintf("%s: is QoS subsumed in the VM, machine by machine", workload),
		subtitle: "Left: the VM's ratio of the rate at " + classes + ", its marker the verdict, " +
			"against the band where the verdict says yes (shaded: [1/M, M], M from the host's effect and the absolute margin). " +
			"Right: the host's ratio. Point: the Hodges-Lehmann estimate; whisker: the verdict's 90% interval (95% where a run has no verdict). " +
			threadsNote(rows) + "Machines in the order given, the baseline on top.",
		notes: key,
	}
	for _, o := range outcomeStyles {
		if slices.ContainsFunc(rows, func(m compare.MachineVerdict) bool { return m.Outcome == string(o.outcome) }) {
			f.legend = append(f.legend, legendEntry{text: "VM ratio, verdict " + string(o.outcome), thumbs: []plot.Thumbnailer{glyphThumb{outcomeGlyph(string(o.outcome))}}})
		}
	}
	f.legend = append(f.legend, threadLegend(rows)...)
	f.legend = append(f.legend,
		legendEntry{text: "band: yes", thumbs: []plot.Thumbnailer{swatch{fill: bandColor}}},
		legendEntry{text: "host ratio", thumbs: []plot.Thumbnailer{glyphThumb{hostStyle}}})
	f.panels = []panel{{plot: vm, beside: host, besideShare: 0.38,
		height: max(2.5*vg.Inch, vg.Length(n)*fleetRowHeightFor(mostThreadWhiskers(rows))+vg.Points(60))}}
	return f
}

// threadsNote says what the thread counts' whiskers are, where a row
// draws them.
func threadsNote(rows []compare.MachineVerdict) string {
	if mostThreadWhiskers(rows) == 0 {
		return ""
	}
	return "Below a machine's whisker, thinner: its VM interval at each thread count the verdict judged, which a yes needs inside the band too, " +
		"dark where it is not. "
}

// sharedClasses is the classes every row with a ratio compares ("33/9"),
// or "" when they differ.
func sharedClasses(rows []compare.MachineVerdict) string {
	shared := ""
	for _, m := range rows {
		if m.High == 0 && m.Low == 0 {
			continue
		}
		c := strconv.Itoa(m.High) + "/" + strconv.Itoa(m.Low)
		if shared != "" && shared != c {
			return ""
		}
		shared = c
	}
	return shared
}

// ratioEnds are a ratio's estimate and interval ends that a log axis can
// show.
func ratioEnds(r compare.Ratio) []float64 {
	var out []float64
	for _, v := range []analysis.Float{r.Value, r.Low, r.High} {
		if f := float64(v); f > 0 && !math.IsInf(f, 0) {
			out = append(out, f)
		}
	}
	return out
}

// logRatioAxis makes ax a log axis spanning values (and 1, no effect),
// with a little room each side.
func logRatioAxis(ax *plot.Axis, values []float64) {
	lo, hi := slices.Min(values), slices.Max(values)
	pad := math.Pow(hi/lo, 0.06)
	pad = max(pad, 1.1)
	ax.Scale = plot.LogScale{}
	ax.Tick.Marker = logTicks{}
	ax.Min, ax.Max = lo/pad, hi*pad
}

// decadeTicks label a narrow log axis: at 1, 2 and 5 times each power of
// ten over two decades or less, else at the powers alone (logTicks labels
// 1, 2, 5 up to four decades, which run into each other on a narrow one).
type decadeTicks struct{}

func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := logTicks{}.Ticks(lo, hi)
	if math.Log10(hi/lo) <= 2 {
		return ticks
	}
	for i, t := range ticks {
		if m := t.Value / math.Pow(10, math.Floor(math.Log10(t.Value)+1e-9)); math.Abs(m-1) > 1e-6 {
			ticks[i].Label = ""
		}
	}
	return ticks
}

// bandEdges are the edges of the machines' bands, 1/M and M, the bands
// most machines share first (those are the edges worth a label where two
// would crowd each other).
func bandEdges(rows []compare.MachineVerdict) []float64 {
	count := map[analysis.Float]int{}
	var bands []analysis.Float
	for _, m := range rows {
		if m.Band.IsNaN() || !(m.Band > 0) {
			continue
		}
		if count[m.Band] == 0 {
			bands = append(bands, m.Band)
		}
		count[m.Band]++
	}
	slices.SortStableFunc(bands, func(a, b analysis.Float) int { return count[b] - count[a] })
	var out []float64
	for _, b := range bands {
		out = append(out, 1/float64(b), float64(b))
	}
	return out
}

// minTickGap is how close, as a fraction of a log axis's span, two
// labelled ticks may be before the later one loses its label.
const minTickGap = 0.08

// bandTicks label the fleet chart's VM axis where the verdict's answer
// changes: at each band's edges (1/M and M, the shaded band's sides:
// 0.8x, 1.25x) first, then at 1 (no effect, which the dashed line marks
// too) and at logTicks' round values where they leave room, all as
// ratios; the rest of logTicks' marks unlabelled. Without it the axis of
// a fleet whose VM ratios lie near 1 was labelled at 1 alone, and on a
// wide axis 1 took the room of the edges beside it.
type bandTicks struct{ edges []float64 }

func (b bandTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	span := math.Log(hi / lo)
	var out []plot.Tick
	crowded := func(v float64) bool {
		return slices.ContainsFunc(out, func(t plot.Tick) bool { return math.Abs(math.Log(v/t.Value)) < minTickGap*span })
	}
	label := func(v float64) {
		if v >= lo && v <= hi && !crowded(v) {
			out = append(out, plot.Tick{Value: v, Label: render.FormatRatio(analysis.Float(v))})
		}
	}
	for _, e := range b.edges {
		label(e)
	}
	label(1)
	round := logTicks{}.Ticks(lo, hi)
	for _, t := range round {
		if t.Label != "" {
			label(t.Value)
		}
	}
	for _, t := range round {
		if !slices.ContainsFunc(out, func(l plot.Tick) bool { return l.Value == t.Value }) {
			out = append(out, plot.Tick{Value: t.Value})
		}
	}
	slices.SortFunc(out, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
	return out
}

// ratioLabels writes a ticker's labels as ratios: "10x" for 10.
type ratioLabels struct{ plot.Ticker }

func (r ratioLabels) Ticks(lo, hi float64) []plot.Tick {
	ticks := r.Ticker.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label += "x"
		}
	}
	return ticks
}

// rowLabels are the machines' labels at the left of the chart, or, when
// one is wider than maxRowLabel, short names ("#1") and a key naming each
// in full.
func rowLabels(labels []string) (ticks, key []string) {
	sty := textStyle(tickSize)
	fits := true
	for _, l := range labels {
		fits = fits && sty.Width(l) <= vg.Points(maxRowLabel)
	}
	if fits {
		return labels, nil
	}
	ticks = make([]string, len(labels))
	parts := make([]string, len(labels))
	for i, l := range labels {
		ticks[i] = "#" + strconv.Itoa(i+1)
		parts[i] = ticks[i] + ": " + l
	}
	return ticks, []string{"Machines: " + strings.Join(parts, "; ") + "."}
}

// rowTicks labels each machine's row.
func rowTicks(labels []string, rowY func(int) float64) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(labels))
	for i, l := range labels {
		ticks[i] = plot.Tick{Value: rowY(i), Label: l}
	}
	return ticks
}

// rowGuides draws a faint line along every machine's row, so the eye
// follows a row from its label across both panels.
type rowGuides struct{ n int }

func (g rowGuides) Plot(c draw.Canvas, p *plot.Plot) {
	_, y := p.Transforms(&c)
	ls := draw.LineStyle{Color: color.Gray{Y: 0xe8}, Width: vg.Points(0.8)}
	for i := range g.n {
		c.StrokeLine2(ls, c.Min.X, y(float64(i)), c.Max.X, y(float64(i)))
	}
}

// fleetBands shades each machine's band, where its verdict says yes, and
// marks 1, no effect.
type fleetBands struct {
	rows []compare.MachineVerdict
	rowY func(int) float64
}

func (b fleetBands) Plot(c draw.Canvas, p *plot.Plot) {
	x, y := p.Transforms(&c)
	c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 0x80}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}},
		x(1), c.Min.Y, x(1), c.Max.Y)
	// Neighbours with the same band share one rectangle: abutting ones
	// leave a seam where their edges are anti-aliased.
	for i := 0; i < len(b.rows); {
		band := b.rows[i].Band
		j := i + 1
		for j < len(b.rows) && b.rows[j].Band == band {
			j++
		}
		if !band.IsNaN() {
			r := vg.Rectangle{
				Min: vg.Point{X: x(1 / float64(band)), Y: y(b.rowY(j-1) - 0.5)},
				Max: vg.Point{X: x(float64(band)), Y: y(b.rowY(i) + 0.5)},
			}
			c.FillPolygon(bandColor, c.ClipPolygonXY([]vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}}))
		}
		i = j
	}
}

// fleetPoints draws each machine's ratio (ratio picks it) as a marker
// with its interval as a whisker; a machine without one gets empty's text
// at its row, and the missing runs after rows missingText.
type fleetPoints struct {
	rows        []compare.MachineVerdict
	rowY        func(int) float64
	ratio       func(compare.MachineVerdict) compare.Ratio
	style       func(compare.MachineVerdict) draw.GlyphStyle
	empty       func(compare.MachineVerdict) string
	missing     int
	missingText string
}

func (f fleetPoints) Plot(c draw.Canvas, p *plot.Plot) {
	x, y := p.Transforms(&c)
	note := textStyle(noteSize)
	note.Color = color.Gray{Y: 0x55}
	note.YAlign = draw.YCenter
	say := func(row float64, text string) {
		// Cut to the panel's width: a reason can be long, and the table
		// says it whole.
		for note.Width(text) > c.Max.X-c.Min.X-vg.Points(8) && len(text) > 4 {
			text = strings.TrimSpace(text[:len(text)-5]) + "..."
		}
		c.FillText(note, vg.Point{X: c.Min.X + vg.Points(4), Y: y(row)}, text)
	}
	for i, m := range f.rows {
		r := f.ratio(m)
		if r.Value.IsNaN() || !(r.Value > 0) {
			say(f.rowY(i), f.empty(m))
			continue
		}
		sty := f.style(m)
		pt := vg.Point{X: x(float64(r.Value)), Y: y(f.rowY(i))}
		if lo, hi := float64(r.Low), float64(r.High); lo > 0 && hi > 0 {
			ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(1.6)}
			c.StrokeLines(ls, c.ClipLinesX([]vg.Point{{X: x(lo), Y: pt.Y}, {X: x(hi), Y: pt.Y}})...)
			cap := vg.Points(4)
			for _, e := range []float64{lo, hi} {
				if ex := x(e); ex >= c.Min.X && ex <= c.Max.X {
					c.StrokeLine2(ls, ex, pt.Y-cap, ex, pt.Y+cap)
				}
			}
		}
		c.DrawGlyph(sty, pt)
	}
	for j := range f.missing {
		say(f.rowY(len(f.rows)+j), f.missingText)
	}
}
