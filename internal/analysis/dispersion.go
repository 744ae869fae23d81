package analysis

import (
	"math"
	"slices"
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
	// Min and Max are the smallest and largest value; NaN without values.
	Min, Max Float `json:"-"`
	// Unit is the values' unit ("loops/s").
	Unit string `json:"-"`
	// Zero counts the repeats that did no work (a rate of 0, or none at
	// all): left out of every statistic, and a flag of their own.
	Zero int `json:"zero,omitempty"`
	// Flag says why the repeats cannot be summarized by one number;
	// FlagNone when they agree.
	Flag FlagKind `json:"-"`
	// FlagWords are the flag in words where a document writes them out
	// (summary.json's "flag"): the analysis leaves them empty, the writer
	// fills them from the values.
	FlagWords string `json:"flag,omitempty"`
}

// FlagKind is why a cell's repeats cannot be summarized by one number.
type FlagKind int

// The flags of a dispersion, the first that applies.
const (
	// FlagNone: the repeats agree.
	FlagNone FlagKind = iota
	// FlagIdle: some repeats did no work (Zero).
	FlagIdle
	// FlagBimodal: the repeats fall in two groups (Low, High).
	FlagBimodal
	// FlagApart: the repeats are more than DisagreeRatio apart (Min, Max).
	FlagApart
)

// Disperse measures the dispersion of one value per repeat (NaNs and
// non-positive values, which have no ratio, are left out: a repeat whose
// value is 0 or less did no work, and is counted and flagged); unit is the
// values' unit ("loops/s").
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
	d := Dispersion{N: len(v), CV: nan, MaxMin: nan, Low: nan, High: nan, Min: nan, Max: nan, Unit: unit, Zero: zero}
	if zero > 0 {
		d.Flag = FlagIdle
	}
	if len(v) == 0 {
		return d
	}
	d.Min, d.Max = Float(v[0]), Float(v[len(v)-1])
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
	case d.Flag != FlagNone:
	case d.Bimodal:
		d.Flag = FlagBimodal
	case float64(d.MaxMin) > DisagreeRatio:
		d.Flag = FlagApart
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

// CellWarning is a flagged cell, as a warning beside a verdict (or under
// the tables) has it: the cell, what happened to its threads (Cause), and
// what it does to the verdict that rests on it (Effect, LeftOut).
type CellWarning struct {
	Cell  Cell
	Cause FlagCause
	// Effect is what the cell does to the verdict; EffectNone for a cell
	// no verdict judges, or one that changes nothing said.
	Effect FlagEffect
	// LeftOut are the repeats the verdict left out as interfered
	// (EffectLeftOut).
	LeftOut []int
}

// FlagEffect is what a flagged cell does to a verdict that rests on it.
type FlagEffect int

// The effects of a flagged cell.
const (
	// EffectNone: nothing to say of the verdict.
	EffectNone FlagEffect = iota
	// EffectLeftOut: the verdict leaves out the cell's interfered cell
	// runs (CellWarning.LeftOut).
	EffectLeftOut
	// EffectBlocks: at its most adverse repeats the answer would not be
	// yes, so the cell keeps the verdict inconclusive.
	EffectBlocks
	// EffectCannotChange: at its most adverse repeats the answer stays
	// yes.
	EffectCannotChange
)

// DispersionWarnings are the flagged cells of one workload (and phase), in
// table order, as a verdict line is followed by them: the cell, why its
// repeats disagree, and what happened to its threads (CauseOf).
func DispersionWarnings(cells []Cell, workload, phase string) []CellWarning {
	var out []CellWarning
	for _, c := range SortCells(cells) {
		if c.Workload != workload || c.Phase != phase || !c.Flagged() {
			continue
		}
		out = append(out, CellWarning{Cell: c, Cause: CauseOf(cells, c)})
	}
	return out
}

// VerdictWarnings are what a verdict's warnings say: the interference
// report of its VM cell runs, when the rule found any, then the flagged
// cells of its workload, each with what it does to the verdict.
type VerdictWarnings struct {
	// Interference is the report, nil when no cell run was interfered;
	// Judged says the verdict judges without the interfered runs.
	Interference *InterferenceReport
	Judged       bool
	Cells        []CellWarning
}

