package analysis

import (
	"math"
	"slices"
)

// Shift is the Hodges-Lehmann estimate of how far one sample lies above
// another, with its distribution-free confidence interval: here, of
// ln(rate) at a high QoS class over a low one, so exp(Estimate) is the
// ratio of the two classes' rates.
//
// Stratified (by thread count), the differences are taken only within a
// stratum, pooled, and the estimate is their median; the interval inverts
// the stratified rank-sum test (the sum of the strata's U), as R's
// wilcox.test(conf.int = TRUE) does for one stratum: its bounds are the
// k-th smallest and k-th largest pooled difference, k the smallest count
// whose lower tail under the null reaches (1 - Confidence)/2. The null
// distribution is exact (the convolution of the strata's) without ties and
// under 50 per sample, else normal.
type Shift struct {
	Estimate Float `json:"estimate"`
	Low      Float `json:"low"`
	High     Float `json:"high"`
	// Confidence is the coverage the interval reaches: below Confidence
	// when the samples are too small to reach it (then the interval is
	// the range of the differences).
	Confidence Float `json:"confidence"`
	// Pairs counts the within-stratum differences.
	Pairs int `json:"pairs"`
}

// LogShift is the stratified Shift of ln(x) over ln(y), stratum by
// stratum (xs[i] against ys[i]); non-positive and NaN values, which have no
// logarithm, are left out. Without a pair every field is NaN.
func LogShift(xs, ys [][]float64) Shift {
	nan := Float(math.NaN())
	out := Shift{Estimate: nan, Low: nan, High: nan, Confidence: nan}
	var diffs []float64
	var sizes [][2]int
	exact := true
	for i := range min(len(xs), len(ys)) {
		x, y := logs(xs[i]), logs(ys[i])
		if len(x) == 0 || len(y) == 0 {
			continue
		}
		for _, a := range x {
			for _, b := range y {
				diffs = append(diffs, a-b)
			}
		}
		sizes = append(sizes, [2]int{len(x), len(y)})
		if len(x) >= exactLimit || len(y) >= exactLimit || hasTies(x, y) {
			exact = false
		}
	}
	if len(diffs) == 0 {
		return out
	}
	slices.Sort(diffs)
	m := len(diffs)
	out.Pairs = m
	out.Estimate = Float(median(diffs))
	alpha := 1 - Confidence
	var k int
	var achieved float64
	if exact {
		dist := []float64{1}
		for _, s := range sizes {
			dist = convolve(dist, uNullDist(s[0], s[1]))
		}
		cdf := 0.0
		k = len(dist) - 1
		for q, p := range dist {
			cdf += p
			if cdf >= alpha/2 {
				k = q
				break
			}
		}
		if k == 0 {
			k = 1
		}
		below := 0.0 // P(U <= k-1)
		for q := 0; q < k && q < len(dist); q++ {
			below += dist[q]
		}
		achieved = 1 - 2*below
	} else {
		var mean, variance float64
		for _, s := range sizes {
			a, b := float64(s[0]), float64(s[1])
			mean += a * b / 2
			variance += a * b * (a + b + 1) / 12
		}
		z := normalQuantile(1 - alpha/2)
		k = max(1, int(math.Floor(mean-z*math.Sqrt(variance))))
		achieved = Confidence
	}
	k = min(k, (m+1)/2)
	out.Low, out.High = Float(diffs[k-1]), Float(diffs[m-k])
	out.Confidence = Float(achieved)
	return out
}

func logs(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if x > 0 && !math.IsInf(x, 0) {
			out = append(out, math.Log(x))
		}
	}
	return out
}

func hasTies(x, y []float64) bool {
	seen := map[float64]bool{}
	for _, v := range append(slices.Clone(x), y...) {
		if seen[v] {
			return true
		}
		seen[v] = true
	}
	return false
}

// normalQuantile is the standard normal quantile function (inverse CDF).
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// SmallestP is the smallest two-sided p value the exact (stratified)
// rank-sum test can reach with these sample sizes, one pair (m, n) per
// stratum: every x above every y in every stratum, which has probability
// the product of 1/C(m+n, m). With 3 repeats against 3 at one thread count
// it is 0.1: no difference, however large, is significant at 0.05.
func SmallestP(sizes [][2]int) float64 {
	if len(sizes) == 0 {
		return math.NaN()
	}
	p := 1.0
	for _, s := range sizes {
		p /= binomial(s[0]+s[1], s[0])
	}
	return math.Min(1, 2*p)
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}
