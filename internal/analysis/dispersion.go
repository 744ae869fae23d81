package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/qos"

	"github.com/qoslab/qoslab/internal/units"
)

// DisagreeRatio is how far apart a cell's repeats may be (largest over
// smallest) before the cell is flagged: one number cannot stand for
// repeats 3x apart, whatever their median says.
const DisagreeRatio = 3.0

// Bimodality test, for 4 or more repeats: the widest gap between the sorted
// ln values splits them into two groups of at least two each, the gap is
// above ln(minGapRatio) and above gapToSpread times the wider group's own
// range. Two tight clusters apart are then told from one broad spread.
const (
	minGapRatio  = 1.5
	gapToSpread  = 4.0
	minGroupSize = 2
)

// Dispersion is how far a cell's repeats agree, as hyperfine reports it: a
// cell whose repeats disagree is flagged, never averaged away.
type Dispersion struct {
	N int `json:"n"`
	// CV is the coefficient of variation of the repeats' values: sample
	// standard deviation over mean; NaN below 2 repeats.
	CV Float `json:"cv"`
	// MaxMin is the largest value over the smallest; NaN without values.
	MaxMin Float `json:"max_min"`
	// Bimodal is true when the repeats fall into two separate groups.
	Bimodal bool `json:"bimodal"`
	// Low and High are the groups' medians when Bimodal, and how many
	// repeats each holds.
	Low, High   Float `json:"-"`
	NLow, NHigh int   `json:"-"`
	// Zero counts the repeats that did no work (a rate of 0, or none at
	// all): left out of every statistic, and a flag of their own.
	Zero int `json:"zero,omitempty"`
	// Flag says why the repeats cannot be summarized by one number; empty
	// when they agree.
	Flag string `json:"flag,omitempty"`
}

// Disperse measures the dispersion of one value per repeat (NaNs and
// non-positive values, which have no ratio, are left out: a repeat whose
// value is 0 or less did no work, and is counted and flagged); unit is the
// values' unit ("loops/s"), for the flag.
func Disperse(values []float64, unit string) Dispersion {
	var v []float64
	zero := 0
	for _, x := range values {
		switch {
		case x > 0 && !math.IsInf(x, 0):
			v = append(v, x)
		case x <= 0:
			zero++
		}
	}
	slices.Sort(v)
	nan := Float(math.NaN())
	d := Dispersion{N: len(v), CV: nan, MaxMin: nan, Low: nan, High: nan, Zero: zero}
	if zero > 0 {
		d.Flag = fmt.Sprintf("%d of %d repeats did no work (rate 0)", zero, zero+len(v))
	}
	if len(v) == 0 {
		return d
	}
	d.MaxMin = Float(v[len(v)-1] / v[0])
	if len(v) >= 2 {
		m := mean(v)
		var ss float64
		for _, x := range v {
			ss += (x - m) * (x - m)
		}
		d.CV = Float(math.Sqrt(ss/float64(len(v)-1)) / m)
	}
	if k, ok := bimodalSplit(v); ok {
		d.Bimodal = true
		d.Low, d.High = Float(median(v[:k])), Float(median(v[k:]))
		d.NLow, d.NHigh = k, len(v)-k
	}
	switch {
	case d.Flag != "":
	case d.Bimodal:
		d.Flag = fmt.Sprintf("repeats fall in two groups: %d near %s and %d near %s %s", d.NLow, units.SI(float64(d.Low)), d.NHigh, units.SI(float64(d.High)), unit)
	case float64(d.MaxMin) > DisagreeRatio:
		d.Flag = fmt.Sprintf("repeats range %s..%s %s (%.3gx apart)", units.SI(v[0]), units.SI(v[len(v)-1]), unit, float64(d.MaxMin))
	}
	return d
}

// bimodalSplit returns where sorted positive values split into two groups
// (the high group starts at k), and whether they do (see minGapRatio).
func bimodalSplit(v []float64) (int, bool) {
	if len(v) < 2*minGroupSize {
		return 0, false
	}
	ln := make([]float64, len(v))
	for i, x := range v {
		ln[i] = math.Log(x)
	}
	k, gap := 0, 0.0
	for i := minGroupSize; i <= len(ln)-minGroupSize; i++ {
		if g := ln[i] - ln[i-1]; g > gap {
			k, gap = i, g
		}
	}
	if k == 0 || gap <= math.Log(minGapRatio) {
		return 0, false
	}
	spread := max(ln[k-1]-ln[0], ln[len(ln)-1]-ln[k])
	return k, gap > gapToSpread*spread
}

