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
// stratum, pooled, and the estimate is their median; the interval is the
// set of shifts the stratified rank-sum test (the sum of the strata's U)
// does not reject, as R's wilcox.test(conf.int = TRUE) has it for one
// stratum. How its null distribution is had (Method):
//
//   - "exact": no ties and every sample under 50: the bounds are the k-th
//     smallest and k-th largest pooled difference, k the smallest count
//     whose lower tail under the convolution of the strata's exact
//     distributions reaches (1 - confidence)/2;
//   - "exact conditional": with ties (equal rates in a stratum) and every
//     sample under 50, the test is inverted shift by shift: at every shift
//     between and at the pooled differences the exact conditional
//     distribution given that shift's ties decides, and the interval spans
//     every shift not rejected, so its coverage is at least the confidence
//     asked whatever the ties;
//   - "exact, ties bounded": the same with too many repeats to invert in
//     reasonable time: the untied k on the closed interval, whose coverage
//     with ties is at least the untied one (Noether 1967);
//   - "normal": a sample of 50 or more: k from the normal approximation with
//     the tie-corrected variance, and the coverage it reaches under it.
type Shift struct {
	Estimate Float `json:"estimate"`
	Low      Float `json:"low"`
	High     Float `json:"high"`
	// Confidence is the coverage the interval reaches (at least): below
	// the coverage asked when the samples are too small to reach it (then
	// the interval is the range of the differences).
	Confidence Float `json:"confidence"`
	// Pairs counts the within-stratum differences.
	Pairs int `json:"pairs"`
	// Method says which null distribution gave the interval (see Shift).
	Method string `json:"method,omitempty"`
}

// Methods of a Shift's interval.
const (
	shiftExact            = "exact"
	shiftExactConditional = "exact conditional"
	shiftTiesBounded      = "exact, ties bounded"
	shiftNormal           = "normal"
)

// inversionBudget bounds the work of inverting the conditional test (about
// one operation per count added in the null distributions): beyond it the
// interval takes the untied bound, which stays valid with ties.
const inversionBudget = 3e8

// logShift is logShiftAt at Confidence.
func logShift(xs, ys [][]float64) Shift { return logShiftAt(xs, ys, Confidence) }

// logShiftAt is the stratified Shift of ln(x) over ln(y), stratum by
// stratum (xs[i] against ys[i]), with an interval of the given coverage;
// non-positive and NaN values, which have no logarithm, are left out. Without
// a pair every field is NaN.
func logShiftAt(xs, ys [][]float64, confidence float64) Shift {
	nan := Float(math.NaN())
	out := Shift{Estimate: nan, Low: nan, High: nan, Confidence: nan}
	var strata []shiftStratum
	var diffs []float64
	var sizes [][2]int
	large, ties := false, false
	for i := range min(len(xs), len(ys)) {
		x, y := logs(xs[i]), logs(ys[i]) //nolint:gosec // G602: i < min(len(xs), len(ys))
		if len(x) == 0 || len(y) == 0 {
			continue
		}
		slices.Sort(x)
		slices.Sort(y)
		st := shiftStratum{x: x, y: y}
		for _, a := range x {
			for _, b := range y {
				diffs = append(diffs, a-b)
			}
		}
		strata = append(strata, st)
		sizes = append(sizes, [2]int{len(x), len(y)})
		large = large || len(x) >= exactLimit || len(y) >= exactLimit
		ties = ties || hasTie(pooledTies(x, y, func(i, j int) int { return compareFloats(x[i], y[j]) }))
	}
	if len(diffs) == 0 {
		return out
	}
	slices.Sort(diffs)
	m := len(diffs)
	out.Pairs = m
	out.Estimate = Float(median(diffs))
	alpha := 1 - confidence
	switch {
	case large:
		out.Method = shiftNormal
		k, achieved := normalShiftOrder(strata, alpha)
		k = min(k, (m+1)/2)
		out.Low, out.High, out.Confidence = Float(diffs[k-1]), Float(diffs[m-k]), Float(achieved)
	case ties && inversionCost(strata) <= inversionBudget:
		out.Method = shiftExactConditional
		out.Low, out.High, out.Confidence = invertShift(strata, diffs, alpha, sizes)
	default:
		out.Method = shiftExact
		if ties {
			out.Method = shiftTiesBounded
		}
		k, achieved := exactShiftOrder(sizes, alpha)
		k = min(k, (m+1)/2)
		out.Low, out.High, out.Confidence = Float(diffs[k-1]), Float(diffs[m-k]), Float(achieved)
	}
	return out
}

// shiftStratum is one stratum's sorted logarithms.
type shiftStratum struct{ x, y []float64 }

// exactShiftOrder is the order k of the untied exact interval's bounds
// and the coverage it reaches: k the smallest count whose lower tail under
// the convolution of the strata's null distributions of U reaches alpha/2
// (at least 1: the range of the differences, when even that falls short).
func exactShiftOrder(sizes [][2]int, alpha float64) (int, float64) {
	dist := []float64{1}
	for _, s := range sizes {
		dist = convolve(dist, uNullDist(s[0], s[1]))
	}
	cdf := 0.0
	k := len(dist) - 1
	for q, p := range dist {
		cdf += p
		if cdf >= alpha/2 {
			k = q
			break
		}
	}
	k = max(k, 1)
	below := 0.0 // P(U <= k-1)
	for q := 0; q < k && q < len(dist); q++ {
		below += dist[q]
	}
	return k, 1 - 2*below
}

