package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/telemetry"
)

// familyTelemetry is the family of telemetry timelines per target and view.
const familyTelemetry = "telemetry"

func init() {
	register(family{name: familyTelemetry, rank: 70, build: telemetryCharts,
		lacks: "no telemetry in this run (no telemetry.jsonl, or it is empty)"})
}

// telemetryCharts draws, per (target, view), a timeline of per-CPU busy
// share and frequency, and of the threads of interest (a VM's vCPU threads
// in the host's view), when the run recorded telemetry.
//
// Cell runs are placed end to end along one x axis, each from its own start
// (the gaps between them, spent starting agents and VMs, left out), with
// their boundaries drawn and labelled, rather than one chart per cell run:
// a run has tens to hundreds of cell runs, and the comparison that matters
// is between them (does a background cell clock lower than a
// user-interactive one?), which one timeline shows on one scale.
//
// Per-CPU values are drawn as heat strips, one row per CPU, rather than a
// line per CPU: lines for the 10 to 24 cores of an Apple silicon Mac
// overlap into a tangle, rows stay legible, and their ramps run light to
// dark so that they read in grayscale too.
func telemetryCharts(in Input) ([]Chart, []Skipped) {
	if len(in.Telemetry) == 0 {
		return nil, nil // the family's lacks says why
	}
	type key struct{ target, view string }
	var keys []key
	var targets []string
	for _, s := range in.Telemetry {
		if k := (key{s.Target, s.View}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		if !slices.Contains(targets, s.Target) {
			targets = append(targets, s.Target)
		}
	}
	order := targetOrder(targets)
	// The guest's own view of a VM cell first, then the host's view of it.
	viewRank := func(v string) int {
		switch v {
		case telemetry.ViewGuest:
			return 0
		case telemetry.ViewHost:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		if ia, ib := slices.Index(order, a.target), slices.Index(order, b.target); ia != ib {
			return ia - ib
		}
		return viewRank(a.view) - viewRank(b.view)
	})
	var out []Chart
	var skipped []Skipped
	for _, k := range keys {
		var mine []telemetry.Sample
		for _, s := range in.Telemetry {
			if s.Target == k.target && s.View == k.view {
				mine = append(mine, s)
			}
		}
		name := stem(familyTelemetry, k.target, k.view)
		f, reason := telemetryFigure(in, k.target, k.view, mine)
		if f == nil {
			skipped = append(skipped, Skipped{name, reason})
			continue
		}
		out = append(out, chart(name, familyTelemetry, f))
	}
	return out, skipped
}

// segment is one cell run's stretch of the timeline.
type segment struct {
	cell           string
	repeat         int
	offset, length float64 // s
}

// cellLabel shortens a runner's cell name ("vm fp qos=9 threads=1
// loops=10000000") to what tells cell runs apart on the timeline: "fp q9 ×1
// r2". A name it cannot read is kept whole.
func cellLabel(cell string, repeat int) string {
	fields := strings.Fields(cell)
	if len(fields) < 2 {
		return cell + " r" + strconv.Itoa(repeat)
	}
	label := fields[1]
	for _, f := range fields[2:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "qos":
			label += " q" + v
		case "threads":
			label += " ×" + v
		}
	}
	return label + " r" + strconv.Itoa(repeat)
}