// DispersionWarnings are the warning lines for the flagged cells of one
// workload (and phase), in table order, as a verdict line is followed by
// them: the cell, why its repeats disagree, and what happened to its
// threads (flagCause): "host fp qos=9 threads=1: repeats range
// 281.9k..1.694M loops/s (6.01x apart): a starved class: ...".
func DispersionWarnings(cells []Cell, workload, phase string) []string {
	var out []string
	for _, c := range SortCells(cells) {
		if c.Workload != workload || c.Phase != phase || c.DispersionFlag() == "" {
			continue
		}
		out = append(out, dispersionWarning(cells, c))
	}
	return out
}

// Warnings are the interference warning of v's VM cell runs, when the rule
// found any (InterferenceReport.Warning), then the warning lines of the
// flagged cells of v's workload, as DispersionWarnings has them, each followed by what it does to v: a cell
// that blocks a yes says so, and one re-decided at its most adverse
// repeats with the answer still yes says it cannot change it.
func (v Verdict) Warnings(cells []Cell) []string {
	var out []string
	if v.Interference != nil {
		if w := v.Interference.Warning(v.Interference.Kind == InterferenceSome); w != "" {
			out = append(out, w)
		}
	}
	for _, c := range SortCells(cells) {
		if c.Workload != v.Host.Workload || c.Phase != v.Host.Phase || c.DispersionFlag() == "" {
			continue
		}
		w := dispersionWarning(cells, c)
		if left := v.leftOut(c.CellKey); len(left) > 0 {
			out = append(out, w+"; the verdict leaves out its interfered cell runs ("+repeatNumbersText(left)+")")
			continue
		}
		switch {
		case HasCell(v.Blocking, c.CellKey):
			w += "; at its most adverse repeats the answer would not be yes, so it keeps this verdict inconclusive"
		case v.FlagsChecked && HasCell(v.Flagged, c.CellKey):
			w += "; it cannot change this verdict: at its most adverse repeats the answer stays yes"
		}
		out = append(out, w)
	}
	return out
}

// leftOut are the repeats of cell k the verdict left out as interfered.
func (v Verdict) leftOut(k CellKey) []int {
	var out []int
	if v.Interference == nil || v.Interference.Kind != InterferenceSome {
		return nil
	}
	for _, r := range v.Interference.Runs {
		if r.CellKey == k {
			out = append(out, r.Repeat)
		}
	}
	return out
}

func dispersionWarning(cells []Cell, c Cell) string {
	return fmt.Sprintf("%s: %s: %s", cellText(c.CellKey), c.DispersionFlag(), flagCause(c, highClassCell(cells, c)))
}

// highClassCell is the cell of the highest class run beside c (same
// target, workload, phase and threads), or nil when c is that class.
func highClassCell(cells []Cell, c Cell) *Cell {
	var best *Cell
	for i, o := range cells {
		if o.Target == c.Target && o.Workload == c.Workload && o.Phase == c.Phase && o.Threads == c.Threads && o.QoS > c.QoS &&
			(best == nil || o.QoS > best.QoS) {
			best = &cells[i]
		}
	}
	return best
}

// The thresholds of flagCause.
const (
	// starvedShare: a class is starved when its median CPU share is below
	// this share of the high class's (of a whole CPU, for the high class
	// itself): a thread kept off the CPU, which gets what others leave.
	starvedShare = 0.5
	// lostShare: a repeat lost share when it got less than this share of
	// the cell's best repeat.
	lostShare = 0.8
	// steadySpeed: speeds within this ratio of each other are steady.
	steadySpeed = 1.25
	// farAbove: a starved class's repeat that got more than this many
	// times the median share of its repeats, and over half the starved
	// limit (a quarter of the high class's share), is no crumb: crumbs
	// vary by nature (0.05%..2.5%, 8x the median at most in the cases
	// seen), but a share that far above the rest is a thread the
	// contention stopped holding (at 2 threads 42.3% beside 0.33%).
	farAbove = 10
)

