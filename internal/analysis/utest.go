package analysis

import (
	"math"
	"sync"
)

// Alpha is the significance level every comparison here is judged at.
const Alpha = 0.05

// exactLimit is the sample size from which the U test switches to the normal
// approximation even without ties: R's wilcox.test does the same, so p values
// can be checked against it.
const exactLimit = 50

// UTest is the result of a two-sided Mann-Whitney U test.
type UTest struct {
	// U counts the pairs (x, y) with x > y, ties counting one half: the U of
	// the first sample, as scipy.stats.mannwhitneyu reports it.
	U float64 `json:"u"`
	// N1 and N2 are the sizes of the two samples (summed over strata for a
	// stratified test).
	N1 int `json:"n1"`
	N2 int `json:"n2"`
	// P is the two-sided p value; NaN when a sample was empty.
	P Float `json:"p"`
	// Exact says P comes from the exact null distribution of U (given the
	// ties, when there are any) rather than the normal approximation.
	Exact bool `json:"exact"`
	// Ties says some values were equal within a stratum; an exact P is then
	// the conditional (permutation) one given those ties.
	Ties bool `json:"ties,omitempty"`
	// SmallestP is the smallest P these sample sizes (and, for an exact
	// test, these ties) can give whatever the values' order: at or above
	// a level, nothing can be significant at it.
	SmallestP Float `json:"smallest_p"`
}

// Significant reports whether the test rejects "same distribution" at alpha.
func (t UTest) Significant(alpha float64) bool { return significant(t.P, alpha) }

// significant reports whether p is below alpha; a NaN p (no test) is not.
func significant(p Float, alpha float64) bool { return float64(p) < alpha }

// mannWhitney is the two-sided Mann-Whitney U test (Wilcoxon rank-sum) of
// whether x and y come from the same distribution, making no assumption about
// its shape. With both samples under 50 the p value is exact: from the
// distribution of U (Mann and Whitney's) without ties, and with ties from
// its exact conditional distribution given them (every assignment of the
// pooled values to the two samples equally likely, as coin's
// wilcox_test(distribution = "exact") computes it), so a tie can never
// carry a p below what the sizes allow. From 50 up it comes from the normal
// approximation with the tie-corrected variance and a continuity correction
// of 1/2 (scipy's mannwhitneyu(method="asymptotic")). NaNs are ignored; an
// empty sample gives P=NaN. When every value is tied there is no evidence
// of a difference and P is 1.
func mannWhitney(x, y []float64) UTest {
	return stratifiedMannWhitney([][]float64{x}, [][]float64{y})
}

// stratifiedMannWhitney is the two-sided Mann-Whitney U test pooled over
// strata (here: thread counts), so that values are only ranked against others
// of their own stratum: a 4-thread rate never outranks a 1-thread rate merely
// for having more threads. The statistic is the sum of each stratum's U; under
// the null hypothesis the strata are independent, so its distribution is the
// convolution of theirs, each exact (conditional on its ties, if any) while
// both its samples are under 50; otherwise its mean and tie-corrected
// variance are the sums of theirs (the normal approximation, with a
// continuity correction of 1/2). This is the stratified rank-sum test with
// equal weight per pair; with one stratum it is mannWhitney. Strata with an
// empty side are skipped.
func stratifiedMannWhitney(xs, ys [][]float64) UTest {
	type stratum struct {
		m, n   int
		u2     int // 2U
		groups []int
		ties   float64 // sum of t^3 - t over tied groups
	}
	var strata []stratum
	exact := true
	var res UTest
	var sizes [][2]int
	for i := range min(len(xs), len(ys)) {
		x, y := sortedFinite(xs[i]), sortedFinite(ys[i]) //nolint:gosec // G602: i < min(len(xs), len(ys))
		if len(x) == 0 || len(y) == 0 {
			continue
		}
		cmp := func(a, b int) int { return compareFloats(x[a], y[b]) }
		groups := pooledTies(x, y, cmp)
		s := stratum{m: len(x), n: len(y), u2: doubledU(x, y, cmp), groups: groups}
		for _, g := range groups {
			if g > 1 {
				t := float64(g)
				s.ties += t*t*t - t
				res.Ties = true
			}
		}
		strata = append(strata, s)
		sizes = append(sizes, [2]int{s.m, s.n})
		res.U += float64(s.u2) / 2
		res.N1 += s.m
		res.N2 += s.n
		if s.m >= exactLimit || s.n >= exactLimit {
			exact = false
		}
	}
	if len(strata) == 0 {
		res.P, res.SmallestP = Float(math.NaN()), Float(math.NaN())
		return res
	}
	if exact {
		dist := []float64{1}
		t := 0
		for _, s := range strata {
			d := untiedNullDist(s.m, s.n)
			if hasTie(s.groups) {
				d = tiedNullDist(s.groups, s.m, s.n)
			}
			dist = convolve(dist, d)
			t += s.u2
		}
		res.P = Float(twoSidedP(dist, t))
		res.SmallestP = Float(smallestP(dist))
		res.Exact = true
		return res
	}
	res.SmallestP = Float(SmallestP(sizes))
	var mean, variance float64
	for _, s := range strata {
		m, n := float64(s.m), float64(s.n)
		big := m + n
		mean += m * n / 2
		variance += m * n / 12 * ((big + 1) - s.ties/(big*(big-1)))
	}
	if variance <= 0 {
		res.P = 1
		return res
	}
	d := res.U - mean
	switch {
	case d > 0:
		d = math.Max(0, d-0.5)
	case d < 0:
		d = math.Min(0, d+0.5)
	}
	z := d / math.Sqrt(variance)
	res.P = Float(math.Min(1, math.Erfc(math.Abs(z)/math.Sqrt2)))
	return res
}

// compareFloats is -1, 0 or 1 as a is below, equal to or above b.
func compareFloats(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// uNullDist returns P(U = u), u = 0..m·n, for samples of m and n without ties
// under the null hypothesis, by Mann and Whitney's recurrence: the largest of
// the m+n values is an x with probability m/(m+n), and then beats all n y's,
// or else is a y and beats nothing. Each (m, n) is computed once and kept
// (a verdict asks for the same few sizes many times: per thread count, per
// interval, per flagged cell's check); callers must not modify the slice.
func uNullDist(m, n int) []float64 {
	if d, ok := uNullDists.Load([2]int{m, n}); ok {
		return d.([]float64)
	}
	d := computeUNullDist(m, n)
	uNullDists.Store([2]int{m, n}, d)
	return d
}

// uNullDists keeps uNullDist's distributions by (m, n).
var uNullDists sync.Map

// computeUNullDist is uNullDist's recurrence.
func computeUNullDist(m, n int) []float64 {
	prev := make([][]float64, n+1) // distributions for (i-1, j)
	for j := range prev {
		prev[j] = []float64{1}
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1}
		for j := 1; j <= n; j++ {
			d := make([]float64, i*j+1)
			px := float64(i) / float64(i+j)
			for u, p := range prev[j] {
				d[u+j] += px * p
			}
			for u, p := range cur[j-1] {
				d[u] += (1 - px) * p
			}
			cur[j] = d
		}
		prev = cur
	}
	return prev[n]
}

// convolve returns the distribution of the sum of two independent
// integer-valued variables.
func convolve(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, p := range a {
		for j, q := range b {
			out[i+j] += p * q
		}
	}
	return out
}
