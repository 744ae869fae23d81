package render

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/units"
)

// DispersionWarnings are the warning lines for the flagged cells of one
// workload (and phase), in table order, as a verdict line is followed by
// them: the cell, why its repeats disagree, and what happened to its
// threads (Cause): "host fp qos=9 threads=1: repeats range
// 281.9k..1.694M loops/s (6.01x apart): a starved class: ...".
func DispersionWarnings(cells []analysis.Cell, workload, phase string) []string {
	var out []string
	for _, w := range analysis.DispersionWarnings(cells, workload, phase) {
		out = append(out, CellWarning(w))
	}
	return out
}

// VerdictWarnings are the warning lines beside a verdict: the interference
// warning of its VM cell runs, when the rule found any (Interference),
// then those of the flagged cells of its workload, each followed by what
// it does to the verdict.
func VerdictWarnings(v analysis.Verdict, cells []analysis.Cell) []string {
	ws := v.Warnings(cells)
	var out []string
	if ws.Interference != nil {
		if w := Interference(*ws.Interference, ws.Judged); w != "" {
			out = append(out, w)
		}
	}
	for _, w := range ws.Cells {
		out = append(out, CellWarning(w))
	}
	return out
}

// CellWarning is one flagged cell's warning line: the cell, why its
// repeats disagree, what happened to its threads, and what it does to the
// verdict that rests on it.
func CellWarning(w analysis.CellWarning) string {
	c := w.Cell
	line := fmt.Sprintf("%s: %s: %s", CellText(c.CellKey), CellFlag(c), Cause(c, w.Cause))
	switch w.Effect {
	case analysis.EffectLeftOut:
		line += "; the verdict leaves out its interfered cell runs (" + repeatNumbersText(w.LeftOut) + ")"
	case analysis.EffectBlocks:
		line += "; at its most adverse repeats the answer would not be yes, so it keeps this verdict inconclusive"
	case analysis.EffectCannotChange:
		line += "; it cannot change this verdict: at its most adverse repeats the answer stays yes"
	}
	return line
}

// Cause says what happened to the threads of cell c whose repeats
// disagree (analysis.CauseOf).
func Cause(c analysis.Cell, cause analysis.FlagCause) string {
	shares, speeds := c.CPUShares, c.Speeds
	cpu := "a CPU"
	if c.Target != "host" {
		cpu = "a vCPU"
	}
	refName := ""
	if !cause.HighShare.IsNaN() {
		refName = fmt.Sprintf("%s's %s", qos.Class(cause.HighQoS), percent(float64(cause.HighShare)))
	}
	at := cause.Repeats
	switch cause.Kind {
	case analysis.CauseNoCPUTime:
		return "the records carry no CPU time (a run written before results schema 1.2), so whether the threads lost CPU share or speed cannot be told"
	case analysis.CausePartlyRecorded:
		return fmt.Sprintf("CPU time is in only %d of its %d repeats that did work (%s), so whether the threads lost CPU share or speed cannot be told",
			len(at), cause.Working, repeatsText(c, at))
	case analysis.CauseNotHeld:
		those := "those repeats"
		if len(at) == 1 {
			those = "that repeat"
		}
		what := "contention did not hold in " + those
		if c.Contention == 0 {
			what = "nothing kept it off the CPU in " + those
		}
		near := "near " + refName
		if cause.FarAbove > 0 {
			near = fmt.Sprintf("over %.0fx its median %s", cause.FarAbove, percent(float64(c.CPUShare.Median)))
		}
		return fmt.Sprintf("%s got %s of %s in %s, %s, where its other repeats got %s: %s", qos.Class(c.QoS), valuesText(shares, at, percent),
			cpu, repeatsText(c, at), near, rangeText(shares, at, percent), what)
	case analysis.CauseStarvedInGuest:
		return fmt.Sprintf("a class starved inside the guest: %s got %s of %s across repeats, against %s: "+
			"the guest's scheduler kept it off its vCPUs, which is a finding about the VM, not noise of the host's contention",
			qos.Class(c.QoS), rangeText(shares, nil, percent), cpu, refName)
	case analysis.CauseStarved:
		speed := fmt.Sprintf("at a steady speed per CPU-second (%.3gx apart)", cause.SpeedSpread)
		if !cause.Steady {
			speed = fmt.Sprintf("while its speed per CPU-second varied only %.3gx", cause.SpeedSpread)
		}
		return fmt.Sprintf("a starved class: %s got %s of %s across repeats, against %s, %s; "+
			"what a thread kept off the CPU gets varies by nature, so under contention this is expected, not a data problem",
			qos.Class(c.QoS), rangeText(shares, nil, percent), cpu, refName, speed)
	case analysis.CauseBusyShare:
		return fmt.Sprintf("the machine was busy: %s got only %s of %s in %s, where its other repeats got %s: something else took the CPU",
			qos.Class(c.QoS), valuesText(shares, at, percent), cpu, repeatsText(c, at), rangeText(shares, at, percent))
	case analysis.CauseBusySpeed:
		who, why := "the machine was busy: its speed per CPU-second", "something shared its core or caches, or the clock slowed"
		if c.Target != "host" {
			who, why = "the host was busy: its speed per vCPU-second", "the host ran the vCPU less, or slower, than the guest saw"
		}
		return fmt.Sprintf("%s varied %.3gx across repeats, slowest in %s (%s %s/CPU-s): %s", who, cause.SpeedSpread, repeatsText(c, at),
			valuesText(speeds, at, units.SI), c.Unit, why)
	}
	return fmt.Sprintf("neither its CPU share (%s) nor its speed per CPU-second (%.3gx apart) explains it", rangeText(shares, nil, percent), cause.SpeedSpread)
}

