// Package analysis computes statistics over measured samples: pure functions,
// no I/O.
package analysis

import (
	"math"
	"sort"
)

// Confidence is the coverage asked of every confidence interval here.
const Confidence = 0.95

// OrderStats is a set of measurements' order statistics: how many, the
// median with its confidence interval, min and max. (A run's summary, what
// its summary files say, is summary.Summary.)
type OrderStats struct {
	N      int   `json:"n"`
	Median Float `json:"median"`
	Min    Float `json:"min"`
	Max    Float `json:"max"`
	// CILow and CIHigh bound the median's confidence interval (medianCI at
	// Confidence); CIConfidence is the coverage actually reached, below
	// Confidence when there are too few measurements to reach it.
	CILow        Float `json:"ci_low"`
	CIHigh       Float `json:"ci_high"`
	CIConfidence Float `json:"ci_confidence"`
}

// OrderStatsOf returns n, median (mean of the middle two for even n), min, max
// and the median's confidence interval (medianCI at Confidence); NaN values
// are ignored. An empty input gives N=0 and NaN statistics.
func OrderStatsOf(xs []float64) OrderStats {
	v := sortedFinite(xs)
	if len(v) == 0 {
		nan := Float(math.NaN())
		return OrderStats{Median: nan, Min: nan, Max: nan, CILow: nan, CIHigh: nan, CIConfidence: nan}
	}
	n := len(v)
	ci := medianCISorted(v, Confidence)
	return OrderStats{N: n, Median: Float(median(v)), Min: Float(v[0]), Max: Float(v[n-1]), CILow: ci.Low, CIHigh: ci.High, CIConfidence: ci.Confidence}
}

// sortedFinite returns a sorted copy of xs without its NaNs.
func sortedFinite(xs []float64) []float64 {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	sort.Float64s(v)
	return v
}

// median of sorted, non-empty v: the middle value, or the mean of the middle
// two.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[n/2]
}

// confidenceInterval is an interval and the probability that it covers the
// true value.
type confidenceInterval struct {
	Low        Float `json:"low"`
	High       Float `json:"high"`
	Confidence Float `json:"confidence"`
}

// medianCI returns a confidence interval for the population median by the
// distribution-free order-statistic method: [x(k), x(n+1-k)] of the sorted
// sample, with k from medianCIOrder. Its coverage is exact for any
// continuous distribution (the count of measurements below the median is
// Binomial(n, 1/2)), so it needs no normality, which benchmark times lack.
// When n is too small to reach the confidence asked for (n <= 5 at 95%),
// it returns the widest interval the sample has, [min, max], with the lower
// confidence that interval actually has, rather than an infinite one. NaNs are
// ignored; an empty sample gives NaNs.
func medianCI(xs []float64, confidence float64) confidenceInterval {
	v := sortedFinite(xs)
	if len(v) == 0 {
		nan := Float(math.NaN())
		return confidenceInterval{Low: nan, High: nan, Confidence: nan}
	}
	return medianCISorted(v, confidence)
}

func medianCISorted(v []float64, confidence float64) confidenceInterval {
	n := len(v)
	k, cov := medianCIOrder(n, confidence)
	return confidenceInterval{Low: Float(v[k-1]), High: Float(v[n-k]), Confidence: Float(cov)}
}

// medianCIOrder returns the 1-based order k of the narrowest symmetric
// interval [x(k), x(n+1-k)] whose coverage of the median, 1 - 2·P(B <= k-1)
// for B ~ Binomial(n, 1/2), is at least confidence, and that coverage. When
// even [x(1), x(n)] falls short it returns k=1 and that interval's coverage
// (0 for n=1). It returns k=0 and NaN for n < 1.
func medianCIOrder(n int, confidence float64) (k int, coverage float64) {
	if n < 1 {
		return 0, math.NaN()
	}
	k, coverage = 1, 1-2*binomialHalfCDF(n, 0)
	// Coverage falls as k grows, so walk inward while the next k still
	// reaches the confidence asked for; the interval stays non-empty.
	cdf := binomialHalfCDF(n, 0)
	for j := 2; 2*j <= n+1; j++ {
		cdf += binomialHalfPMF(n, j-1)
		c := 1 - 2*cdf
		if c < confidence {
			break
		}
		k, coverage = j, c
	}
	return k, coverage
}

// binomialHalfPMF is P(B = i) for B ~ Binomial(n, 1/2), through log-gamma so
// that large n neither overflows C(n, i) nor underflows 2^-n.
func binomialHalfPMF(n, i int) float64 {
	if i < 0 || i > n {
		return 0
	}
	ln, _ := math.Lgamma(float64(n + 1))
	li, _ := math.Lgamma(float64(i + 1))
	lr, _ := math.Lgamma(float64(n - i + 1))
	return math.Exp(ln - li - lr - float64(n)*math.Ln2)
}

// binomialHalfCDF is P(B <= j) for B ~ Binomial(n, 1/2).
func binomialHalfCDF(n, j int) float64 {
	var p float64
	for i := 0; i <= j && i <= n; i++ {
		p += binomialHalfPMF(n, i)
	}
	return p
}

// interval is one thread's measured interval, its work and the CPU time
// it consumed in it (0: not recorded).
type interval struct {
	StartNs, EndNs int64
	Work           float64
	CPUNs          int64
}

// totalRate is a cell's throughput: all work done divided by the time from
// the first thread's start to the last thread's end (the way the articles
// in docs/references.md time a batch of threads). It is 0 for an empty or
// zero-length cell.
func totalRate(iv []interval) (rate float64, elapsedNs int64) {
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