// flagCause says what happened to the threads of a cell whose repeats
// disagree, from their CPU share and speed per repeat; hi is the highest
// class's cell beside it (nil when c is that class):
//
//   - contention did not hold: a starved class that got as much share as
//     a free thread in some repeats, or far above its other repeats
//     (farAbove), naming them;
//   - in a VM, a class starved inside the guest: the finding, not noise;
//   - a starved class: its share varies more than its speed does; crumbs
//     of a CPU vary by nature, so under contention this is expected, not a
//     data problem;
//   - a busy machine: a class not starved (the highest class never is)
//     lost share in some repeats (something else took the CPU), or its
//     speed per CPU-second varied;
//   - otherwise no explanation in share or speed.
func flagCause(c Cell, hi *Cell) string {
	shares, speeds := c.CPUShares, c.Speeds
	if !slices.ContainsFunc(shares, func(x Float) bool { return !x.IsNaN() }) {
		return "the records carry no CPU time (a run written before results schema 1.2), so whether the threads lost CPU share or speed cannot be told"
	}
	// Shares from some repeats only cannot say what happened in the others,
	// which are as likely the ones that disagree.
	if rec, n := recordedRepeats(c); len(rec) < n {
		return fmt.Sprintf("CPU time is in only %d of its %d repeats that did work (%s), so whether the threads lost CPU share or speed cannot be told",
			len(rec), n, repeatsText(c, rec))
	}
	cpu := "a CPU"
	if c.Target != "host" {
		cpu = "a vCPU"
	}
	ref, refName := 1.0, ""
	if hi != nil && hi.CPUShare.N > 0 {
		ref, refName = float64(hi.CPUShare.Median), fmt.Sprintf("%s's %s", qos.Class(hi.QoS), percent(float64(hi.CPUShare.Median)))
	}
	limit := starvedShare * ref
	speedSpread := spread(speeds)
	if hi != nil && float64(c.CPUShare.Median) < limit {
		med := float64(c.CPUShare.Median)
		if free := repeatsWhere(shares, func(x float64) bool { return x >= limit || x >= limit/2 && x > farAbove*med }); len(free) > 0 {
			those := "those repeats"
			if len(free) == 1 {
				those = "that repeat"
			}
			what := "contention did not hold in " + those
			if c.Contention == 0 {
				what = "nothing kept it off the CPU in " + those
			}
			near := "near " + refName
			if slices.ContainsFunc(free, func(i int) bool { return float64(shares[i]) < limit }) {
				near = fmt.Sprintf("over %.0fx its median %s", float64(farAbove), percent(med))
			}
			return fmt.Sprintf("%s got %s of %s in %s, %s, where its other repeats got %s: %s", qos.Class(c.QoS), valuesText(shares, free, percent),
				cpu, repeatsText(c, free), near, rangeText(shares, free, percent), what)
		}
		if c.Target != "host" && spread(shares) >= speedSpread {
			// Inside the guest no host spinner decides who runs: both
			// classes ride the same vCPUs, so a class the guest kept off
			// them is the QoS effect the verdict asks about.
			return fmt.Sprintf("a class starved inside the guest: %s got %s of %s across repeats, against %s: "+
				"the guest's scheduler kept it off its vCPUs, which is a finding about the VM, not noise of the host's contention",
				qos.Class(c.QoS), rangeText(shares, nil, percent), cpu, refName)
		}
		if spread(shares) >= speedSpread {
			speed := fmt.Sprintf("at a steady speed per CPU-second (%.3gx apart)", speedSpread)
			if speedSpread > steadySpeed {
				speed = fmt.Sprintf("while its speed per CPU-second varied only %.3gx", speedSpread)
			}
			return fmt.Sprintf("a starved class: %s got %s of %s across repeats, against %s, %s; "+
				"what a thread kept off the CPU gets varies by nature, so under contention this is expected, not a data problem",
				qos.Class(c.QoS), rangeText(shares, nil, percent), cpu, refName, speed)
		}
	}
	starved := hi != nil && float64(c.CPUShare.Median) < limit
	if lost := repeatsWhere(shares, func(x float64) bool { return x < lostShare*maxFinite(shares) }); len(lost) > 0 && !starved {
		return fmt.Sprintf("the machine was busy: %s got only %s of %s in %s, where its other repeats got %s: something else took the CPU",
			qos.Class(c.QoS), valuesText(shares, lost, percent), cpu, repeatsText(c, lost), rangeText(shares, lost, percent))
	}
	if speedSpread > steadySpeed {
		slow := repeatsWhere(speeds, func(x float64) bool { return x < maxFinite(speeds)/steadySpeed })
		who, why := "the machine was busy: its speed per CPU-second", "something shared its core or caches, or the clock slowed"
		if c.Target != "host" {
			who, why = "the host was busy: its speed per vCPU-second", "the host ran the vCPU less, or slower, than the guest saw"
		}
		return fmt.Sprintf("%s varied %.3gx across repeats, slowest in %s (%s %s/CPU-s): %s", who, speedSpread, repeatsText(c, slow),
			valuesText(speeds, slow, units.SI), c.Unit, why)
	}
	return fmt.Sprintf("neither its CPU share (%s) nor its speed per CPU-second (%.3gx apart) explains it", rangeText(shares, nil, percent), speedSpread)
}