// valuesText lists v at positions at: "97% and 98%".
func valuesText(v []analysis.Float, at []int, format func(float64) string) string {
	parts := make([]string, len(at))
	for i, p := range at {
		parts[i] = format(float64(v[p]))
	}
	return andList(parts)
}

// rangeText is the range of v's numbers outside positions except:
// "0.05%..2.5%", or the one value.
func rangeText(v []analysis.Float, except []int, format func(float64) string) string {
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

// repeatsText names the repeats of c at positions at: "repeat 3",
// "repeats 3 and 5".
func repeatsText(c analysis.Cell, at []int) string {
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

// Interference says what the interference rule found, with numbers, for
// the warnings beside a verdict (judged says the verdict leaves the runs
// out): how much CPU other work took during how many of the VM's cell
// runs and who, what their vCPUs got against the run's norm, which cell
// runs, and what would change it:
//
//	other work on the host took 0.5 CPU during 9 of 24 vm cell runs (python3, pid 30353): their vCPUs got 1.1 host CPUs against the run's 1.9 at 2 threads; ...
//
// Empty when no cell run was interfered.
func Interference(rep analysis.InterferenceReport, judged bool) string {
	if len(rep.Runs) == 0 {
		return ""
	}
	target := rep.Runs[0].Target
	w := fmt.Sprintf("other work on the host took %s during %d of %d %s cell runs", cpuText(float64(rep.OtherCPU)), len(rep.Runs), rep.Judged, target)
	if who := othersText(rep.Others); who != "" {
		w += " (" + who + ")"
	}
	var got []string
	for _, g := range rep.Got() {
		what := "against the run's"
		if len(got) > 0 {
			what = "against"
		}
		got = append(got, fmt.Sprintf("%s %s %s at %s", hostCPUsText(g.Got, len(got) == 0), what,
			strconv.FormatFloat(float64(g.Norm.Share), 'f', 1, 64), units.Plural(g.Norm.Threads, "thread")))
	}
	w += ": their vCPUs got " + strings.Join(got, ", ")
	w += " (" + runsText(rep.Runs) + ")"
	w += fmt.Sprintf("; a VM cell run counts as interfered when its vCPUs got more than %s host CPU (or %g robust spreads of the run's cell runs) below the run's median at its thread count while other work took %s or more",
		strconv.FormatFloat(rep.Rule.MinDeficit, 'f', -1, 64), rep.Rule.Spreads, cpuText(rep.Rule.OtherFloor))
	if judged {
		w += "; the verdict judges the cell runs without them"
	}
	return w + "; measured again with the host otherwise idle, they would count"
}

// InterferenceWarnings is the interference warning of the cells of a
// workload (and phase) no verdict judges: what the rule finds among them
// (analysis.InterferedAmong).
func InterferenceWarnings(cells []analysis.Cell, workload, phase string) []string {
	if w := Interference(analysis.InterferedAmong(cells, workload, phase), false); w != "" {
		return []string{w}
	}
	return nil
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

// hostCPUsText is "1.1 host CPUs" (with the words when words), else "1.1".
func hostCPUsText(x float64, words bool) string {
	s := strconv.FormatFloat(x, 'f', 1, 64)
	if words {
		s += " host CPUs"
	}
	return s
}

// othersText names the other processes that took most: each with at
// least a quarter of the largest's CPU time, "python3, pid 30353".
func othersText(ps []hostview.Process) string {
	var parts []string
	for _, p := range ps {
		if len(parts) > 0 && 4*p.CPUNs < ps[0].CPUNs {
			break
		}
		parts = append(parts, fmt.Sprintf("%s, pid %d", p.Name, p.PID))
	}
	return strings.Join(parts, "; ")
}

// runsText names cell runs compactly, by cell and repeats: "vm fp qos=9
// threads=2 repeats 1, 3 and 5; vm fp qos=33 threads=2 repeat 2".
func runsText(runs []analysis.InterferedRun) string {
	var order []analysis.CellKey
	reps := map[analysis.CellKey][]int{}
	for _, r := range runs {
		if reps[r.CellKey] == nil {
			order = append(order, r.CellKey)
		}
		reps[r.CellKey] = append(reps[r.CellKey], r.Repeat)
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = CellText(k) + " " + repeatNumbersText(reps[k])
	}
	return strings.Join(parts, "; ")
}

// repeatNumbersText is "repeat 2", "repeats 1, 3 and 5".
func repeatNumbersText(reps []int) string {
	s := make([]string, len(reps))
	for i, r := range reps {
		s[i] = strconv.Itoa(r)
	}
	if len(s) == 1 {
		return "repeat " + s[0]
	}
	return "repeats " + andList(s)
}
