package analysis

import (
	"math"
	"sort"
)

// Regression is a straight line y = A + B·x fitted to N points, and the share
// of y's variance it explains, R2.
type Regression struct {
	A  Float `json:"a"`
	B  Float `json:"b"`
	R2 Float `json:"r2"`
	N  int   `json:"n"`
}

// fitLine fits y = A + B·x by ordinary least squares: B = Sxy/Sxx,
// A = mean(y) - B·mean(x), R² = 1 - SSres/SStot. Pairs with a NaN are
// skipped. With fewer than two distinct x there is no line and A, B and R2
// are NaN. When every y is equal the line fits exactly and R2 is 1 (as
// scikit-learn's r2_score has it) rather than 0/0.
func fitLine(x, y []float64) Regression {
	var xs, ys []float64
	for i := range min(len(x), len(y)) {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) {
			continue
		}
		xs = append(xs, x[i])
		ys = append(ys, y[i])
	}
	n := len(xs)
	nan := Float(math.NaN())
	r := Regression{A: nan, B: nan, R2: nan, N: n}
	if n < 2 {
		return r
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(n)
	my /= float64(n)
	// Deviations from the means (two passes) keep the sums exact enough
	// when rates of 1e8 differ by only a few percent.
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return r
	}
	b := sxy / sxx
	a := my - b*mx
	var ssRes float64
	for i := range xs {
		e := ys[i] - (a + b*xs[i])
		ssRes += e * e
	}
	r.A, r.B, r.R2 = Float(a), Float(b), 1
	if syy != 0 {
		r.R2 = Float(1 - ssRes/syy)
	}
	return r
}

// ClassRegression is the throughput regression R = A + B·T of one target's
// total rate R on thread count T at one QoS class.
type ClassRegression struct {
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Phase    string `json:"phase,omitempty"`
	// Params are the cells' parameters where they tell them apart
	// (CellKey.Params): each set gets its own line.
	Params string `json:"params,omitempty"`
	QoS    int    `json:"qos"`
	// ThreadCounts is how many distinct thread counts the points have:
	// the line is fitted from 3 (with 2 it would only join two means).
	ThreadCounts int `json:"thread_counts"`
	Regression
	// Slope is the Theil-Sen slope of the same points with its interval.
	Slope TheilSen `json:"slope"`
}

// MinThreadCounts is how many thread counts a regression needs.
const MinThreadCounts = 3

// TheilSen is the median of the slopes between every two points with
// different x, and Sen's (1968) distribution-free interval for it: the
// slopes ranked (M - C)/2 and (M + C)/2 + 1, M the number of slopes and C
// the normal quantile times the standard deviation of Kendall's S with ties
// in x and y corrected for. Robust where least squares is not: one repeat
// at full speed among starved ones cannot tip it.
type TheilSen struct {
	Slope Float `json:"slope"`
	Low   Float `json:"low"`
	High  Float `json:"high"`
}

// fitTheilSen computes the Theil-Sen slope of y on x with its Confidence
// interval; NaN without two distinct x.
func fitTheilSen(x, y []float64) TheilSen {
	nan := Float(math.NaN())
	out := TheilSen{Slope: nan, Low: nan, High: nan}
	var xs, ys []float64
	for i := range min(len(x), len(y)) {
		if !math.IsNaN(x[i]) && !math.IsNaN(y[i]) { //nolint:gosec // G602: i < min(len(x), len(y))
			xs, ys = append(xs, x[i]), append(ys, y[i]) //nolint:gosec // G602: as above
		}
	}
	var slopes []float64
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if xs[i] != xs[j] {
				slopes = append(slopes, (ys[j]-ys[i])/(xs[j]-xs[i]))
			}
		}
	}
	if len(slopes) == 0 {
		return out
	}
	sort.Float64s(slopes)
	out.Slope = Float(median(slopes))
	n := float64(len(xs))
	variance := n * (n - 1) * (2*n + 5)
	for _, t := range tieGroups(xs) {
		variance -= t * (t - 1) * (2*t + 5)
	}
	for _, t := range tieGroups(ys) {
		variance -= t * (t - 1) * (2*t + 5)
	}
	variance /= 18
	m := float64(len(slopes))
	c := normalQuantile(1-(1-Confidence)/2) * math.Sqrt(math.Max(variance, 0))
	lo := int(math.Floor((m - c) / 2))
	hi := int(math.Ceil((m+c)/2)) + 1
	lo, hi = max(lo, 1), min(hi, len(slopes))
	if lo > hi {
		lo, hi = 1, len(slopes)
	}
	out.Low, out.High = Float(slopes[lo-1]), Float(slopes[hi-1])
	return out
}

// tieGroups returns the sizes of the groups of equal values in v.
func tieGroups(v []float64) []float64 {
	count := map[float64]int{}
	for _, x := range v {
		count[x]++
	}
	var out []float64
	for _, c := range count {
		if c > 1 {
			out = append(out, float64(c))
		}
	}
	return out
}

// Regressions fits, for each (target, workload, phase, QoS) in the order the
// cells first show it, R = A + B·T with one point per repeat: (threads, that
// repeat's total rate). Points per repeat rather than per cell median let R2
// show the scatter between repeats, and weight cells by how often they ran.
func Regressions(cells []Cell) []ClassRegression {
	type key struct {
		target, workload, phase, params string
		qos                             int
	}
	var order []key
	points := map[key][2][]float64{}
	for _, c := range cells {
		k := key{c.Target, c.Workload, c.Phase, c.Params, c.QoS}
		p, ok := points[k]
		if !ok {
			order = append(order, k)
		}
		for _, r := range c.TotalRates {
			p[0] = append(p[0], float64(c.Threads))
			p[1] = append(p[1], float64(r))
		}
		points[k] = p
	}
	out := make([]ClassRegression, 0, len(order))
	for _, k := range order {
		p := points[k]
		counts := map[float64]bool{}
		for _, x := range p[0] {
			counts[x] = true
		}
		r := ClassRegression{Target: k.target, Workload: k.workload, Phase: k.phase, Params: k.params, QoS: k.qos, ThreadCounts: len(counts)}
		r.Regression = fitLine(p[0], p[1])
		if r.ThreadCounts < MinThreadCounts {
			// Two thread counts: the line only joins two means.
			nan := Float(math.NaN())
			r.Regression = Regression{A: nan, B: nan, R2: nan, N: len(p[0])}
			r.Slope = TheilSen{Slope: nan, Low: nan, High: nan}
		} else {
			r.Slope = fitTheilSen(p[0], p[1])
		}
		out = append(out, r)
	}
	return out
}
