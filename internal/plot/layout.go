package plot

import (
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// figure is one chart laid out top to bottom: title, subtitle, a header
// strip (telemetry's cell labels), panels sharing the x axis, notes, and the
// legend. The legend sits below the panels rather than inside them (gonum's
// default) so that it never hides data, and in columns so that the long
// regression texts fit.
type figure struct {
	title, subtitle string
	panels          []panel
	// header, when set, draws into a strip of headerHeight above the first
	// panel; dataX maps an x value to the strip's horizontal position.
	header       func(c draw.Canvas, dataX func(float64) vg.Length)
	headerHeight vg.Length
	legend       []legendEntry
	notes        []string
}

type panel struct {
	plot   *plot.Plot
	height vg.Length
	// beside, when set, is a second plot drawn to the right of plot,
	// sharing its y axis (its own y axis hidden), in besideShare of the
	// panel's width; their data areas are aligned top and bottom.
	beside      *plot.Plot
	besideShare float64
}

type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
}

const (
	thumbWidth = 36 // legend sample width, points
	gap        = 8  // between blocks, points
)

// wrap breaks s into lines no wider than w in style sty, at spaces.
func wrap(s string, sty text.Style, w vg.Length) []string {
	if s == "" {
		return nil
	}
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		words := strings.Fields(para)
		line := ""
		for _, word := range words {
			try := word
			if line != "" {
				try = line + " " + word
			}
			if line != "" && sty.Width(try) > w {
				lines = append(lines, line)
				line = word
				continue
			}
			line = try
		}
		lines = append(lines, line)
	}
	return lines
}

func lineHeight(sty text.Style) vg.Length {
	e := sty.FontExtents()
	return (e.Ascent + e.Descent) * 1.25
}

// legendGrid is how the legend's entries fall into columns.
type legendGrid struct {
	cols, rows int
	colWidth   vg.Length
	rowHeight  vg.Length
}

func (f *figure) legendGrid(width vg.Length) legendGrid {
	if len(f.legend) == 0 {
		return legendGrid{}
	}
	sty := textStyle(legendSize)
	var widest vg.Length
	for _, e := range f.legend {
		widest = max(widest, sty.Width(e.text))
	}
	colWidth := vg.Points(thumbWidth+gap) + widest + vg.Points(2*gap)
	cols := max(1, min(len(f.legend), int(width/colWidth)))
	rows := (len(f.legend) + cols - 1) / cols
	// Spread the columns over the width when they fit with room to spare.
	colWidth = max(colWidth, width/vg.Length(cols))
	return legendGrid{cols: cols, rows: rows, colWidth: colWidth, rowHeight: max(lineHeight(sty), vg.Points(2*markerSize+6))}
}

func (f *figure) inner() vg.Length { return chartWidth - vg.Points(2*margin) }

func (f *figure) titleLines() (title, subtitle []string) {
	return wrap(f.title, textStyle(titleSize), f.inner()), wrap(f.subtitle, textStyle(subtitleSize), f.inner())
}

func (f *figure) noteLines() []string {
	var out []string
	for _, n := range f.notes {
		out = append(out, wrap("Note: "+n, textStyle(noteSize), f.inner())...)
	}
	return out
}

// height is the figure's height for chartWidth: its parts stacked.
func (f *figure) height() vg.Length {
	title, sub := f.titleLines()
	h := vg.Points(2 * margin)
	h += vg.Length(len(title))*lineHeight(textStyle(titleSize)) + vg.Length(len(sub))*lineHeight(textStyle(subtitleSize)) + vg.Points(gap)
	h += f.headerHeight
	for _, p := range f.panels {
		h += p.height
	}
	h += vg.Points(gap)*vg.Length(max(0, len(f.panels)-1)) + vg.Points(gap)
	h += vg.Length(len(f.noteLines())) * lineHeight(textStyle(noteSize))
	g := f.legendGrid(f.inner())
	h += vg.Length(g.rows) * g.rowHeight
	return h
}

func (f *figure) draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Path())
	c := draw.Crop(dc, vg.Points(margin), -vg.Points(margin), vg.Points(margin), -vg.Points(margin))
	top := f.drawTitles(c)
	bottom := f.drawFoot(c)
	f.drawPanels(c, top, bottom)
}

