package plot

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/units"
)

// A verdict judges the VM's pooled interval and, with more than one thread
// count, each thread count's own: a yes needs every one inside the band.
// The fleet chart draws them all, so that a machine inconclusive because
// of one thread count does not look, from its pooled interval alone, wholly
// inside the band: each thread count's interval a thinner whisker below
// the machine's, labelled with its thread count, dark where it is not
// inside the band (the one that kept the answer from yes) and light where
// it is.

// threadStep is the height one thread count's whisker takes in a row.
const threadStep = 8 // points

// threadLabelSize is the size of a thread count's label beside its whisker.
const threadLabelSize = 8

// insideColor draws a thread count's interval that lies inside the band.
var insideColor = color.Gray{Y: 0xa8}

// threadWhisker is one thread count's VM ratio in a machine's row, with
// the interval its verdict judged; outside says it is not inside the
// band (it reaches an edge or beyond), so the answer cannot be yes.
type threadWhisker struct {
	compare.ThreadRatio
	outside bool
}

// threadWhiskers are m's thread counts' intervals, where its verdict
// judged more than one thread count alone; none with one (its interval is
// the pooled one). Without a band (no host effect) none is outside.
func threadWhiskers(m compare.MachineVerdict) []threadWhisker {
	if len(m.VMByThreads) < 2 {
		return nil
	}
	out := make([]threadWhisker, len(m.VMByThreads))
	for i, t := range m.VMByThreads {
		out[i] = threadWhisker{ThreadRatio: t, outside: !m.Band.IsNaN() && !t.Inside(m.Band)}
	}
	return out
}

// mostThreadWhiskers is the most thread counts any row draws.
func mostThreadWhiskers(rows []compare.MachineVerdict) int {
	n := 0
	for _, m := range rows {
		n = max(n, len(threadWhiskers(m)))
	}
	return n
}

// threadOffset is how far below its row's middle, where the machine's
// marker is, thread count j's whisker lies: clear of the marker, then a
// step apart.
func threadOffset(j int) vg.Length {
	return vg.Points(markerSize+4) + vg.Length(j)*vg.Points(threadStep)
}

// fleetRowHeightFor is a row's height when rows draw up to k thread
// counts below the machine's marker, which stays at the row's middle,
// level with its label and the host's marker.
func fleetRowHeightFor(k int) vg.Length {
	if k == 0 {
		return fleetRowHeight()
	}
	return max(fleetRowHeight(), 2*(threadOffset(k-1)+vg.Points(threadStep)/2+vg.Points(2)))
}

// threadWhiskerStyle is how a thread count's interval is drawn: in the
// verdict's colour where it is outside the band, light where inside.
func threadWhiskerStyle(outcome string, outside bool) draw.LineStyle {
	if outside {
		return draw.LineStyle{Color: outcomeGlyph(outcome).Color, Width: vg.Points(1.4)}
	}
	return draw.LineStyle{Color: insideColor, Width: vg.Points(1)}
}

// fleetThreads draws each row's thread counts' intervals below its
// marker (threadWhiskers).
type fleetThreads struct {
	rows []compare.MachineVerdict
	rowY func(int) float64
}

func (f fleetThreads) Plot(c draw.Canvas, p *plot.Plot) {
	x, y := p.Transforms(&c)
	label := textStyle(threadLabelSize)
	label.YAlign = draw.YCenter
	for i, m := range f.rows {
		for j, w := range threadWhiskers(m) {
			lo, hi := float64(w.Low), float64(w.High)
			if !(lo > 0) || !(hi > 0) {
				continue
			}
			ls := threadWhiskerStyle(m.Outcome, w.outside)
			at := y(f.rowY(i)) - threadOffset(j)
			c.StrokeLines(ls, c.ClipLinesX([]vg.Point{{X: x(lo), Y: at}, {X: x(hi), Y: at}})...)
			for _, e := range []float64{lo, hi} {
				if ex := x(e); ex >= c.Min.X && ex <= c.Max.X {
					c.StrokeLine2(ls, ex, at-vg.Points(2), ex, at+vg.Points(2))
				}
			}
			if v := x(float64(w.Value)); v >= c.Min.X && v <= c.Max.X {
				c.StrokeLine2(ls, v, at-vg.Points(2.5), v, at+vg.Points(2.5))
			}
			label.Color = ls.Color
			threadLabel(c, label, units.Plural(w.Threads, "thread"), x(lo), x(hi), at)
		}
	}
}

// threadLabel writes a whisker's thread count beside it, from lo to hi at
// height at: right of it where that fits in the panel, else left of it,
// else at the panel's right edge over a white ground.
func threadLabel(c draw.Canvas, sty text.Style, s string, lo, hi, at vg.Length) {
	w := sty.Width(s)
	gap := vg.Points(4)
	switch {
	case hi+gap+w <= c.Max.X:
		c.FillText(sty, vg.Point{X: hi + gap, Y: at}, s)
	case lo-gap-w >= c.Min.X:
		c.FillText(sty, vg.Point{X: lo - gap - w, Y: at}, s)
	default:
		x := c.Max.X - w - vg.Points(2)
		h := sty.Height(s) / 2
		c.FillPolygon(color.White, []vg.Point{{X: x - 1, Y: at - h}, {X: c.Max.X, Y: at - h}, {X: c.Max.X, Y: at + h}, {X: x - 1, Y: at + h}})
		c.FillText(sty, vg.Point{X: x, Y: at}, s)
	}
}

// threadLegend are the legend's entries for the thread counts' whiskers
// the rows draw: inside the band, and not inside it.
func threadLegend(rows []compare.MachineVerdict) []legendEntry {
	var inside, outside []string
	for _, m := range rows {
		for _, w := range threadWhiskers(m) {
			if w.outside {
				outside = append(outside, m.Outcome)
			} else {
				inside = append(inside, m.Outcome)
			}
		}
	}
	var out []legendEntry
	if len(inside) > 0 {
		out = append(out, legendEntry{text: "a thread count's interval, inside the band",
			thumbs: []plot.Thumbnailer{lineThumb{threadWhiskerStyle(inside[0], false)}}})
	}
	if len(outside) > 0 {
		out = append(out, legendEntry{text: "a thread count's interval, not inside the band",
			thumbs: []plot.Thumbnailer{lineThumb{threadWhiskerStyle(outside[0], true)}}})
	}
	return out
}