// Warnings are the interference report of v's VM cell runs, when the rule
// found any, then the flagged cells of v's workload, as DispersionWarnings
// has them, each with what it does to v: a cell that blocks a yes, one
// re-decided at its most adverse repeats with the answer still yes, one
// whose interfered cell runs the verdict leaves out.
func (v Verdict) Warnings(cells []Cell) VerdictWarnings {
	var out VerdictWarnings
	if v.Interference != nil && len(v.Interference.Runs) > 0 {
		out.Interference, out.Judged = v.Interference, v.Interference.Kind == InterferenceSome
	}
	for _, w := range DispersionWarnings(cells, v.Host.Workload, v.Host.Phase) {
		switch left := v.leftOut(w.Cell.CellKey); {
		case len(left) > 0:
			w.Effect, w.LeftOut = EffectLeftOut, left
		case HasCell(v.Blocking, w.Cell.CellKey):
			w.Effect = EffectBlocks
		case v.FlagsChecked && HasCell(v.Flagged, w.Cell.CellKey):
			w.Effect = EffectCannotChange
		}
		out.Cells = append(out.Cells, w)
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

// The thresholds of CauseOf.
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

// CauseKind is what happened to the threads of a cell whose repeats
// disagree (CauseOf).
type CauseKind int

// The causes, in the order CauseOf tries them.
const (
	// CauseNoCPUTime: the records carry no CPU time (a run written before
	// results schema 1.2).
	CauseNoCPUTime CauseKind = iota
	// CausePartlyRecorded: CPU time is in only some of the repeats that
	// did work (FlagCause.Repeats of FlagCause.Working).
	CausePartlyRecorded
	// CauseNotHeld: a starved class got as much share as a free thread in
	// some repeats (FlagCause.Repeats), or far above its other repeats
	// (FlagCause.FarAbove): the contention did not hold.
	CauseNotHeld
	// CauseStarvedInGuest: in a VM, a class starved inside the guest.
	CauseStarvedInGuest
	// CauseStarved: a starved class whose share varies more than its
	// speed: expected under contention.
	CauseStarved
	// CauseBusyShare: a class not starved lost share in some repeats
	// (FlagCause.Repeats): something else took the CPU.
	CauseBusyShare
	// CauseBusySpeed: its speed per CPU-second varied beyond steadySpeed,
	// slowest in FlagCause.Repeats.
	CauseBusySpeed
	// CauseUnexplained: neither share nor speed explains it.
	CauseUnexplained
)

// FlagCause says what happened to the threads of a flagged cell.
type FlagCause struct {
	Kind CauseKind
	// Repeats are the positions (in repeat order) of the repeats the
	// cause names.
	Repeats []int
	// Working is how many repeats did work (CausePartlyRecorded).
	Working int
	// HighQoS and HighShare are the highest class run beside the cell and
	// its median CPU share; HighShare is NaN without one (or without its
	// share).
	HighQoS   int
	HighShare Float
	// FarAbove is, for CauseNotHeld where some named repeat got less than
	// the high class's half, how many times the cell's median share they
	// got over (farAbove); 0 otherwise.
	FarAbove float64
	// SpeedSpread is the cell's speeds' largest over smallest; Steady says
	// it is within steadySpeed.
	SpeedSpread float64
	Steady      bool
}

// CauseOf says what happened to the threads of a cell whose repeats
// disagree, from their CPU share and speed per repeat, beside the highest
// class's cell run beside it (none when c is that class):
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
func CauseOf(cells []Cell, c Cell) FlagCause {
	hi := highClassCell(cells, c)
	shares, speeds := c.CPUShares, c.Speeds
	cause := FlagCause{HighShare: Float(math.NaN()), SpeedSpread: spread(speeds)}
	cause.Steady = cause.SpeedSpread <= steadySpeed
	if !slices.ContainsFunc(shares, func(x Float) bool { return !x.IsNaN() }) {
		cause.Kind = CauseNoCPUTime
		return cause
	}
	// Shares from some repeats only cannot say what happened in the others,
	// which are as likely the ones that disagree.
	if rec, n := recordedRepeats(c); len(rec) < n {
		cause.Kind, cause.Repeats, cause.Working = CausePartlyRecorded, rec, n
		return cause
	}
	ref := 1.0
	if hi != nil && hi.CPUShare.N > 0 {
		ref = float64(hi.CPUShare.Median)
		cause.HighQoS, cause.HighShare = hi.QoS, hi.CPUShare.Median
	}
	limit := starvedShare * ref
	starved := hi != nil && float64(c.CPUShare.Median) < limit
	if starved {
		med := float64(c.CPUShare.Median)
		if free := repeatsWhere(shares, func(x float64) bool { return x >= limit || x >= limit/2 && x > farAbove*med }); len(free) > 0 {
			cause.Kind, cause.Repeats = CauseNotHeld, free
			if slices.ContainsFunc(free, func(i int) bool { return float64(shares[i]) < limit }) {
				cause.FarAbove = farAbove
			}
			return cause
		}
		if spread(shares) >= cause.SpeedSpread {
			// Inside the guest no host spinner decides who runs: both
			// classes ride the same vCPUs, so a class the guest kept off
			// them is the QoS effect the verdict asks about.
			cause.Kind = CauseStarved
			if c.Target != "host" {
				cause.Kind = CauseStarvedInGuest
			}
			return cause
		}
	}
	if lost := repeatsWhere(shares, func(x float64) bool { return x < lostShare*maxFinite(shares) }); len(lost) > 0 && !starved {
		cause.Kind, cause.Repeats = CauseBusyShare, lost
		return cause
	}
	if !cause.Steady {
		cause.Kind = CauseBusySpeed
		cause.Repeats = repeatsWhere(speeds, func(x float64) bool { return x < maxFinite(speeds)/steadySpeed })
		return cause
	}
	cause.Kind = CauseUnexplained
	return cause
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

// FlaggedDispersion is the dispersion whose flag a user reads: for a cell
// timed in phases (compression) that of its times, when they are flagged;
// else that of its total rates. (With the same work in every repeat the
// two flag alike: time and rate are reciprocal up to a constant, so
// max/min and the gaps between logarithms are the same.)
func (c Cell) FlaggedDispersion() Dispersion {
	if c.SecondsDispersion != nil && c.SecondsDispersion.Flag != FlagNone {
		return *c.SecondsDispersion
	}
	return c.Dispersion
}

// Flagged says the cell's repeats cannot be summarized by one number
// (FlaggedDispersion).
func (c Cell) Flagged() bool { return c.FlaggedDispersion().Flag != FlagNone }

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
