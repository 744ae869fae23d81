package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/units"
)

// Finding is the finding as the summaries print it: "host mmul qos=33
// threads=3: in 5 of 5 repeats one thread finished 1.39 s (68%) after the
// other two".
func Finding(f analysis.Finding) string {
	head := f.Target
	if f.Workload != "" && f.Workload != "all" {
		head += " " + f.Workload
	}
	if f.QoS != 0 {
		head += fmt.Sprintf(" qos=%d", f.QoS)
	}
	if f.Threads > 0 {
		head += fmt.Sprintf(" threads=%d", f.Threads)
	}
	if f.Params != "" {
		head += " " + f.Params
	}
	return head + ": " + FindingText(f)
}

// FindingText is what a finding says, after the cell it is of.
func FindingText(f analysis.Finding) string {
	switch {
	case f.Stragglers != nil:
		return stragglersText(f, *f.Stragglers)
	case f.Batches != nil:
		return batchesText(*f.Batches)
	case f.Scaling != nil:
		return scalingText(*f.Scaling)
	case f.CoreShare != nil:
		return coreShareText(*f.CoreShare)
	}
	return ""
}

// stragglersText says how the threads of the repeats with a late group
// finished (analysis.Stragglers): "in 5 of 6 repeats two threads finished
// 1.10 s (55%) after the other four", or "in 6 of 6 repeats threads
// finished in two groups: two at 2.00 s, five 1.02 s (51%) later".
func stragglersText(f analysis.Finding, l analysis.LateGroups) string {
	noun := "thread"
	if f.Workload == "procs" {
		noun = "process"
	}
	return fmt.Sprintf("in %d of %d repeats %s", l.Repeats, l.Of, lateText(l, f.Threads, noun))
}

// lateText is stragglersText after the count of repeats.
func lateText(l analysis.LateGroups, threads int, noun string) string {
	if l.TwoGroups {
		return fmt.Sprintf("%s finished in two groups: %s at %.2f s, %s %.2f s (%.0f%%) later", plural(2, noun),
			sizeRange(l.OnTime), l.At, sizeRange(l.Late), l.Delay, 100*l.Share)
	}
	lo, hi := l.Late.Low, l.Late.High
	who := fmt.Sprintf("%s %s finished", numberWord(lo), plural(lo, noun))
	rest := "the others"
	switch {
	case lo != hi:
		who = fmt.Sprintf("%s %s finished", sizeRange(l.Late), plural(hi, noun))
	case threads-lo == 1:
		rest = "the other one"
	default:
		rest = "the other " + numberWord(threads-lo)
	}
	return fmt.Sprintf("%s %.2f s (%.0f%%) after %s", who, l.Delay, 100*l.Share, rest)
}

// sizeRange is a group's size in words, or the range of its sizes over
// the repeats: "two", "one to two".
func sizeRange(r analysis.IntRange) string {
	if r.Low == r.High {
		return numberWord(r.Low)
	}
	return numberWord(r.Low) + " to " + numberWord(r.High)
}

// plural is noun for one, else its plural ("threads", "processes").
func plural(n int, noun string) string {
	switch {
	case n == 1:
		return noun
	case strings.HasSuffix(noun, "s"):
		return noun + "es"
	}
	return noun + "s"
}

func numberWord(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}

// batchesText says the steps of process completions (analysis.Batches).
func batchesText(b analysis.BatchSteps) string {
	steps := make([]string, len(b.Steps))
	for i, at := range b.Steps {
		steps[i] = fmt.Sprintf("%.1f", at)
	}
	text := fmt.Sprintf("completions come in batches of %d: steps at %s s (every step but the last has %d; %d of %d repeats in batches of %d)",
		b.Size, strings.Join(steps, ", "), b.Size, b.Fit, b.Of, b.Size)
	if b.Outliers > 0 {
		at := fmt.Sprintf("%.2f", b.OutlierLow)
		if hi := fmt.Sprintf("%.2f", b.OutlierHigh); hi != at {
			at += ".." + hi
		}
		text += fmt.Sprintf("; in %d of them one process ended outside the steps (at %s s), left out", b.Outliers, at)
	}
	return text
}

