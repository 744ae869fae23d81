package analysis

import (
	"fmt"
	"math"
	"slices"

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
// them: "host fp qos=9 threads=1: repeats range 1.6M..527M loops/s; the
// machine was busy or contention did not hold".
func DispersionWarnings(cells []Cell, workload, phase string) []string {
	var out []string
	for _, c := range SortCells(cells) {
		if c.Workload != workload || c.Phase != phase || c.DispersionFlag() == "" {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s; the machine was busy or contention did not hold", cellText(c.CellKey), c.DispersionFlag()))
	}
	return out
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
// the phase of a compression cell unless it is named as its workload.
func cellText(k CellKey) string {
	s := fmt.Sprintf("%s %s", k.Target, k.Workload)
	if k.Phase != "" && k.Phase != k.Workload {
		s += " " + k.Phase
	}
	return fmt.Sprintf("%s qos=%d threads=%d", s, k.QoS, k.Threads)
}