func telemetryFigure(in Input, target, view string, samples []telemetry.Sample) (*figure, string) {
	tl := newTimeline(samples)
	if len(tl.segs) == 0 || tl.total <= 0 {
		return nil, fmt.Sprintf("the %s view of %s cells has no samples taken during a cell run", view, target)
	}
	rows, read := scanCPUs(samples)
	if !read.busy && !read.mhz && !read.threads {
		return nil, fmt.Sprintf("the %s view of %s cells read no CPU busy share, frequency or thread time", view, target)
	}

	f := &figure{
		title: telemetryTitle(target, view, read.busy, read.mhz, read.threads),
		subtitle: runText(in) + "Cell runs placed end to end, each from its own start, boundaries marked; " +
			"labels: workload, q QoS, × threads, r repeat.",
	}
	if tl.between > 0 {
		f.notes = append(f.notes, fmt.Sprintf("%d samples taken between cell runs are left out.", tl.between))
	}
	bounds := &boundaries{}
	for _, s := range tl.segs[1:] {
		bounds.xs = append(bounds.xs, s.offset)
	}
	f.legend = append(f.legend, legendEntry{text: "cell run boundary", thumbs: []plot.Thumbnailer{lineThumb{bounds.style()}}})
	if read.busy || read.mhz {
		f.legend = append(f.legend, legendEntry{text: "no sample", thumbs: []plot.Thumbnailer{swatch{fill: color.White, outline: draw.LineStyle{Color: color.Gray{Y: 0x80}, Width: vg.Points(0.8)}}}})
	}

	if read.busy {
		busy := func(c telemetry.CPU) (float64, bool) {
			if c.Busy == nil {
				return 0, false
			}
			return clamp01(*c.Busy), true
		}
		f.panels = append(f.panels, heatPanel("Busy share per CPU (not idle over each interval)", busyRamp, busy, samples, tl, rows, bounds))
		f.legend = append(f.legend, legendEntry{text: "busy share: 0% (light) to 100% (dark)", thumbs: []plot.Thumbnailer{rampThumb{busyRamp}}})
	} else {
		f.notes = append(f.notes, "no per-CPU busy share was read, so that panel is left out.")
	}

	if read.mhz {
		lo, hi := mhzRange(samples)
		mhz := func(c telemetry.CPU) (float64, bool) {
			if c.MHz == nil {
				return 0, false
			}
			return (*c.MHz - lo) / (hi - lo), true
		}
		f.panels = append(f.panels, heatPanel("Frequency per CPU (MHz)", mhzRamp, mhz, samples, tl, rows, bounds))
		f.legend = append(f.legend, legendEntry{text: fmt.Sprintf("frequency: %.0f MHz (light) to %.0f MHz (dark)", lo, hi), thumbs: []plot.Thumbnailer{rampThumb{mhzRamp}}})
	} else {
		f.notes = append(f.notes, "no CPU frequency was read (no cpufreq in this "+view+", or the sampler cannot see it), so the MHz panel is left out.")
	}

	if read.threads {
		p := newPlot("", "busy (% of one CPU)")
		p.Title.Text = threadPanelTitle(target, view)
		entries := threadLines(p, samples, tl.at)
		p.Add(bounds)
		p.Y.Min, p.Y.Max = 0, 105
		p.Y.Tick.Marker = linearTicks{}
		f.panels = append(f.panels, panel{plot: p, height: 2.6 * vg.Inch})
		f.legend = append(f.legend, entries...)
	}

	last := f.panels[len(f.panels)-1].plot
	last.X.Label.Text = "time in cell runs, placed end to end (s)"
	for _, pn := range f.panels {
		pn.plot.X.Min, pn.plot.X.Max = 0, tl.total
		pn.plot.X.Tick.Marker = linearTicks{}
	}
	labelCellRuns(f, tl)
	return f, ""
}

// timeline places a view's cell runs end to end on one x axis, each from
// its own start.
type timeline struct {
	segs    []segment
	index   map[cellRun]int // into segs
	total   float64         // s, the runs' lengths added up
	between int             // samples taken between cell runs, left out
}

// cellRun names one run of a cell.
type cellRun struct {
	cell   string
	repeat int
}

// newTimeline lays out the cell runs of samples in the order their first
// samples come, each as long as its last sample's time into it.
func newTimeline(samples []telemetry.Sample) timeline {
	tl := timeline{index: map[cellRun]int{}}
	for _, s := range samples {
		if s.Cell == "" {
			tl.between++
			continue
		}
		k := cellRun{s.Cell, s.Repeat}
		i, ok := tl.index[k]
		if !ok {
			i = len(tl.segs)
			tl.index[k] = i
			tl.segs = append(tl.segs, segment{cell: s.Cell, repeat: s.Repeat})
		}
		tl.segs[i].length = max(tl.segs[i].length, float64(s.TNs)/1e9)
	}
	for i := range tl.segs {
		tl.segs[i].offset = tl.total
		tl.total += tl.segs[i].length
	}
	return tl
}