// drawTitles writes the title and subtitle, centred, from the top of c
// down, and returns where the panels start.
func (f *figure) drawTitles(c draw.Canvas) (top vg.Length) {
	top = c.Max.Y
	title, sub := f.titleLines()
	for _, part := range []struct {
		lines []string
		size  vg.Length
	}{{title, titleSize}, {sub, subtitleSize}} {
		sty := textStyle(part.size)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		for _, l := range part.lines {
			c.FillText(sty, vg.Point{X: c.Center().X, Y: top}, l)
			top -= lineHeight(sty)
		}
	}
	return top - vg.Points(gap)
}

// drawFoot writes the legend and notes at the bottom of c, up from the
// lower margin, and returns where the panels end.
func (f *figure) drawFoot(c draw.Canvas) (bottom vg.Length) {
	bottom = c.Min.Y
	g := f.legendGrid(f.inner())
	if g.rows > 0 {
		f.drawLegend(c, g, bottom)
		bottom += vg.Length(g.rows) * g.rowHeight
	}
	notes := f.noteLines()
	nsty := textStyle(noteSize)
	nsty.Color = color.Gray{Y: 0x40}
	for i := len(notes) - 1; i >= 0; i-- {
		c.FillText(nsty, vg.Point{X: c.Min.X, Y: bottom + nsty.FontExtents().Descent}, notes[i])
		bottom += lineHeight(nsty)
	}
	return bottom + vg.Points(gap)
}

// drawPanels draws the panels between top and bottom, their y labels in a
// column left of them, and the header strip.
func (f *figure) drawPanels(c draw.Canvas, top, bottom vg.Length) {
	headerTop := top
	// Draw copies of the plots with their y labels taken out: gonum places
	// a y label's glyph box at the arithmetic middle of the axis's data
	// range, which on a log axis is near its top and shrinks the data area
	// to make room. The figure writes the labels itself, in a column left
	// of the panels, centred on each data area.
	plots := make([]*plot.Plot, len(f.panels))
	labels := make([]string, len(f.panels))
	var column vg.Length
	lsty := textStyle(axisSize)
	for i, pn := range f.panels {
		cp := *pn.plot
		labels[i], cp.Y.Label.Text = cp.Y.Label.Text, ""
		plots[i] = &cp
		if labels[i] != "" {
			column = lsty.FontExtents().Height + vg.Points(6)
		}
	}
	// The header strip goes between the first panel's title and its data
	// (as part of the title's padding), so that the labels sit right on
	// the data they name; above the panel when it has no title.
	inTitle := f.header != nil && len(plots) > 0 && plots[0].Title.Text != ""
	if inTitle {
		plots[0].Title.Padding += f.headerHeight
	} else {
		top -= f.headerHeight
	}
	panelArea := c
	panelArea.Min.X += column
	heights := f.panelHeights()
	if inTitle {
		heights[0] += f.headerHeight
	}
	canvases := alignPanels(plots, panelArea, top, bottom, heights)
	for i, pn := range f.panels {
		if pn.beside != nil {
			canvases[i] = drawBeside(plots[i], pn.beside, canvases[i], pn.besideShare)
		}
	}
	for i, p := range plots {
		p.Draw(canvases[i])
		if labels[i] == "" {
			continue
		}
		data := p.DataCanvas(canvases[i])
		st := lsty
		st.Rotation = math.Pi / 2
		st.XAlign, st.YAlign = draw.XCenter, draw.YTop
		c.FillText(st, vg.Point{X: c.Min.X, Y: data.Center().Y}, labels[i])
	}
	if f.header != nil && len(plots) > 0 {
		first := plots[0]
		data := first.DataCanvas(canvases[0])
		strip := c
		strip.Min.Y, strip.Max.Y = top, headerTop
		if inTitle {
			strip.Min.Y, strip.Max.Y = data.Max.Y, data.Max.Y+f.headerHeight
		}
		strip.Min.X, strip.Max.X = data.Min.X, data.Max.X
		f.header(strip, func(x float64) vg.Length {
			return data.Min.X + vg.Length(first.X.Norm(x))*data.Size().X
		})
	}
}

