package plot

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/qoslab/qoslab/internal/results"
)

// familyThreadTimes is the family of each thread's completion time per compute workload and target.
const familyThreadTimes = "thread-times"

func init() {
	register(family{name: familyThreadTimes, rank: 30, build: threadTimeCharts,
		lacks: "no thread-scaling workload (fp, int, mmul, pi) in this run"})
}

// threadTimeCharts draws, per compute workload and target, when each thread
// of each repeat finished, to show stragglers as reference 000 found them
// (2.03, 2.03, 3.42 s: one thread far behind its peers).
//
// The layout: x is the cell's thread count, so cells read in the order they
// scale; at each count the QoS classes sit side by side and, within a
// class, the repeats, so no repeat hides another. A vertical line joins each
// repeat's first and last finisher: a repeat without stragglers is a dot or
// a short line, one with a straggler a long line with a lone point at its
// top. One chart per target keeps each chart's columns few enough to read;
// putting host and VM side by side would double them.
func threadTimeCharts(in Input) ([]Chart, []Skipped) {
	samples := samplesOf(in.Samples, func(s results.Sample) bool { return isCompute(s.Workload) && s.Phase == "" })
	if len(samples) == 0 {
		return nil, nil // the family's lacks says why
	}
	var skipped []Skipped
	timed := durationWorkloads(samples)
	for _, w := range workloadsOfSamples(samples) {
		if d, ok := timed[w]; ok {
			for _, t := range targetOrder(targetsOfSamples(samples, w)) {
				skipped = append(skipped, Skipped{stem(familyThreadTimes, w, t), durationReason(w, d)})
			}
		}
	}
	samples = samplesOf(samples, func(s results.Sample) bool { return s.DurationNs == 0 })
	type key struct{ workload, target string }
	var keys []key
	var targets []string
	for _, s := range samples {
		if k := (key{s.Workload, s.Target}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		if !slices.Contains(targets, s.Target) {
			targets = append(targets, s.Target)
		}
	}
	// Workloads in the order they ran, host before vm within each.
	var ordered []key
	for _, w := range workloadsOfSamples(samples) {
		for _, t := range targetOrder(targets) {
			if slices.Contains(keys, key{w, t}) {
				ordered = append(ordered, key{w, t})
			}
		}
	}
	others := otherTargets(targets)
	var out []Chart
	for _, k := range ordered {
		mine := samplesOf(samples, func(s results.Sample) bool { return s.Workload == k.workload && s.Target == k.target })
		name := stem(familyThreadTimes, k.workload, k.target)
		out = append(out, chart(name, familyThreadTimes, threadTimeFigure(in, k.workload, k.target, others, mine)))
	}
	return out, skipped
}

// durationWorkloads maps each workload that ran fixed-duration cells to
// its duration (the longest, should a run mix them).
func durationWorkloads(samples []results.Sample) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, s := range samples {
		if s.DurationNs > 0 {
			out[s.Workload] = max(out[s.Workload], time.Duration(s.DurationNs))
		}
	}
	return out
}

// durationReason is why a completion-time chart of a fixed-duration
// workload is not drawn.
func durationReason(w string, d time.Duration) string {
	return fmt.Sprintf("%s ran for a fixed duration (%s): every thread ends at the deadline by design, so completion times say nothing; compare its rates", w, d)
}

func targetsOfSamples(samples []results.Sample, w string) []string {
	var out []string
	for _, s := range samples {
		if s.Workload == w && !slices.Contains(out, s.Target) {
			out = append(out, s.Target)
		}
	}
	return out
}

func workloadsOfSamples(samples []results.Sample) []string {
	var out []string
	for _, s := range samples {
		if !slices.Contains(out, s.Workload) {
			out = append(out, s.Workload)
		}
	}
	return out
}

func threadTimeFigure(in Input, workload, target string, others []string, samples []results.Sample) *figure {
	var classes, counts, repeats []int
	for _, s := range samples {
		for _, x := range []struct {
			list *[]int
			v    int
		}{{&classes, s.QoS}, {&counts, s.Threads}, {&repeats, s.Repeat}} {
			if !slices.Contains(*x.list, x.v) {
				*x.list = append(*x.list, x.v)
			}
		}
	}
	sort.Ints(classes)
	sort.Ints(repeats)

	const groupWidth = 0.7 // of the one thread between two counts
	slot := groupWidth / float64(len(classes))
	xOf := func(s results.Sample) float64 {
		qi, ri := slices.Index(classes, s.QoS), slices.Index(repeats, s.Repeat)
		return float64(s.Threads) - groupWidth/2 + slot*(float64(qi)+0.5) + dodge(ri, len(repeats), slot*0.6)
	}

	p := newPlot(fmt.Sprintf("threads in the cell (at each count: QoS classes left to right, then repeats %s)", repeatRange(repeats)), "")
	f := &figure{
		title: fmt.Sprintf("%s %s: when each thread finished, by thread count and QoS", workload, targetPhrase(target)),
		subtitle: runText(in) + "One point per thread and repeat, at its end in s since the cell began; " +
			"a vertical line spans each repeat's first to last finisher, so a straggler is a long line with a lone point on top.",
	}
	var ends []float64
	for _, c := range classes {
		type run struct{ threads, repeat int }
		lo, hi := map[run]float64{}, map[run]float64{}
		var order []run // the maps' keys as first seen, for output that is the same every time
		var xys plotter.XYs
		for _, s := range samples {
			if s.QoS != c {
				continue
			}
			y := float64(s.EndNs) / 1e9
			xys = append(xys, plotter.XY{X: xOf(s), Y: y})
			ends = append(ends, y)
			r := run{s.Threads, s.Repeat}
			if _, ok := lo[r]; !ok {
				order = append(order, r)
			}
			if v, ok := lo[r]; !ok || y < v {
				lo[r] = y
			}
			if v, ok := hi[r]; !ok || y > v {
				hi[r] = y
			}
		}
		ls := lineStyle(target, others, c)
		ls.Width = vg.Points(1.6)
		for _, r := range order {
			if hi[r] > lo[r] {
				x := xOf(results.Sample{QoS: c, Threads: r.threads, Repeat: r.repeat})
				p.Add(&plotter.Line{XYs: plotter.XYs{{X: x, Y: lo[r]}, {X: x, Y: hi[r]}}, LineStyle: ls})
			}
		}
		pts := &plotter.Scatter{XYs: xys, GlyphStyle: glyphStyle(target, others, c)}
		p.Add(pts)
		f.legend = append(f.legend, legendEntry{
			text:   seriesText(target, c) + ": thread ends; line: first to last in a repeat",
			thumbs: []plot.Thumbnailer{lineThumb{ls}, glyphThumb{pts.GlyphStyle}},
		})
	}
	isLog := valueAxis(&p.Y, ends, false)
	p.Y.Label.Text = "thread end since cell start (s" + logNote(isLog) + ")"
	countAxis(&p.X, counts)
	f.panels = []panel{{plot: p, height: 5.2 * vg.Inch}}
	return f
}

func repeatRange(repeats []int) string {
	if len(repeats) == 0 {
		return ""
	}
	if len(repeats) == 1 {
		return fmt.Sprint(repeats[0])
	}
	return fmt.Sprintf("%d–%d", repeats[0], repeats[len(repeats)-1])
}

// targetPhrase says where a workload ran: "on the host", "in the VM".
func targetPhrase(target string) string {
	switch target {
	case "host":
		return "on the host"
	case "vm":
		return "in the VM"
	}
	return "on " + target
}