// at is where ns into the cell run of s falls on the timeline (s).
func (tl timeline) at(s telemetry.Sample, ns int64) float64 {
	seg := tl.segs[tl.index[cellRun{s.Cell, s.Repeat}]]
	return seg.offset + max(0, float64(ns))/1e9
}

// cpuRows are the rows of the per-CPU heat strips: every CPU seen, by id,
// and the core type of those that have one.
type cpuRows struct {
	ids   []int
	types map[int]string
}

// readings says what a view's samples read during sample intervals.
type readings struct{ busy, mhz, threads bool }

// scanCPUs finds the CPUs of samples and what was read of them and of
// the threads.
func scanCPUs(samples []telemetry.Sample) (cpuRows, readings) {
	rows := cpuRows{types: map[int]string{}}
	var read readings
	for _, s := range samples {
		for _, c := range s.CPUs {
			if !slices.Contains(rows.ids, c.ID) {
				rows.ids = append(rows.ids, c.ID)
			}
			if c.Type != "" {
				rows.types[c.ID] = c.Type
			}
			read.busy = read.busy || c.Busy != nil && s.IntervalNs > 0
			read.mhz = read.mhz || c.MHz != nil && s.IntervalNs > 0
		}
		for _, t := range s.Threads {
			read.threads = read.threads || t.Busy != nil && s.IntervalNs > 0
		}
	}
	sort.Ints(rows.ids)
	return rows, read
}

// label sets p's y axis to one row per CPU, labelled "CPU 3 P": every CPU
// when the rows are tall enough for the text, else every other or every
// fourth.
func (r cpuRows) label(p *plot.Plot) {
	var ticks plot.ConstantTicks
	step := 1
	for len(r.ids)/step > 16 {
		step *= 2
	}
	for i, id := range r.ids {
		t := plot.Tick{Value: float64(i)}
		if i%step == 0 {
			t.Label = "CPU " + strconv.Itoa(id)
			if ty := r.types[id]; ty != "" {
				t.Label += " " + ty
			}
		}
		ticks = append(ticks, t)
	}
	p.Y.Tick.Marker = ticks
	p.Y.Min, p.Y.Max = -0.5, float64(len(r.ids))-0.5
}

// height is a heat panel's: 0.3 in a row, within 1.7 to 4 in.
func (r cpuRows) height() vg.Length {
	return min(4*vg.Inch, max(1.7*vg.Inch, vg.Length(len(r.ids))*0.3*vg.Inch+0.9*vg.Inch))
}

// heatPanel draws a heat strip per CPU, a box per sample interval of the
// cell runs coloured by value (0..1 along ramp; false where the CPU has
// no reading), under the cell run boundaries.
func heatPanel(title string, ramp func(float64) color.Color, value func(telemetry.CPU) (float64, bool),
	samples []telemetry.Sample, tl timeline, rows cpuRows, bounds *boundaries) panel {
	h := &heat{ramp: ramp}
	for _, s := range samples {
		if s.Cell == "" || s.IntervalNs <= 0 {
			continue
		}
		for _, c := range s.CPUs {
			if v, ok := value(c); ok {
				h.cells = append(h.cells, heatCell{tl.at(s, s.TNs-s.IntervalNs), tl.at(s, s.TNs), slices.Index(rows.ids, c.ID), v})
			}
		}
	}
	h.cells = binHeat(h.cells, tl.total)
	p := newPlot("", "")
	p.Title.Text = title
	p.Add(h, bounds)
	rows.label(p)
	return panel{plot: p, height: rows.height()}
}

// mhzRange is the lowest and highest frequency read (0 and the one value
// when all are alike), the ends of the frequency ramp.
func mhzRange(samples []telemetry.Sample) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range samples {
		for _, c := range s.CPUs {
			if c.MHz != nil {
				lo, hi = min(lo, *c.MHz), max(hi, *c.MHz)
			}
		}
	}
	if hi <= lo {
		lo = 0
	}
	return lo, hi
}

