package analysis

import (
	"math"
	"sync"
)

// The null distributions here are of 2U, twice the Mann-Whitney statistic
// (pairs x > y, ties counting one half), so that a tied pair is a whole
// unit: index k holds P(2U = k), k = 0..2mn.

// pooledTies returns, for sorted x and sorted y, the sizes of the groups of
// equal values of the pooled sample in ascending order. cmp(i, j) compares
// x[i] with y[j] as the test sees them (x[i] - delta against y[j] when the
// test is inverted for a shift delta); values within x, and within y, are
// equal only when they are the same number.
func pooledTies(x, y []float64, cmp func(i, j int) int) []int {
	var groups []int
	i, j := 0, 0
	run := func(v []float64, k int) int {
		e := k
		for e < len(v) && v[e] == v[k] {
			e++
		}
		return e
	}
	for i < len(x) || j < len(y) {
		c := 0
		switch {
		case i == len(x):
			c = 1
		case j == len(y):
			c = -1
		default:
			c = cmp(i, j)
		}
		switch {
		case c < 0:
			e := run(x, i)
			groups = append(groups, e-i)
			i = e
		case c > 0:
			e := run(y, j)
			groups = append(groups, e-j)
			j = e
		default:
			ex, ey := run(x, i), run(y, j)
			groups = append(groups, ex-i+ey-j)
			i, j = ex, ey
		}
	}
	return groups
}

// hasTie reports whether any group holds two or more values.
func hasTie(groups []int) bool {
	for _, g := range groups {
		if g > 1 {
			return true
		}
	}
	return false
}

// doubledU is 2U of sorted x against sorted y as cmp compares them.
func doubledU(x, y []float64, cmp func(i, j int) int) int {
	u := 0
	for i := range x {
		for j := range y {
			switch c := cmp(i, j); {
			case c > 0:
				u += 2
			case c == 0:
				u++
			}
		}
	}
	return u
}

// tiedNullDist is the null distribution of 2U for m x's and n y's given
// the pooled sample's tie groups (sizes in ascending order of value): under
// the null hypothesis every choice of which m of the m+n values are the
// x's is equally likely, and U is the x's midrank sum less m(m+1)/2. It is
// the exact conditional (permutation) distribution, computed by counting
// the choices group by group: taking k of a group of t, whose doubled
// midrank is d, adds k·d to the doubled rank sum in C(t, k) ways.
func tiedNullDist(groups []int, m, n int) []float64 {
	total := m + n
	maxSum := m * (2*total - m + 1) // doubled rank sum of the m largest
	cur := make([][]float64, m+1)
	next := make([][]float64, m+1)
	for j := range cur {
		cur[j] = make([]float64, maxSum+1)
		next[j] = make([]float64, maxSum+1)
	}
	cur[0][0] = 1
	start := 0
	for _, t := range groups {
		d := 2*start + t + 1 // doubled midrank of ranks start+1 .. start+t
		for j := range next {
			clear(next[j])
		}
		for j := 0; j <= m && j <= start; j++ {
			for s, c := range cur[j] {
				if c == 0 {
					continue
				}
				for k := 0; k <= t && j+k <= m; k++ {
					next[j+k][s+k*d] += c * binomial(t, k)
				}
			}
		}
		cur, next = next, cur
		start += t
	}
	out := make([]float64, 2*m*n+1)
	all := binomial(total, m)
	offset := m * (m + 1)
	for s, c := range cur[m] {
		if c != 0 {
			out[s-offset] = c / all
		}
	}
	return out
}

// untiedNullDist is the null distribution of 2U without ties (Mann and
// Whitney's, on the doubled scale), kept as uNullDist's are: callers must
// not modify the slice.
func untiedNullDist(m, n int) []float64 {
	if d, ok := untiedNullDists.Load([2]int{m, n}); ok {
		return d.([]float64)
	}
	d := uNullDist(m, n)
	out := make([]float64, 2*len(d)-1)
	for u, p := range d {
		out[2*u] = p
	}
	untiedNullDists.Store([2]int{m, n}, out)
	return out
}

// untiedNullDists keeps untiedNullDist's distributions by (m, n).
var untiedNullDists sync.Map

// twoSidedP is min(1, 2·min(P(T <= t), P(T >= t))) under dist, the exact
// two-sided p value as R's wilcox.test takes it.
func twoSidedP(dist []float64, t int) float64 {
	var lo, hi float64
	for k, p := range dist {
		if k <= t {
			lo += p
		}
		if k >= t {
			hi += p
		}
	}
	return math.Min(1, 2*math.Min(lo, hi))
}

// smallestP is the smallest two-sided p value dist can give: at the
// least or the largest value the statistic can take.
func smallestP(dist []float64) float64 {
	first, last := -1, -1
	for k, p := range dist {
		if p > 0 {
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	if first < 0 {
		return math.NaN()
	}
	return math.Min(twoSidedP(dist, first), twoSidedP(dist, last))
}
