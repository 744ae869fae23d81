package plot

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// familyProcessTimes is the family of each process's completion time per procs count.
const familyProcessTimes = "process-times"

func init() {
	register(family{name: familyProcessTimes, rank: 40, build: processTimeCharts,
		lacks: "no procs workload in this run"})
}

// processTimeCharts draws each process's completion time against its index
// in launch order, as reference 004 does: when the OS runs processes in
// batches, their ends climb in steps, one step per batch. One chart per
// process count, since processes 1-10 of a 10-process run and of a
// 70-process run are different experiments.
func processTimeCharts(in Input) ([]Chart, []Skipped) {
	samples := samplesOf(in.Samples, func(s results.Sample) bool { return s.Workload == catalog.Procs })
	if len(samples) == 0 {
		return nil, nil // the family's lacks says why
	}
	var counts []int
	for _, s := range samples {
		if !slices.Contains(counts, s.Threads) {
			counts = append(counts, s.Threads)
		}
	}
	sort.Ints(counts)
	var out []Chart
	for _, n := range counts {
		name := familyProcessTimes
		if len(counts) > 1 {
			name = stem(familyProcessTimes, strconv.Itoa(n))
		}
		mine := samplesOf(samples, func(s results.Sample) bool { return s.Threads == n })
		out = append(out, chart(name, familyProcessTimes, processTimeFigure(in, n, mine)))
	}
	return out, nil
}

func processTimeFigure(in Input, n int, samples []results.Sample) *figure {
	var targets []string
	for _, s := range samples {
		if !slices.Contains(targets, s.Target) {
			targets = append(targets, s.Target)
		}
	}
	others := otherTargets(targets)
	var list []series
	var repeats []int
	for _, t := range targetOrder(targets) {
		var classes []int
		for _, s := range samples {
			if s.Target == t && !slices.Contains(classes, s.QoS) {
				classes = append(classes, s.QoS)
			}
			if !slices.Contains(repeats, s.Repeat) {
				repeats = append(repeats, s.Repeat)
			}
		}
		sort.Ints(classes)
		for _, c := range classes {
			list = append(list, series{t, c})
		}
	}

	p := newPlot("process number, in launch order", "")
	f := &figure{
		title: fmt.Sprintf("%d processes: completion time of each process, host vs VM at each QoS", n),
		subtitle: runText(in) + fmt.Sprintf("One point per process and repeat (%d repeats), at its end in s since the cell began; "+
			"the line joins each process's median over repeats. Processes the OS runs in batches finish in steps.", len(repeats)),
	}
	var ends []float64
	var indexes []int
	for _, se := range list {
		byIndex := map[int][]float64{}
		var xys plotter.XYs
		for _, s := range samples {
			if s.Target != se.target || s.QoS != se.qos {
				continue
			}
			y := float64(s.EndNs) / 1e9
			// Numbered from 1, as reference 004 counts processes.
			xys = append(xys, plotter.XY{X: float64(s.Index + 1), Y: y})
			byIndex[s.Index+1] = append(byIndex[s.Index+1], y)
			ends = append(ends, y)
			if !slices.Contains(indexes, s.Index+1) {
				indexes = append(indexes, s.Index+1)
			}
		}
		var line plotter.XYs
		for _, i := range sortedKeys(byIndex) {
			line = append(line, plotter.XY{X: float64(i), Y: float64(analysis.OrderStatsOf(byIndex[i]).Median)})
		}
		ls := lineStyle(se.target, others, se.qos)
		if len(line) >= 2 {
			p.Add(&plotter.Line{XYs: line, LineStyle: ls})
		}
		pts := &plotter.Scatter{XYs: xys, GlyphStyle: glyphStyle(se.target, others, se.qos)}
		p.Add(pts)
		f.legend = append(f.legend, legendEntry{text: seriesText(se.target, se.qos), thumbs: []plot.Thumbnailer{lineThumb{ls}, glyphThumb{pts.GlyphStyle}}})
	}
	isLog := valueAxis(&p.Y, ends, false)
	p.Y.Label.Text = "process end since cell start (s" + logNote(isLog) + ")"
	countAxis(&p.X, indexes)
	f.panels = []panel{{plot: p, height: 5.2 * vg.Inch}}
	return f
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