// labelCellRuns sets f's header to the cell runs' labels over their
// stretches: lying flat when every cell run is wide enough for its label
// on a typical data width, else standing upright.
func labelCellRuns(f *figure, tl timeline) {
	labels := make([]string, len(tl.segs))
	var widest vg.Length
	sty := textStyle(noteSize)
	for i, s := range tl.segs {
		labels[i] = cellLabel(s.cell, s.repeat)
		widest = max(widest, sty.Width(labels[i]))
	}
	dataWidth := chartWidth - vg.Points(2*margin) - 1.3*vg.Inch
	upright := false
	for i, s := range tl.segs {
		if vg.Length(s.length/tl.total)*dataWidth < sty.Width(labels[i])+vg.Points(6) {
			upright = true
		}
	}
	f.headerHeight = lineHeight(sty) + vg.Points(4)
	if upright {
		f.headerHeight = min(widest, 1.6*vg.Inch) + vg.Points(8)
	}
	f.header = func(c draw.Canvas, dataX func(float64) vg.Length) {
		drawCellLabels(c, dataX, tl.segs, labels, upright)
	}
}

// telemetryTitle says whose cells, seen from where, and what is shown:
// "Telemetry of VM cells seen from the host: CPU busy share and frequency,
// vCPU threads".
func telemetryTitle(target, view string, busy, mhz, threads bool) string {
	who := "Telemetry of " + targetNoun(target) + " cells"
	if view != target {
		who += " seen from the " + view
	}
	var cpu []string
	if busy {
		cpu = append(cpu, "busy share")
	}
	if mhz {
		cpu = append(cpu, "frequency")
	}
	var parts []string
	if len(cpu) > 0 {
		parts = append(parts, "CPU "+strings.Join(cpu, " and "))
	}
	if threads {
		if isVCPUView(target, view) {
			parts = append(parts, "vCPU threads")
		} else {
			parts = append(parts, "workload threads")
		}
	}
	return who + ": " + strings.Join(parts, ", ")
}

// targetNoun names a target inside a sentence: "host", "VM".
func targetNoun(target string) string {
	if strings.EqualFold(target, "vm") {
		return render.TargetLabel(target)
	}
	return target
}

// isVCPUView reports whether the threads of interest are a VM's vCPU
// threads: the host's view of a VM cell.
func isVCPUView(target, view string) bool {
	return view == telemetry.ViewHost && strings.EqualFold(target, "vm")
}

func threadPanelTitle(target, view string) string {
	if isVCPUView(target, view) {
		return "The VM's vCPU threads on the host: busy share of one CPU"
	}
	return "Workload threads: busy share of one CPU"
}

// threadLines adds one line per thread role (a vCPU, a worker) per cell run,
// broken at cell boundaries because workers are new threads in each cell
// run, and returns a legend entry per role with the scheduling policies it
// ran under: a vCPU thread's policy is what decides the guest's speed.
func threadLines(p *plot.Plot, samples []telemetry.Sample, at func(telemetry.Sample, int64) float64) []legendEntry {
	type run struct {
		role string
		cell string
		rep  int
	}
	var roles []string
	policies := map[string][]string{}
	var runs []run
	points := map[run]plotter.XYs{}
	for _, s := range samples {
		if s.Cell == "" || s.IntervalNs <= 0 {
			continue
		}
		for _, t := range s.Threads {
			if t.Busy == nil {
				continue
			}
			role := t.Role
			if role == "" {
				role = "tid " + strconv.Itoa(t.TID)
			}
			if !slices.Contains(roles, role) {
				roles = append(roles, role)
			}
			if t.Policy != "" && !slices.Contains(policies[role], t.Policy) {
				policies[role] = append(policies[role], t.Policy)
			}
			r := run{role, s.Cell, s.Repeat}
			if _, ok := points[r]; !ok {
				runs = append(runs, r)
			}
			points[r] = append(points[r], plotter.XY{X: at(s, s.TNs), Y: 100 * max(0, *t.Busy)})
		}
	}
	slices.SortStableFunc(roles, compareNatural)
	styles := map[string]draw.LineStyle{}
	for i, role := range roles {
		styles[role] = draw.LineStyle{Color: threadColor(i), Width: vg.Points(lineWidth), Dashes: threadDashes(i)}
	}
	for _, r := range runs {
		if len(points[r]) >= 1 {
			p.Add(&plotter.Line{XYs: points[r], LineStyle: styles[r.role]})
		}
	}
	var out []legendEntry
	const most = 12
	for i, role := range roles {
		if i == most {
			out = append(out, legendEntry{text: fmt.Sprintf("and %d more threads", len(roles)-most)})
			break
		}
		text := role
		if pol := policies[role]; len(pol) > 0 {
			words := make([]string, len(pol))
			for i, p := range pol {
				words[i] = telemetry.PolicyText(p)
			}
			text += ": " + strings.Join(words, "; ")
		}
		out = append(out, legendEntry{text: text, thumbs: []plot.Thumbnailer{lineThumb{styles[role]}}})
	}
	return out
}