// normalShiftOrder is k from the normal approximation of the stratified U
// (tie-corrected variance) and the coverage 1 - 2·P(U <= k-1) it reaches
// under that approximation, with a continuity correction of 1/2.
func normalShiftOrder(strata []shiftStratum, alpha float64) (int, float64) {
	var mean, variance float64
	for _, s := range strata {
		a, b := float64(len(s.x)), float64(len(s.y))
		big := a + b
		var tie float64
		for _, g := range pooledTies(s.x, s.y, func(i, j int) int { return compareFloats(s.x[i], s.y[j]) }) {
			t := float64(g)
			tie += t*t*t - t
		}
		mean += a * b / 2
		variance += a * b / 12 * ((big + 1) - tie/(big*(big-1)))
	}
	sd := math.Sqrt(variance)
	z := normalQuantile(1 - alpha/2)
	k := max(1, int(math.Floor(mean-z*sd)))
	below := 0.5 * math.Erfc(-((float64(k)-0.5)-mean)/sd/math.Sqrt2)
	return k, 1 - 2*below
}

// inversionCost estimates the counting work of invertShift: per shift
// evaluated (two per distinct difference, and one more), every stratum's
// conditional distribution.
func inversionCost(strata []shiftStratum) float64 {
	var pairs, perShift float64
	for _, s := range strata {
		a, b := float64(len(s.x)), float64(len(s.y))
		pairs += a * b
		perShift += (a + b) * a * a * (2*(a+b) - a + 1)
	}
	return (2*pairs + 1) * perShift
}

// invertShift is the interval of shifts delta at which the stratified
// rank-sum test of x - delta against y, exact and conditional on the ties
// at that shift, gives p >= alpha. The test only changes where delta
// crosses a difference x_i - y_j, so it is evaluated at each distinct
// difference (where that pair ties) and between them; the interval spans
// every shift accepted. When a shift beyond every difference is accepted
// the samples are too small to reach the coverage asked: that side stops at
// the range of the differences, and the coverage is that of the range.
func invertShift(strata []shiftStratum, diffs []float64, alpha float64, sizes [][2]int) (low, high, coverage Float) {
	sr := newShiftRegions(strata, diffs)
	points := sr.points
	regions := sr.count()
	first, last := -1, -1
	for r := range regions {
		if sr.accepted(r, alpha) {
			if first < 0 {
				first = r
			}
			last = r
		}
	}
	coverage = Float(1 - alpha)
	if first < 0 { // nothing accepted: cannot happen for a valid p, but stay defined
		e := Float(median(diffs))
		return e, e, coverage
	}
	bound := func(r int, upper bool) Float {
		switch {
		case r%2 == 1:
			return Float(points[r/2])
		case upper:
			return Float(points[r/2])
		}
		return Float(points[r/2-1])
	}
	if first == 0 || last == regions-1 {
		coverage = Float(math.Min(1-alpha, 1-SmallestP(sizes)))
	}
	low, high = Float(points[0]), Float(points[len(points)-1])
	if first > 0 {
		low = bound(first, false)
	}
	if last < regions-1 {
		high = bound(last, true)
	}
	return low, high, coverage
}

// shiftRegions places each pair's difference on the shift axis: region
// 2q+1 is the point points[q], region 2q the open interval just below it,
// region 2·len(points) the one above them all.
type shiftRegions struct {
	strata []shiftStratum
	points []float64 // the differences, sorted, distinct
	idx    [][][]int // stratum -> x -> y: the region of x - y
}

// newShiftRegions places the pairs of strata, whose differences, sorted,
// are diffs.
func newShiftRegions(strata []shiftStratum, diffs []float64) shiftRegions {
	sr := shiftRegions{strata: strata, points: slices.Compact(slices.Clone(diffs)), idx: make([][][]int, len(strata))}
	for s, st := range strata {
		sr.idx[s] = make([][]int, len(st.x))
		for i, a := range st.x {
			sr.idx[s][i] = make([]int, len(st.y))
			for j, b := range st.y {
				q, _ := slices.BinarySearch(sr.points, a-b)
				sr.idx[s][i][j] = 2*q + 1
			}
		}
	}
	return sr
}

// count is the number of regions.
func (sr shiftRegions) count() int { return 2*len(sr.points) + 1 }

// accepted reports whether the stratified rank-sum test of x - delta
// against y, for a delta in region r, gives p >= alpha.
func (sr shiftRegions) accepted(r int, alpha float64) bool {
	dist := []float64{1}
	t := 0
	for s, st := range sr.strata {
		// x_i - delta against y_j: above when the pair's difference lies
		// above this region, tied at its point.
		cmp := func(i, j int) int {
			d := sr.idx[s][i][j]
			switch {
			case d > r:
				return 1
			case d < r:
				return -1
			}
			return 0
		}
		// The x's in descending order of x - delta keep the order of
		// x; pooledTies wants both ascending, which they are.
		groups := pooledTies(st.x, st.y, cmp)
		d := untiedNullDist(len(st.x), len(st.y))
		if hasTie(groups) {
			d = tiedNullDist(groups, len(st.x), len(st.y))
		}
		dist = convolve(dist, d)
		t += doubledU(st.x, st.y, cmp)
	}
	return twoSidedP(dist, t) >= alpha
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
