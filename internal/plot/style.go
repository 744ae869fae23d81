package plot

import (
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
)

// Sizes. A chart is chartWidth wide and rendered to PNG at pngDPI, so 1200 px;
// at that scale a point is 1.67 px and the smallest text (12 pt) is 20 px
// tall, legible when the image is shown at its full width or a bit below.
const (
	chartWidth = 10 * vg.Inch
	pngDPI     = 120

	titleSize    = 18
	subtitleSize = 13
	panelSize    = 14 // a panel's own title in multi-panel charts
	axisSize     = 15
	tickSize     = 13
	legendSize   = 13
	noteSize     = 12

	lineWidth   = 2.2
	markerSize  = 5   // glyph radius in points
	markerWidth = 1.6 // stroke of the open glyphs: gonum's own are 0.5 pt, a hairline at 120 dpi

	margin = 12 // around the figure, in points
)

// sans is the typeface of every text: Liberation Sans (bundled with gonum,
// so PNG and PDF look the same on every machine) reads better at small
// sizes than gonum's default serif.
func sans(size vg.Length) font.Font {
	return font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, size)
}

func textStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    sans(size),
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: plot.DefaultTextHandler,
	}
}

// Target colours: host dark blue, VM orange. They differ in hue for colour
// readers and in lightness for grayscale prints and colour-blind readers
// (Okabe-Ito palette, the blue darkened).
func targetColor(target string, others []string) color.Color {
	switch strings.ToLower(target) {
	case "host":
		return color.RGBA{R: 0x10, G: 0x3a, B: 0x7a, A: 0xff}
	case "vm":
		return color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}
	}
	extra := []color.RGBA{
		{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, // bluish green
		{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, // reddish purple
		{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, // sky blue
		{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, // vermillion
	}
	for i, o := range others {
		if o == target {
			return extra[i%len(extra)]
		}
	}
	return color.Gray{Y: 0x60}
}

// targetOrder sorts targets host first, then vm, then the rest by name, so
// every chart lists them the same way.
func targetOrder(targets []string) []string {
	out := append([]string(nil), targets...)
	rank := func(t string) int { return analysis.TargetRank(strings.ToLower(t)) }
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i]), rank(out[j])
		if ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

// otherTargets lists the targets that are neither host nor vm, for
// targetColor.
func otherTargets(targets []string) []string {
	var out []string
	for _, t := range targetOrder(targets) {
		if l := strings.ToLower(t); l != "host" && l != "vm" {
			out = append(out, t)
		}
	}
	return out
}

// qosShape and qosDashes tell QoS classes apart without colour, so that a
// chart still reads in grayscale: each class has its own marker and its own
// dash pattern. user-interactive is solid and background broken, as in
// reference 001's chart.
func qosShape(c int) draw.GlyphDrawer {
	switch qos.Class(c) {
	case qos.Background:
		return marker{shape: "ring"}
	case qos.Utility:
		return marker{shape: "square"}
	case qos.Default:
		return marker{shape: "triangle"}
	case qos.UserInitiated:
		return marker{shape: "plus"}
	case qos.UserInteractive:
		return marker{shape: "cross"}
	}
	return marker{shape: "diamond"}
}

func qosDashes(c int) []vg.Length {
	switch qos.Class(c) {
	case qos.Background:
		return []vg.Length{vg.Points(9), vg.Points(5)}
	case qos.Utility:
		return []vg.Length{vg.Points(2), vg.Points(4)}
	case qos.Default:
		return []vg.Length{vg.Points(9), vg.Points(4), vg.Points(2), vg.Points(4)}
	case qos.UserInitiated:
		return []vg.Length{vg.Points(5), vg.Points(3)}
	case qos.UserInteractive:
		return nil
	}
	return []vg.Length{vg.Points(1), vg.Points(3)}
}

// qosText names a class by number and name: "QoS 9 background".
func qosText(c int) string {
	return "QoS " + strconv.Itoa(c) + " " + qos.Class(c).String()
}

// seriesText names a (target, QoS) series as the regressions do, with the
// class's name: "Host QoS 9 background".
func seriesText(target string, c int) string {
	return render.TargetLabel(target) + " " + qosText(c)
}

func glyphStyle(target string, others []string, c int) draw.GlyphStyle {
	return draw.GlyphStyle{Color: targetColor(target, others), Radius: vg.Points(markerSize), Shape: qosShape(c)}
}

func lineStyle(target string, others []string, c int) draw.LineStyle {
	return draw.LineStyle{Color: targetColor(target, others), Width: vg.Points(lineWidth), Dashes: qosDashes(c)}
}

// marker draws a glyph with a stroke thick enough to see at 1200 px, where
// gonum's outlined glyphs use a 0.5 pt hairline.
type marker struct{ shape string }

func (m marker) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(markerWidth)})
	r := sty.Radius
	var p vg.Path
	switch m.shape {
	case "ring":
		p.Move(vg.Point{X: pt.X + r, Y: pt.Y})
		p.Arc(pt, r, 0, 2*math.Pi)
		p.Close()
	case "square":
		s := r * 0.85
		p.Move(vg.Point{X: pt.X - s, Y: pt.Y - s})
		p.Line(vg.Point{X: pt.X + s, Y: pt.Y - s})
		p.Line(vg.Point{X: pt.X + s, Y: pt.Y + s})
		p.Line(vg.Point{X: pt.X - s, Y: pt.Y + s})
		p.Close()
	case "triangle":
		t := r * 1.15
		p.Move(vg.Point{X: pt.X, Y: pt.Y + t})
		p.Line(vg.Point{X: pt.X - t*0.866, Y: pt.Y - t*0.5})
		p.Line(vg.Point{X: pt.X + t*0.866, Y: pt.Y - t*0.5})
		p.Close()
	case "plus":
		p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
		p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
		p.Move(vg.Point{X: pt.X - r, Y: pt.Y})
		p.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	case "cross":
		d := r * 0.8
		p.Move(vg.Point{X: pt.X - d, Y: pt.Y - d})
		p.Line(vg.Point{X: pt.X + d, Y: pt.Y + d})
		p.Move(vg.Point{X: pt.X - d, Y: pt.Y + d})
		p.Line(vg.Point{X: pt.X + d, Y: pt.Y - d})
	default: // diamond
		p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
		p.Line(vg.Point{X: pt.X + r, Y: pt.Y})
		p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
		p.Line(vg.Point{X: pt.X - r, Y: pt.Y})
		p.Close()
	}
	c.Stroke(p)
}