// scalingText says where adding threads stops paying (analysis.Scaling).
func scalingText(s analysis.ScalingFit) string {
	what := func(p analysis.ScalingPoint) string { return fmt.Sprintf("%.3g %s/s", p.Rate, s.Unit) }
	if s.TotalWork {
		what = func(p analysis.ScalingPoint) string { return fmt.Sprintf("%.3g s", p.Seconds) }
	}
	text := fmt.Sprintf("best at %d threads (%s)", s.Best.Threads, what(s.Best))
	if !s.Shown {
		text = unshownText(s, what)
	}
	switch s.Tail {
	case analysis.TailWorse:
		text += fmt.Sprintf("; more threads did worse (%d threads: %s)", s.Last.Threads, what(s.Last))
	case analysis.TailGainedNothing:
		text += fmt.Sprintf("; more threads gained nothing (%d threads: %s)", s.Last.Threads, what(s.Last))
	case analysis.TailStopped:
		text = fmt.Sprintf("adding threads stopped paying at %d threads (%s, within %.0f%% of the best, %s at %d)",
			s.Plateau.Threads, what(s.Plateau), 100*s.Tolerance, what(s.Best), s.Best.Threads)
	case analysis.TailStillPaid:
		text += "; every added thread still paid"
	}
	return text + slopeText(s)
}

// unshownText opens a finding whose best count the tests do not show best:
// its median, then the counts it is within noise of, with each p, and
// those whose repeats are too few for any test to tell at Alpha: "highest
// median at 2 threads (2e+08 loops/s); within noise of it: 3 threads
// (1.75e+08 loops/s, p=0.59)".
func unshownText(s analysis.ScalingFit, what func(analysis.ScalingPoint) string) string {
	text := fmt.Sprintf("highest median at %d threads (%s)", s.Best.Threads, what(s.Best))
	if s.TotalWork {
		text = fmt.Sprintf("shortest median at %d threads (%s)", s.Best.Threads, what(s.Best))
	}
	var noise []string
	for _, n := range s.Noise {
		noise = append(noise, fmt.Sprintf("%d threads (%s, %s)", n.Threads, what(n.ScalingPoint), FormatP(n.P)))
	}
	if len(noise) > 0 {
		text += "; within noise of it: " + strings.Join(noise, ", ")
	}
	if len(s.Few) > 0 {
		few := make([]string, len(s.Few))
		for i, t := range s.Few {
			few[i] = fmt.Sprint(t)
		}
		sizes := make([]string, len(s.FewSizes))
		for i, sz := range s.FewSizes {
			sizes[i] = fmt.Sprintf("%d vs %d", sz[0], sz[1])
		}
		text += fmt.Sprintf("; too few repeats to test it against %s threads (smallest reachable p %s with %s repeats)",
			strings.Join(few, ", "), strconv.FormatFloat(s.FewP, 'g', 2, 64), strings.Join(sizes, ", "))
	}
	return text
}

// slopeText says what each added thread brought up to the paying count
// (the Theil-Sen slope, with its interval), and past it the change of the
// median total rate at each step.
func slopeText(s analysis.ScalingFit) string {
	unit := s.Unit + "/s"
	var text string
	if s.Sloped {
		text = fmt.Sprintf("; up to %d threads each added thread brought %.3g %s [%.3g..%.3g] (Theil-Sen)", s.Paying,
			float64(s.Slope.Slope), unit, float64(s.Slope.Low), float64(s.Slope.High))
	} else {
		text = fmt.Sprintf("; no thread added to %d paid", s.First)
	}
	if len(s.Steps) > 0 {
		past := make([]string, len(s.Steps))
		threads := make([]string, len(s.StepThreads))
		for i, st := range s.Steps {
			past[i] = fmt.Sprintf("%+.2g", st)
			threads[i] = fmt.Sprint(s.StepThreads[i])
		}
		text += fmt.Sprintf("; past %d, the steps to %s threads changed it by %s %s", s.Paying, strings.Join(threads, ", "), strings.Join(past, ", "), unit)
	}
	return text
}

// coreShareText says where a cell's workers ran (telemetry): "the worker
// most on E cores spent 40% of its busy time there (median over 3
// repeats; 35%..45%; telemetry: a share of time, not of work)", or why
// that is not available.
func coreShareText(c analysis.CoreShare) string {
	if c.Unavailable != "" {
		return "core-type share not available: " + c.Unavailable
	}
	spread := ""
	if len(c.Shares) > 1 {
		spread = fmt.Sprintf("; %.0f%%..%.0f%%", 100*slices.Min(c.Shares), 100*slices.Max(c.Shares))
	}
	return fmt.Sprintf("the worker most on %s cores spent %.0f%% of its busy time there (median over %s%s; telemetry: a share of time, not of work)",
		c.Slow, 100*c.Median, units.Plural(len(c.Shares), "repeat"), spread)
}
