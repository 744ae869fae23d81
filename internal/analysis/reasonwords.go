package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/units"
)

// The words the verdict's reasons (subsumption.go, judge.go) and the
// verdict's flagged cells still use, until the reasons are values too;
// package render has the same words for everything else (render.CellText,
// render.FlagText, render.TargetLabel), and this file goes with the last
// of its callers.

// cellText names a cell as warnings do: "host fp qos=9 threads=1", with
// the phase of a compression cell unless it is named as its workload, and
// its parameters where they tell it apart (CellKey.Params).
func cellText(k CellKey) string { return CellText(k) }

// CellText is cellText, for the callers outside the package that still
// name cells as the reasons do (render.CellText for the rest).
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

// FlagText says in a few words why a cell's repeats cannot stand for one
// number, as a verdict that rests on the cell names it: "repeats 77x
// apart", "repeats fall in two groups", "did no work in 2 of 6 repeats";
// empty when they agree.
func (c Cell) FlagText() string {
	d := c.FlaggedDispersion()
	switch d.Flag {
	case FlagNone:
		return ""
	case FlagIdle:
		return fmt.Sprintf("did no work in %d of %d repeats", d.Zero, d.Zero+d.N)
	case FlagBimodal:
		return fmt.Sprintf("repeats fall in two groups (%d near %s, %d near %s)", d.NLow, units.SI(float64(d.Low)), d.NHigh, units.SI(float64(d.High)))
	}
	return fmt.Sprintf("repeats %.3gx apart", float64(d.MaxMin))
}

// cpuText is an amount of host CPU: "0.5 CPU", "1.2 CPUs"; two significant
// digits below 1.
func cpuText(x float64) string {
	if math.IsNaN(x) {
		return "an unknown amount of CPU"
	}
	s := strconv.FormatFloat(x, 'g', 2, 64)
	if x >= 1 {
		s = strconv.FormatFloat(x, 'f', 1, 64)
	}
	if s == "1" || s == "1.0" || x < 1 {
		return s + " CPU"
	}
	return s + " CPUs"
}

// andList joins "a", "a and b", "a, b and c".
func andList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
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