// newPlot returns a plot with qoslab's fonts, a light grid, and no title or
// legend of its own: the figure draws those across the whole chart.
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = sans(axisSize)
		ax.Tick.Label.Font = sans(tickSize)
		ax.Tick.Length = vg.Points(6)
		ax.Width = vg.Points(1)
		ax.Tick.Width = vg.Points(1)
		ax.Label.Padding = vg.Points(6)
	}
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Title.TextStyle.Font = sans(panelSize)
	p.Title.Padding = vg.Points(6)
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xe4}
	g.Horizontal.Color = color.Gray{Y: 0xe4}
	g.Vertical.Width = vg.Points(0.8)
	g.Horizontal.Width = vg.Points(0.8)
	p.Add(g)
	return p
}

// logSpread is the ratio of largest to smallest value above which a value
// axis goes logarithmic: host background threads under contention run ~200x
// slower than user-interactive ones, and on a linear axis every slow series
// would lie flat on zero.
const logSpread = 20

// valueAxis sets axis ax to span values (all finite ones, positive for a log
// axis), starting at zero on a linear axis, and returns whether it went
// logarithmic. zeroBased forbids log (bar heights start at zero).
func valueAxis(ax *plot.Axis, values []float64, zeroBased bool) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if math.IsInf(lo, 1) { // no values: a unit range keeps gonum from panicking
		ax.Min, ax.Max = 0, 1
		return false
	}
	if !zeroBased && lo > 0 && hi/lo > logSpread {
		ax.Scale = plot.LogScale{}
		ax.Tick.Marker = logTicks{}
		// A margin of a quarter decade each way keeps markers off the frame.
		ax.Min, ax.Max = lo/1.5, hi*1.5
		return true
	}
	ax.Tick.Marker = linearTicks{}
	ax.Min = min(0, lo)
	ax.Max = hi * 1.08
	if ax.Max <= ax.Min {
		ax.Max = ax.Min + 1
	}
	return false
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten when the
// axis spans few decades, else at the powers alone, in plain decimals
// ("0.02", "500"): gonum's LogTicks writes "1e+06" and labels powers only.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	d0, d1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	few := d1-d0 <= 4
	var ticks []plot.Tick
	for d := d0; d <= d1; d++ {
		for m := 1; m <= 9; m++ {
			// Parse the decimal so that 3e-2 is the double nearest 0.03,
			// which m*10^d, computed, is not.
			v, _ := strconv.ParseFloat(strconv.Itoa(m)+"e"+strconv.Itoa(d), 64)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || few && (m == 2 || m == 5) {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// linearTicks labels about six round values (steps of 1, 2, 2.5 or 5
// times a power of ten) with a minor tick between each: gonum's default
// aims at three labels, too few to read a value off a 5 in tall axis.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	prec := 0
	for prec < 12 && math.Abs(roundTo(step, prec)-step) > step*1e-9 {
		prec++
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi+step*1e-9; i++ {
		v := i * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		if mid := v + step/2; mid <= hi {
			ticks = append(ticks, plot.Tick{Value: mid})
		}
	}
	return ticks
}

func roundTo(x float64, prec int) float64 {
	p := math.Pow(10, float64(prec))
	return math.Round(x*p) / p
}

// countAxis labels each count in counts (thread counts, process numbers)
// when there are few, so that the axis shows exactly the cells that ran;
// with many it falls back to gonum's default.
func countAxis(ax *plot.Axis, counts []int) {
	sort.Ints(counts)
	if len(counts) == 0 {
		ax.Min, ax.Max = 0, 1
		return
	}
	ax.Min, ax.Max = float64(counts[0])-0.5, float64(counts[len(counts)-1])+0.5
	if len(counts) > 16 {
		return
	}
	var ticks plot.ConstantTicks
	for _, n := range counts {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.Itoa(n)})
	}
	ax.Tick.Marker = ticks
}

func logNote(isLog bool) string {
	if isLog {
		return ", log scale"
	}
	return ""
}

// stem makes a name safe as a file stem: lower case letters, digits and
// dashes.
func stem(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('-')
		}
		for _, r := range strings.ToLower(p) {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
				b.WriteRune(r)
			default:
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}
