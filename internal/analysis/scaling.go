package analysis

import (
	"math"
	"slices"
)

// scalingTolerance is how close to the best a thread count must come to
// count as already there: differences under it are noise, not a trend.
const scalingTolerance = 0.10

// Scaling says, per target, workload and class with 3 or more thread
// counts, where adding threads stops paying: for a fixed total of work
// (pi's iterations split over the threads, [m1-qos]) the thread count that
// finished soonest, for work per thread the one with the highest total
// rate; and whether more threads did worse. "best at", "did worse" and
// "gained nothing" are said only where the rank test shows them (see
// scalingTests); a difference it cannot tell from noise is said as such,
// with its p. Where threads still paid, it gives what each added thread
// brought over that part only (the Theil-Sen slope of the repeats' total
// rates, with its interval), never a slope over a plateau; past where they
// stopped paying, the change of the median total rate at each step.
func Scaling(cells []Cell, totalWork func(workload string) bool) []Finding {
	type key struct {
		target, workload, params string
		qos                      int
	}
	series := map[key][]Cell{}
	var order []key
	for _, c := range SortCells(cells) {
		if c.Phase != "" || c.TotalRate.N == 0 {
			continue
		}
		k := key{c.Target, c.Workload, c.Params, c.QoS}
		if series[k] == nil {
			order = append(order, k)
		}
		series[k] = append(series[k], c)
	}
	var out []Finding
	for _, k := range order {
		cs := series[k]
		if len(cs) < 3 {
			continue
		}
		if fit, ok := scalingFit(cs, totalWork(k.workload)); ok {
			out = append(out, Finding{Kind: "scaling", Target: k.target, Workload: k.workload, QoS: k.qos, Params: k.params, Scaling: fit})
		}
	}
	return out
}

// ScalingFit is a scaling finding (Scaling) of one series of cells,
// ascending in threads.
type ScalingFit struct {
	// TotalWork says the work is a fixed total, judged by time (a point's
	// Seconds) rather than by rate; Unit is the rates' unit of work.
	TotalWork bool
	Unit      string
	// Best is the count that did best; Shown says the rank tests show it
	// better than every other count. When not, Noise are the counts within
	// noise of it, and Few those whose repeats are too few for a test to
	// tell at Alpha, with the smallest p any could reach (FewP) and their
	// distinct sample sizes (FewSizes).
	Best     ScalingPoint
	Shown    bool
	Noise    []ScalingNoise
	Few      []int
	FewP     float64
	FewSizes [][2]int
	// Tail is what more threads did; Last is the most threads, Plateau
	// the fewest within Tolerance of the best (TailStopped).
	Tail          ScalingTail
	Last, Plateau ScalingPoint
	Tolerance     float64
	// Paying is the thread count up to which threads paid; Slope is the
	// Theil-Sen slope of the total rates up to it, Sloped whether there is
	// one (two counts or more); First is the fewest threads.
	Paying int
	Slope  TheilSen
	Sloped bool
	First  int
	// Steps are, past Paying, the change of the median total rate at each
	// step, to the thread counts StepThreads.
	Steps       []float64
	StepThreads []int
}

// ScalingPoint is one thread count's median total rate and time.
type ScalingPoint struct {
	Threads       int
	Rate, Seconds float64
}

// ScalingNoise is a count the best is within noise of, with the rank
// test's p.
type ScalingNoise struct {
	ScalingPoint
	P Float
}

// ScalingTail is what more threads than the best did.
type ScalingTail int

// The tails of a scaling finding.
const (
	// TailNone: nothing more to say.
	TailNone ScalingTail = iota
	// TailWorse: more threads did worse (Last), shown by the test.
	TailWorse
	// TailGainedNothing: more threads gained nothing (Last), shown.
	TailGainedNothing
	// TailStopped: adding threads stopped paying at Plateau, within
	// Tolerance of the best.
	TailStopped
	// TailStillPaid: every added thread still paid.
	TailStillPaid
)

// point is c's thread count, median total rate and time.
func point(c Cell) ScalingPoint {
	return ScalingPoint{Threads: c.Threads, Rate: float64(c.TotalRate.Median), Seconds: float64(c.Seconds.Median)}
}

