// Package analysis computes statistics over measured samples: pure functions,
// no I/O.
package analysis

import (
	"math"
	"sort"
)

// Summary is the order statistics of a set of measurements.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize returns n, median (mean of the middle two for even n), min and max;
// NaN values are ignored. An empty input gives N=0 and NaN statistics.
func Summarize(xs []float64) Summary {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return Summary{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	sort.Float64s(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return Summary{N: n, Median: med, Min: v[0], Max: v[n-1]}
}

// Interval is one thread's measured interval and work.
type Interval struct {
	StartNs, EndNs int64
	Work           float64
}

// TotalRate is a cell's throughput: all work done divided by the time from
// the first thread's start to the last thread's end (the way the reference
// articles time a batch of threads). It is 0 for an empty or zero-length cell.
func TotalRate(iv []Interval) (rate float64, elapsedNs int64) {
	if len(iv) == 0 {
		return 0, 0
	}
	first, last := iv[0].StartNs, iv[0].EndNs
	var work float64
	for _, x := range iv {
		first = min(first, x.StartNs)
		last = max(last, x.EndNs)
		work += x.Work
	}
	elapsedNs = last - first
	if elapsedNs <= 0 {
		return 0, elapsedNs
	}
	return work / (float64(elapsedNs) / 1e9), elapsedNs
}
