package analysis

import (
	"math"
	"sort"
	"strconv"
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
	// Exact says P comes from the exact null distribution of U rather than
	// the normal approximation.
	Exact bool `json:"exact"`
}

// Significant reports whether the test rejects "same distribution" at alpha.
func (t UTest) Significant(alpha float64) bool { return Significant(t.P, alpha) }

// Significant reports whether p is below alpha; a NaN p (no test) is not.
func Significant(p Float, alpha float64) bool { return float64(p) < alpha }

// MannWhitney is the two-sided Mann-Whitney U test (Wilcoxon rank-sum) of
// whether x and y come from the same distribution, making no assumption about
// its shape. Without ties and with both samples under 50 the p value comes
// from the exact distribution of U; otherwise from the normal approximation
// with the tie-corrected variance and a continuity correction of 1/2: R's
// wilcox.test chooses the same way, and its approximation is scipy's
// mannwhitneyu(method="asymptotic"). NaNs are ignored; an empty
// sample gives P=NaN. When every value is tied there is no evidence of a
// difference and P is 1.
func MannWhitney(x, y []float64) UTest {
	return StratifiedMannWhitney([][]float64{x}, [][]float64{y})
}

// StratifiedMannWhitney is the two-sided Mann-Whitney U test pooled over
// strata (here: thread counts), so that values are only ranked against others
// of their own stratum: a 4-thread rate never outranks a 1-thread rate merely
// for having more threads. The statistic is the sum of each stratum's U; under
// the null hypothesis the strata are independent, so its distribution is the
// convolution of theirs (used exactly when no stratum has ties or a sample of
// 50 or more) and its mean and tie-corrected variance are the sums of theirs
// (the normal approximation otherwise, with a continuity correction of 1/2).
// This is the stratified rank-sum test with equal weight per pair; with one
// stratum it is MannWhitney. Strata with an empty side are skipped.
func StratifiedMannWhitney(xs, ys [][]float64) UTest {
	type stratum struct {
		m, n int
		u    float64
		ties float64 // sum of t^3 - t over tied groups
	}
	var strata []stratum
	exact := true
	var res UTest
	for i := range min(len(xs), len(ys)) {
		x, y := sortedFinite(xs[i]), sortedFinite(ys[i])
		if len(x) == 0 || len(y) == 0 {
			continue
		}
		u, ties := rankU(x, y)
		strata = append(strata, stratum{m: len(x), n: len(y), u: u, ties: ties})
		res.U += u
		res.N1 += len(x)
		res.N2 += len(y)
		if ties > 0 || len(x) >= exactLimit || len(y) >= exactLimit {
			exact = false
		}
	}
	if len(strata) == 0 {
		res.P = Float(math.NaN())
		return res
	}
	if exact {
		dist := []float64{1}
		for _, s := range strata {
			dist = convolve(dist, uNullDist(s.m, s.n))
		}
		u := int(math.Round(res.U))
		var lo, hi float64
		for k, p := range dist {
			if k <= u {
				lo += p
			}
			if k >= u {
				hi += p
			}
		}
		res.P = Float(math.Min(1, 2*math.Min(lo, hi)))
		res.Exact = true
		return res
	}
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

// rankU returns U for sorted x against sorted y (pairs x > y, ties one half)
// and the tie term sum(t^3 - t) over groups of equal values in both.
func rankU(x, y []float64) (u, ties float64) {
	all := make([]float64, 0, len(x)+len(y))
	all = append(all, x...)
	all = append(all, y...)
	sort.Float64s(all)
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		if t := float64(j - i); t > 1 {
			ties += t*t*t - t
		}
		i = j
	}
	for _, a := range x {
		below := sort.SearchFloat64s(y, a)                                // y < a
		upTo := sort.Search(len(y), func(k int) bool { return y[k] > a }) // y <= a
		u += float64(below) + float64(upTo-below)/2
	}
	return u, ties
}

// uNullDist returns P(U = u), u = 0..m·n, for samples of m and n without ties
// under the null hypothesis, by Mann and Whitney's recurrence: the largest of
// the m+n values is an x with probability m/(m+n), and then beats all n y's,
// or else is a y and beats nothing.
func uNullDist(m, n int) []float64 {
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

// FormatP renders a p value as "p<0.001" or with two significant digits,
// "p=0.41"; "p=n/a" when there was no test.
func FormatP(p Float) string {
	switch {
	case p.IsNaN():
		return "p=n/a"
	case p < 0.001:
		return "p<0.001"
	}
	return "p=" + strconv.FormatFloat(float64(p), 'g', 2, 64)
}

// FormatSignificance renders a p value as benchstat does a difference that is
// not significant, "~", and as FormatP otherwise.
func FormatSignificance(p Float, alpha float64) string {
	if !Significant(p, alpha) {
		return "~"
	}
	return FormatP(p)
}