// scalingFit is the scaling finding of one series of cells, ascending in
// threads (see Scaling); totalWork says its work is a fixed total, judged
// by time.
func scalingFit(cs []Cell, totalWork bool) (*ScalingFit, bool) {
	best := cs[0]
	better := func(c Cell) bool { return float64(c.TotalRate.Median) > float64(best.TotalRate.Median) }
	if totalWork {
		better = func(c Cell) bool { return float64(c.Seconds.Median) < float64(best.Seconds.Median) }
	}
	for _, c := range cs[1:] {
		if better(c) {
			best = c
		}
	}
	if math.IsNaN(float64(best.TotalRate.Median)) {
		return nil, false
	}
	// near: within scalingTolerance of the best.
	near := func(c Cell) bool {
		if totalWork {
			return float64(c.Seconds.Median) <= float64(best.Seconds.Median)*(1+scalingTolerance)
		}
		return float64(c.TotalRate.Median) >= float64(best.TotalRate.Median)*(1-scalingTolerance)
	}
	plateau := best
	for _, c := range cs {
		if near(c) {
			plateau = c
			break
		}
	}
	tests := scalingTests(cs, best, totalWork)
	last := cs[len(cs)-1]
	fit := &ScalingFit{TotalWork: totalWork, Unit: cs[0].Unit, Best: point(best), Shown: tests.beatsAll(),
		Last: point(last), Plateau: point(plateau), Tolerance: scalingTolerance, Paying: best.Threads, First: cs[0].Threads}
	if !fit.Shown {
		tests.unshown(fit)
	}
	switch {
	case !near(last):
		if tests.beats(last) {
			fit.Tail = TailWorse
		}
	case plateau.Threads == best.Threads && best.Threads < last.Threads:
		if tests.beats(last) {
			fit.Tail = TailGainedNothing
		}
	case plateau.Threads < last.Threads:
		fit.Tail, fit.Paying = TailStopped, plateau.Threads
	case fit.Shown:
		fit.Tail = TailStillPaid
	}
	fit.slope(cs)
	return fit, true
}

// scalingTest is the rank test of the best thread count's repeats against
// another count's.
type scalingTest struct {
	cell Cell
	test UTest
}

// scalingTestSet is the best count's tests against every other count.
type scalingTestSet []scalingTest

// scalingTests tests the best count's repeats against each other count's,
// two-sided Mann-Whitney at Alpha: their total rates, or for a fixed total
// of work their times (a count is better for a higher rate or a shorter
// time; repeats that did no work left out, as everywhere).
func scalingTests(cs []Cell, best Cell, totalWork bool) scalingTestSet {
	values := func(c Cell) []float64 {
		if !totalWork {
			return workingRates(c.TotalRates)
		}
		var secs []float64
		for i, r := range c.TotalRates {
			if !idleRate(r) && i < len(c.RepeatSeconds) {
				secs = append(secs, c.RepeatSeconds[i])
			}
		}
		return secs
	}
	var out scalingTestSet
	for _, c := range cs {
		if c.Threads != best.Threads {
			out = append(out, scalingTest{c, mannWhitney(values(best), values(c))})
		}
	}
	return out
}

// beats says whether the best count is shown better than c's.
func (ts scalingTestSet) beats(c Cell) bool {
	for _, t := range ts {
		if t.cell.Threads == c.Threads {
			return t.test.Significant(Alpha)
		}
	}
	return false
}

// beatsAll says whether the best count is shown better than every other:
// "best at" needs each test to reject at Alpha (an intersection-union
// test, which needs no correction for the number of tests).
func (ts scalingTestSet) beatsAll() bool {
	for _, t := range ts {
		if !t.test.Significant(Alpha) {
			return false
		}
	}
	return true
}

// unshown sets what fit says of a best count the tests do not show best:
// the counts it is within noise of, with each p, and those whose repeats
// are too few for any test to tell at Alpha.
func (ts scalingTestSet) unshown(fit *ScalingFit) {
	smallest := math.Inf(1)
	for _, t := range ts {
		switch {
		case t.test.Significant(Alpha):
		case t.test.SmallestP >= Alpha:
			fit.Few = append(fit.Few, t.cell.Threads)
			if sz := [2]int{t.test.N1, t.test.N2}; !slices.Contains(fit.FewSizes, sz) {
				fit.FewSizes = append(fit.FewSizes, sz)
			}
			smallest = min(smallest, float64(t.test.SmallestP))
		default:
			fit.Noise = append(fit.Noise, ScalingNoise{point(t.cell), t.test.P})
		}
	}
	fit.FewP = smallest
}

// slope sets what each added thread brought up to Paying threads (the
// Theil-Sen slope of the total rates of the repeats that did work there,
// with its interval), and past it the change of the median total rate at
// each step.
func (fit *ScalingFit) slope(cs []Cell) {
	var x, y []float64
	counts := 0
	for i, c := range cs {
		if c.Threads <= fit.Paying {
			counts++
			for _, r := range workingRates(c.TotalRates) {
				x, y = append(x, float64(c.Threads)), append(y, r)
			}
			continue
		}
		fit.Steps = append(fit.Steps, float64(c.TotalRate.Median-cs[i-1].TotalRate.Median))
		fit.StepThreads = append(fit.StepThreads, c.Threads)
	}
	fit.Slope = fitTheilSen(x, y)
	fit.Sloped = counts >= 2 && !fit.Slope.Slope.IsNaN()
}