// recordedRepeats are the positions of c's repeats that did work and carry
// CPU time, and how many did work.
func recordedRepeats(c Cell) (rec []int, working int) {
	for i, rate := range c.TotalRates {
		if idleRate(rate) {
			continue
		}
		working++
		if i < len(c.CPUShares) && !c.CPUShares[i].IsNaN() {
			rec = append(rec, i)
		}
	}
	return rec, working
}

// DispersionFlag says why the cell's repeats cannot be summarized by one
// number, empty when they agree: for a cell timed in phases (compression)
// the flag of its times, which a user reads, when they are flagged; else
// the flag of its total rates. (With the same work in every repeat the two
// flag alike: time and rate are reciprocal up to a constant, so max/min and
// the gaps between logarithms are the same.)
func (c Cell) DispersionFlag() string {
	if c.SecondsDispersion != nil && c.SecondsDispersion.Flag != "" {
		return c.SecondsDispersion.Flag
	}
	return c.Dispersion.Flag
}

// FlagText says in a few words why a cell's repeats cannot stand for one
// number, as a verdict that rests on the cell names it: "repeats 77x
// apart", "repeats fall in two groups", "did no work in 2 of 6 repeats";
// empty when they agree.
func (c Cell) FlagText() string {
	d := c.Dispersion
	if c.SecondsDispersion != nil && c.SecondsDispersion.Flag != "" {
		d = *c.SecondsDispersion
	}
	switch {
	case d.Flag == "":
		return ""
	case d.Zero > 0:
		return fmt.Sprintf("did no work in %d of %d repeats", d.Zero, d.Zero+d.N)
	case d.Bimodal:
		return fmt.Sprintf("repeats fall in two groups (%d near %s, %d near %s)", d.NLow, units.SI(float64(d.Low)), d.NHigh, units.SI(float64(d.High)))
	}
	return fmt.Sprintf("repeats %.3gx apart", float64(d.MaxMin))
}

// cellText names a cell as warnings do: "host fp qos=9 threads=1", with
// the phase of a compression cell unless it is named as its workload, and
// its parameters where they tell it apart (CellKey.Params).
func cellText(k CellKey) string { return CellText(k) }

// CellText is cellText, for the packages that name cells as the analysis
// does.
func CellText(k CellKey) string {
	s := fmt.Sprintf("%s %s", k.Target, k.Workload)
	if k.Phase != "" && k.Phase != k.Workload {
		s += " " + k.Phase
	}
	s = fmt.Sprintf("%s qos=%d threads=%d", s, k.QoS, k.Threads)
	if k.Params != "" {
		s += " " + k.Params
	}
	return s
}

// spread is the largest of the finite positive values over the smallest;
// 1 with fewer than two.
func spread(v []Float) float64 {
	p := positive(v)
	if len(p) < 2 {
		return 1
	}
	return slices.Max(p) / slices.Min(p)
}

// maxFinite is the largest finite value of v (NaN for none).
func maxFinite(v []Float) float64 {
	m := math.NaN()
	for _, x := range v {
		if f := float64(x); !math.IsNaN(f) && !math.IsInf(f, 0) && (math.IsNaN(m) || f > m) {
			m = f
		}
	}
	return m
}

// repeatsWhere are the positions in v (in repeat order) whose value is a
// number and satisfies keep.
func repeatsWhere(v []Float, keep func(float64) bool) []int {
	var out []int
	for i, x := range v {
		if !x.IsNaN() && keep(float64(x)) {
			out = append(out, i)
		}
	}
	return out
}

// valuesText lists v at positions at: "97% and 98%".
func valuesText(v []Float, at []int, format func(float64) string) string {
	parts := make([]string, len(at))
	for i, p := range at {
		parts[i] = format(float64(v[p]))
	}
	return andList(parts)
}

// rangeText is the range of v's numbers outside positions except:
// "0.05%..2.5%", or the one value.
func rangeText(v []Float, except []int, format func(float64) string) string {
	var rest []float64
	for i, x := range v {
		if !x.IsNaN() && !slices.Contains(except, i) {
			rest = append(rest, float64(x))
		}
	}
	if len(rest) == 0 {
		return "none"
	}
	lo, hi := format(slices.Min(rest)), format(slices.Max(rest))
	if lo == hi {
		return lo
	}
	return lo + ".." + hi
}

// andList joins "a", "a and b", "a, b and c".
func andList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// repeatsText names the repeats of c at positions at: "repeat 3",
// "repeats 3 and 5".
func repeatsText(c Cell, at []int) string {
	parts := make([]string, len(at))
	for i, p := range at {
		parts[i] = strconv.Itoa(p + 1)
		if p < len(c.Repeats) {
			parts[i] = strconv.Itoa(c.Repeats[p])
		}
	}
	if len(parts) == 1 {
		return "repeat " + parts[0]
	}
	return "repeats " + andList(parts)
}