// compareNatural orders "vcpu 2" before "vcpu 10".
func compareNatural(a, b string) int {
	pa, na := splitNumber(a)
	pb, nb := splitNumber(b)
	if pa != pb {
		return strings.Compare(pa, pb)
	}
	return na - nb
}

func splitNumber(s string) (string, int) {
	i := strings.LastIndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return s, 0
	}
	return s[:i+1], n
}

// Thread lines take the Okabe-Ito colours (distinct for colour-blind
// readers) and, for grayscale, a dash pattern each.
func threadColor(i int) color.Color {
	okabeIto := []color.RGBA{
		{R: 0x00, G: 0x00, B: 0x00, A: 0xff},
		{R: 0x00, G: 0x72, B: 0xb2, A: 0xff},
		{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff},
		{R: 0x00, G: 0x9e, B: 0x73, A: 0xff},
		{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff},
		{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff},
		{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff},
	}
	return okabeIto[i%len(okabeIto)]
}

func threadDashes(i int) []vg.Length {
	patterns := [][]vg.Length{nil, {vg.Points(9), vg.Points(5)}, {vg.Points(2), vg.Points(4)}, {vg.Points(9), vg.Points(4), vg.Points(2), vg.Points(4)}}
	return patterns[i%len(patterns)]
}

func clamp01(v float64) float64 { return max(0, min(1, v)) }

// drawCellLabels writes each cell run's label over its stretch, skipping a
// label that would run into the one before it (the boundaries still show).
func drawCellLabels(c draw.Canvas, dataX func(float64) vg.Length, segs []segment, labels []string, upright bool) {
	sty := textStyle(noteSize)
	end := c.Min.X - vg.Points(100)
	for i, s := range segs {
		x := dataX(s.offset + s.length/2)
		if upright {
			h := lineHeight(sty)
			if x-h/2 < end {
				continue
			}
			st := sty
			st.Rotation = math.Pi / 2
			st.XAlign, st.YAlign = draw.XLeft, draw.YCenter
			c.FillText(st, vg.Point{X: x, Y: c.Min.Y + vg.Points(4)}, labels[i])
			end = x + h/2
			continue
		}
		w := sty.Width(labels[i])
		if x-w/2 < end {
			continue
		}
		st := sty
		st.XAlign = draw.XCenter
		c.FillText(st, vg.Point{X: x, Y: c.Min.Y + vg.Points(4)}, labels[i])
		end = x + w/2 + vg.Points(6)
	}
}

// heat draws one coloured box per CPU and sample interval.
type heat struct {
	cells []heatCell
	ramp  func(float64) color.Color
}

type heatCell struct {
	x0, x1 float64
	row    int
	v      float64 // 0..1 along the ramp
}

func (h *heat) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, hc := range h.cells {
		// A hair wider and taller than exact, so that anti-aliasing leaves
		// no pale seams between neighbouring boxes.
		x0, x1 := trX(hc.x0)-vg.Points(0.3), trX(hc.x1)+vg.Points(0.3)
		y0, y1 := trY(float64(hc.row)-0.5)-vg.Points(0.3), trY(float64(hc.row)+0.5)+vg.Points(0.3)
		pts := []vg.Point{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}}
		c.FillPolygon(h.ramp(hc.v), c.ClipPolygonXY(pts))
	}
}

// maxColumns bounds the boxes a heat row holds: about one per pixel of a
// 1200 px chart. An hour sampled at 10 Hz on 24 CPUs is 864,000 boxes,
// which no one can see and which makes an SVG of tens of megabytes.
const maxColumns = 1000

