package plot

import (
	"slices"
	"sort"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

func isCompression(w string) bool {
	return catalog.IsCompression(w)
}

// isCompute reports whether a workload is a thread-scaling one (fp, int,
// mmul, pi, and any later one that is not compression or processes): those
// get throughput, thread-time and elapsed charts.
func isCompute(w string) bool {
	return catalog.Lookup(w).Kind != catalog.KindCompression && catalog.Lookup(w).Kind != catalog.KindProcs
}

// series is one (target, QoS) of one chart.
type series struct {
	target string
	qos    int
}

// seriesOf lists the (target, QoS) pairs the cells hold, targets host
// first and classes ascending, and the targets that are neither host nor vm
// (for their colours).
func seriesOf(cells []analysis.Cell) ([]series, []string) {
	var targets []string
	classes := map[string][]int{}
	for _, c := range cells {
		if !slices.Contains(targets, c.Target) {
			targets = append(targets, c.Target)
		}
		if !slices.Contains(classes[c.Target], c.QoS) {
			classes[c.Target] = append(classes[c.Target], c.QoS)
		}
	}
	var out []series
	for _, t := range targetOrder(targets) {
		qs := classes[t]
		sort.Ints(qs)
		for _, q := range qs {
			out = append(out, series{t, q})
		}
	}
	return out, otherTargets(targets)
}

// workloadsOf lists the workloads of cells that keep is true for, in the
// order they first appear.
func workloadsOf(cells []analysis.Cell, keep func(string) bool) []string {
	var out []string
	for _, c := range cells {
		if keep(c.Workload) && !slices.Contains(out, c.Workload) {
			out = append(out, c.Workload)
		}
	}
	return out
}

func cellsOf(cells []analysis.Cell, keep func(analysis.Cell) bool) []analysis.Cell {
	var out []analysis.Cell
	for _, c := range cells {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

func samplesOf(samples []results.Sample, keep func(results.Sample) bool) []results.Sample {
	var out []results.Sample
	for _, s := range samples {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// threadCounts lists the distinct thread counts of cells.
func threadCounts(cells []analysis.Cell) []int {
	var out []int
	for _, c := range cells {
		if !slices.Contains(out, c.Threads) {
			out = append(out, c.Threads)
		}
	}
	sort.Ints(out)
	return out
}

// dodge spreads n series sideways around an x value, within a total width,
// so that markers and error bars at the same x stay visible; i is the
// series' position.
func dodge(i, n int, width float64) float64 {
	if n <= 1 {
		return 0
	}
	return (float64(i)/float64(n-1) - 0.5) * width
}