// drawBeside draws right in share of c's width, right of where left is to
// be drawn, cropping both so that their data areas share top and bottom,
// and returns left's canvas.
func drawBeside(left, right *plot.Plot, c draw.Canvas, share float64) draw.Canvas {
	split := c.Max.X - vg.Length(share)*(c.Max.X-c.Min.X)
	lc, rc := c, c
	lc.Max.X = split - vg.Points(gap)
	rc.Min.X = split + vg.Points(gap)
	ld, rd := left.DataCanvas(lc), right.DataCanvas(rc)
	// Crop the one whose data area reaches further, top and bottom.
	lc.Max.Y -= max(0, ld.Max.Y-rd.Max.Y)
	rc.Max.Y -= max(0, rd.Max.Y-ld.Max.Y)
	lc.Min.Y += max(0, rd.Min.Y-ld.Min.Y)
	rc.Min.Y += max(0, ld.Min.Y-rd.Min.Y)
	right.Draw(rc)
	return lc
}

func (f *figure) panelHeights() []vg.Length {
	out := make([]vg.Length, len(f.panels))
	for i, p := range f.panels {
		out[i] = p.height
	}
	return out
}

// alignPanels stacks the plots between top and bottom, each its height
// scaled to fit, and crops them so that their data areas share left and
// right edges (as plot.Align does for equal tiles), which makes a time in
// one panel sit directly above the same time in the next.
func alignPanels(plots []*plot.Plot, c draw.Canvas, top, bottom vg.Length, heights []vg.Length) []draw.Canvas {
	var want vg.Length
	for _, h := range heights {
		want += h
	}
	avail := top - bottom - vg.Points(gap)*vg.Length(max(0, len(plots)-1))
	scale := 1.0
	if want > 0 {
		scale = float64(avail / want)
	}
	out := make([]draw.Canvas, len(plots))
	y := top
	var left, right vg.Length
	for i, p := range plots {
		h := heights[i] * vg.Length(scale)
		pc := c
		pc.Max.Y, pc.Min.Y = y, y-h
		y -= h + vg.Points(gap)
		out[i] = pc
		data := p.DataCanvas(pc)
		left = max(left, data.Min.X-pc.Min.X)
		right = max(right, pc.Max.X-data.Max.X)
	}
	for i, p := range plots {
		data := p.DataCanvas(out[i])
		out[i].Min.X += left - (data.Min.X - out[i].Min.X)
		out[i].Max.X -= right - (out[i].Max.X - data.Max.X)
	}
	return out
}

func (f *figure) drawLegend(c draw.Canvas, g legendGrid, bottom vg.Length) {
	sty := textStyle(legendSize)
	sty.YAlign = draw.YCenter
	for i, e := range f.legend {
		col, row := i/g.rows, i%g.rows // column-major: series of one target stay together
		x := c.Min.X + vg.Length(col)*g.colWidth
		yTop := bottom + vg.Length(g.rows-row)*g.rowHeight
		thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: yTop - g.rowHeight + vg.Points(3)},
			Max: vg.Point{X: x + vg.Points(thumbWidth), Y: yTop - vg.Points(3)},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(&thumb)
		}
		c.FillText(sty, vg.Point{X: x + vg.Points(thumbWidth+gap), Y: yTop - g.rowHeight/2}, e.text)
	}
}

// glyphThumb is a legend sample of one marker, centred.
type glyphThumb struct{ draw.GlyphStyle }

func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyphNoClip(g.GlyphStyle, c.Center()) }

// lineThumb is a legend sample of a line style.
type lineThumb struct{ draw.LineStyle }

func (l lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.LineStyle, c.Min.X, y, c.Max.X, y)
}

// swatch is a legend sample of a filled box, with an outline.
type swatch struct {
	fill    color.Color
	outline draw.LineStyle
}

func (s swatch) Thumbnail(c *draw.Canvas) {
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X + vg.Points(4), Y: c.Min.Y + vg.Points(1)}, Max: vg.Point{X: c.Max.X - vg.Points(4), Y: c.Max.Y - vg.Points(1)}}
	if s.fill != nil {
		c.SetColor(s.fill)
		c.Fill(r.Path())
	}
	if s.outline.Width > 0 {
		c.SetLineStyle(s.outline)
		c.Stroke(r.Path())
	}
}