// binHeat returns cells unchanged when no row has more than maxColumns of
// them; else it averages each row over maxColumns equal stretches of [0, total],
// weighting each cell by the time it covers (a cell counts in the stretch
// its middle falls in).
func binHeat(cells []heatCell, total float64) []heatCell {
	const bins = maxColumns
	perRow := map[int]int{}
	most := 0
	for _, c := range cells {
		perRow[c.row]++
		most = max(most, perRow[c.row])
	}
	if most <= bins || total <= 0 {
		return cells
	}
	type key struct{ row, bin int }
	sum, weight := map[key]float64{}, map[key]float64{}
	var order []key
	width := total / float64(bins)
	for _, c := range cells {
		k := key{c.row, min(bins-1, max(0, int((c.x0+c.x1)/2/width)))}
		if _, ok := weight[k]; !ok {
			order = append(order, k)
		}
		w := max(c.x1-c.x0, 1e-12)
		sum[k] += c.v * w
		weight[k] += w
	}
	out := make([]heatCell, 0, len(order))
	for _, k := range order {
		out = append(out, heatCell{x0: float64(k.bin) * width, x1: float64(k.bin+1) * width, row: k.row, v: sum[k] / weight[k]})
	}
	return out
}

// boundaries marks where one cell run ends and the next begins.
type boundaries struct{ xs []float64 }

func (b *boundaries) style() draw.LineStyle {
	return draw.LineStyle{Color: color.RGBA{R: 0xd0, G: 0x10, B: 0x30, A: 0xff}, Width: vg.Points(1.4), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
}

func (b *boundaries) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, x := range b.xs {
		c.StrokeLine2(b.style(), trX(x), c.Min.Y, trX(x), c.Max.Y)
	}
}

// Ramps from light to dark: ColorBrewer's Blues for busy share, YlOrRd for
// frequency, so that the two panels are told apart and each reads in
// grayscale.
func busyRamp(v float64) color.Color {
	return rampAt(v, []color.RGBA{{R: 0xef, G: 0xf3, B: 0xff, A: 0xff}, {R: 0xbd, G: 0xd7, B: 0xe7, A: 0xff}, {R: 0x6b, G: 0xae, B: 0xd6, A: 0xff}, {R: 0x21, G: 0x71, B: 0xb5, A: 0xff}, {R: 0x08, G: 0x30, B: 0x6b, A: 0xff}})
}

func mhzRamp(v float64) color.Color {
	return rampAt(v, []color.RGBA{{R: 0xff, G: 0xff, B: 0xcc, A: 0xff}, {R: 0xfe, G: 0xd9, B: 0x76, A: 0xff}, {R: 0xfd, G: 0x8d, B: 0x3c, A: 0xff}, {R: 0xe3, G: 0x1a, B: 0x1c, A: 0xff}, {R: 0x80, G: 0x00, B: 0x26, A: 0xff}})
}

func rampAt(v float64, stops []color.RGBA) color.Color {
	if math.IsNaN(v) {
		v = 0
	}
	v = clamp01(v)
	pos := v * float64(len(stops)-1)
	i := min(int(pos), len(stops)-2)
	t := pos - float64(i)
	a, b := stops[i], stops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + t*(float64(y)-float64(x)))) }
	return color.RGBA{R: mix(a.R, b.R), G: mix(a.G, b.G), B: mix(a.B, b.B), A: 0xff}
}

// rampThumb shows a ramp as a gradient, light at the left.
type rampThumb struct{ ramp func(float64) color.Color }

func (r rampThumb) Thumbnail(c *draw.Canvas) {
	const n = 12
	w := c.Size().X / n
	for i := range n {
		x := c.Min.X + vg.Length(i)*w
		rect := vg.Rectangle{Min: vg.Point{X: x, Y: c.Min.Y + vg.Points(1)}, Max: vg.Point{X: x + w + vg.Points(0.3), Y: c.Max.Y - vg.Points(1)}}
		c.SetColor(r.ramp(float64(i) / (n - 1)))
		c.Fill(rect.Path())
	}
}
