package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/units"
)

// CellText names a cell as warnings do: "host fp qos=9 threads=1", with
// the phase of a compression cell unless it is named as its workload, and
// its parameters where they tell it apart (analysis.CellKey.Params).
func CellText(k analysis.CellKey) string {
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

// Flag says why a dispersion's repeats cannot be summarized by one
// number, empty when they agree: "repeats range 1.6M..527M loops/s (329x
// apart)", "repeats fall in two groups: 3 near 1.55M and 3 near 527M
// loops/s", "2 of 6 repeats did no work (rate 0)".
func Flag(d analysis.Dispersion) string {
	switch d.Flag {
	case analysis.FlagIdle:
		return fmt.Sprintf("%d of %d repeats did no work (rate 0)", d.Zero, d.Zero+d.N)
	case analysis.FlagBimodal:
		return fmt.Sprintf("repeats fall in two groups: %d near %s and %d near %s %s", d.NLow, units.SI(float64(d.Low)), d.NHigh, units.SI(float64(d.High)), d.Unit)
	case analysis.FlagApart:
		return fmt.Sprintf("repeats range %s..%s %s (%.3gx apart)", units.SI(float64(d.Min)), units.SI(float64(d.Max)), d.Unit, float64(d.MaxMin))
	}
	return ""
}

// CellFlag is the flag of the dispersion a user reads of the cell
// (analysis.Cell.FlaggedDispersion), empty when its repeats agree.
func CellFlag(c analysis.Cell) string { return Flag(c.FlaggedDispersion()) }

// FlagText says in a few words why a cell's repeats cannot stand for one
// number, as a verdict that rests on the cell names it: "repeats 77x
// apart", "repeats fall in two groups (3 near 1.55M, 3 near 527M)", "did
// no work in 2 of 6 repeats"; empty when they agree.
func FlagText(c analysis.Cell) string {
	d := c.FlaggedDispersion()
	switch d.Flag {
	case analysis.FlagNone:
		return ""
	case analysis.FlagIdle:
		return fmt.Sprintf("did no work in %d of %d repeats", d.Zero, d.Zero+d.N)
	case analysis.FlagBimodal:
		return fmt.Sprintf("repeats fall in two groups (%d near %s, %d near %s)", d.NLow, units.SI(float64(d.Low)), d.NHigh, units.SI(float64(d.High)))
	}
	return fmt.Sprintf("repeats %.3gx apart", float64(d.MaxMin))
}

// WithFlags is the cells with their dispersions' flags in words
// (analysis.Dispersion.FlagWords), as a document writes them out.
func WithFlags(cells []analysis.Cell) []analysis.Cell {
	if cells == nil {
		return nil
	}
	out := make([]analysis.Cell, len(cells))
	for i, c := range cells {
		c.Dispersion.FlagWords = Flag(c.Dispersion)
		if c.SecondsDispersion != nil {
			d := *c.SecondsDispersion
			d.FlagWords = Flag(d)
			c.SecondsDispersion = &d
		}
		out[i] = c
	}
	return out
}

// TargetLabel capitalizes a target's name for prose: "vm" is an acronym and
// becomes "VM", anything else gets a capital first letter ("host" -> "Host").
func TargetLabel(target string) string {
	if strings.EqualFold(target, "vm") {
		return "VM"
	}
	if target == "" {
		return target
	}
	return strings.ToUpper(target[:1]) + target[1:]
}

// Share writes a CPU share as a percentage (percent), "-" when it is not
// a number.
func Share(share analysis.Float) string {
	if share.IsNaN() {
		return "-"
	}
	return percent(float64(share))
}

// percent writes a share as a percentage with two significant digits below
// 10% and three from there: "0.24%", "2.5%", "99.8%".
func percent(share float64) string {
	p := 100 * share
	digits := 3
	if p < 10 {
		digits = 2
	}
	return strconv.FormatFloat(p, 'g', digits, 64) + "%"
}

// andList joins "a", "a and b", "a, b and c".
func andList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
