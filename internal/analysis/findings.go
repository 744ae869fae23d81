package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// StragglerThreshold is how much later than the other threads a thread
// must finish, as a share of their median time, to be called a straggler:
// [allocation] (docs/references.md) found one 68% late.
const StragglerThreshold = 0.20

// MinStragglerDelay is the least delay that counts as a straggler whatever
// the share: below a few scheduler time slices, one thread ending after the
// others says nothing.
const MinStragglerDelay = 0.05 // s

// ScalingTolerance is how close to the best a thread count must come to
// count as already there: differences under it are noise, not a trend.
const ScalingTolerance = 0.10

// Finding is a pattern qoslab states in words: a straggler thread, batches
// of completions, where adding threads stops paying.
type Finding struct {
	Kind     string `json:"kind"` // "stragglers", "batches", "scaling"
	Target   string `json:"target"`
	Workload string `json:"workload"`
	QoS      int    `json:"qos"`
	Threads  int    `json:"threads,omitempty"` // the cell's, where the finding is of one cell
	Text     string `json:"text"`
}

// String is the finding as the summaries print it: "host mmul qos=33
// threads=3: in 5 of 5 repeats one thread finished 1.39 s (68%) after the
// other two".
func (f Finding) String() string {
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
	return head + ": " + f.Text
}

// endsByRepeat groups each repeat's record end times (s since the cell
// began) by cell, for observations keep selects.
func endsByRepeat(obs []Observation, keep func(Observation) bool) (map[CellKey]map[int][]float64, []CellKey) {
	out := map[CellKey]map[int][]float64{}
	var order []CellKey
	for _, o := range obs {
		if !keep(o) {
			continue
		}
		if out[o.CellKey] == nil {
			out[o.CellKey] = map[int][]float64{}
			order = append(order, o.CellKey)
		}
		out[o.CellKey][o.Repeat] = append(out[o.CellKey][o.Repeat], float64(o.EndNs)/1e9)
	}
	slices.SortStableFunc(order, CompareKeys)
	return out, order
}

// Stragglers finds, in fixed-work cells of 2 or more threads (keep says
// which observations count), repeats where the last thread finished later
// than the median of the others by more than threshold of that median, as
// [allocation] saw: 2.03, 2.03, 3.42 s. One finding per cell that has any,
// with the median delay over those repeats.
func Stragglers(obs []Observation, keep func(Observation) bool, threshold float64) []Finding {
	ends, order := endsByRepeat(obs, func(o Observation) bool { return o.Phase == "" && o.Threads >= 2 && keep(o) })
	var out []Finding
	for _, k := range order {
		reps := ends[k]
		var delays, shares []float64
		for _, e := range reps {
			if len(e) < 2 {
				continue
			}
			s := slices.Sorted(slices.Values(e))
			others := median(s[:len(s)-1])
			delay := s[len(s)-1] - others
			if others > 0 && delay > threshold*others && delay >= MinStragglerDelay {
				delays = append(delays, delay)
				shares = append(shares, delay/others)
			}
		}
		if len(delays) == 0 {
			continue
		}
		rest := "the other one"
		if k.Threads > 2 {
			rest = fmt.Sprintf("the other %s", numberWord(k.Threads-1))
		}
		out = append(out, Finding{Kind: "stragglers", Target: k.Target, Workload: k.Workload, QoS: k.QoS, Threads: k.Threads,
			Text: fmt.Sprintf("in %d of %d repeats one thread finished %.2f s (%.0f%%) after %s", len(delays), len(reps),
				median(slices.Sorted(slices.Values(delays))), 100*median(slices.Sorted(slices.Values(shares))), rest)})
	}
	return out
}

func numberWord(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}

// Batches finds, in procs cells (keep says which observations count),
// process completions that come in steps, as [processes] saw: 10
// processes in batches of 4 ending at about 2.1, 4.1 and 6.2 s. Completions
// are split where the gap between two successive ones is more than a
// quarter of the first completion time and at least MinStragglerDelay. A
// repeat fits when it has two or more steps and every step but the last
// holds the same number of processes, two or more: the finding describes
// the first repeat that fits (batch size, the steps' mean times) and says
// how many repeats fit with that size. Completions that do not fall into
// such steps are no finding.
func Batches(obs []Observation, keep func(Observation) bool) []Finding {
	ends, order := endsByRepeat(obs, func(o Observation) bool { return o.Workload == "procs" && keep(o) })
	var out []Finding
	for _, k := range order {
		reps := ends[k]
		nums := make([]int, 0, len(reps))
		for r := range reps {
			nums = append(nums, r)
		}
		sort.Ints(nums)
		var first []batch
		same := 0
		for _, r := range nums {
			b := batches(reps[r])
			if !fits(b) {
				continue
			}
			if first == nil {
				first = b
			}
			if b[0].size == first[0].size {
				same++
			}
		}
		if first == nil {
			continue
		}
		steps := make([]string, len(first))
		for i, b := range first {
			steps[i] = fmt.Sprintf("%.1f", b.at)
		}
		out = append(out, Finding{Kind: "batches", Target: k.Target, Workload: k.Workload, QoS: k.QoS, Threads: k.Threads,
			Text: fmt.Sprintf("completions come in batches of %d: steps at %s s (every step but the last has %d; %d of %d repeats in batches of %d)",
				first[0].size, strings.Join(steps, ", "), first[0].size, same, len(nums), first[0].size)})
	}
	return out
}

// fits reports whether steps are batches: two or more, every one but the
// last of the same size, two or more processes, the last no larger (what
// is left over).
func fits(b []batch) bool {
	if len(b) < 2 || b[0].size < 2 || b[len(b)-1].size > b[0].size {
		return false
	}
	for _, x := range b[:len(b)-1] {
		if x.size != b[0].size {
			return false
		}
	}
	return true
}

type batch struct {
	size int
	at   float64 // mean completion time, s
}

// batches splits completion times into steps (see Batches).
func batches(ends []float64) []batch {
	s := slices.Sorted(slices.Values(ends))
	if len(s) == 0 || s[0] <= 0 {
		return nil
	}
	gap := max(s[0]/4, MinStragglerDelay)
	var out []batch
	start := 0
	for i := 1; i <= len(s); i++ {
		if i == len(s) || s[i]-s[i-1] > gap {
			var sum float64
			for _, v := range s[start:i] {
				sum += v
			}
			out = append(out, batch{size: i - start, at: sum / float64(i-start)})
			start = i
		}
	}
	return out
}

// Scaling says, per target, workload and class with 3 or more thread
// counts, where adding threads stops paying: for a fixed total of work
// (pi's iterations split over the threads, [m1-qos]) the thread count that
// finished soonest, for work per thread the one with the highest total
// rate; and whether more threads did worse.
func Scaling(cells []Cell, totalWork func(workload string) bool) []Finding {
	type key struct {
		target, workload string
		qos              int
	}
	series := map[key][]Cell{}
	var order []key
	for _, c := range SortCells(cells) {
		if c.Phase != "" || c.TotalRate.N == 0 {
			continue
		}
		k := key{c.Target, c.Workload, c.QoS}
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
		best := cs[0]
		better := func(c Cell) bool { return float64(c.TotalRate.Median) > float64(best.TotalRate.Median) }
		what := func(c Cell) string { return fmt.Sprintf("%.3g %s/s", float64(c.TotalRate.Median), c.Unit) }
		if totalWork(k.workload) {
			better = func(c Cell) bool { return float64(c.Seconds.Median) < float64(best.Seconds.Median) }
			what = func(c Cell) string { return fmt.Sprintf("%.3g s", float64(c.Seconds.Median)) }
		}
		for _, c := range cs[1:] {
			if better(c) {
				best = c
			}
		}
		if math.IsNaN(float64(best.TotalRate.Median)) {
			continue
		}
		// near: within ScalingTolerance of the best.
		near := func(c Cell) bool {
			if totalWork(k.workload) {
				return float64(c.Seconds.Median) <= float64(best.Seconds.Median)*(1+ScalingTolerance)
			}
			return float64(c.TotalRate.Median) >= float64(best.TotalRate.Median)*(1-ScalingTolerance)
		}
		plateau := best
		for _, c := range cs {
			if near(c) {
				plateau = c
				break
			}
		}
		last := cs[len(cs)-1]
		text := fmt.Sprintf("best at %d threads (%s)", best.Threads, what(best))
		switch {
		case !near(last):
			text += fmt.Sprintf("; more threads did worse (%d threads: %s)", last.Threads, what(last))
		case plateau.Threads == best.Threads && best.Threads < last.Threads:
			text += fmt.Sprintf("; more threads gained nothing (%d threads: %s)", last.Threads, what(last))
		case plateau.Threads < last.Threads:
			text = fmt.Sprintf("adding threads stopped paying at %d threads (%s, within %.0f%% of the best, %s at %d)",
				plateau.Threads, what(plateau), 100*ScalingTolerance, what(best), best.Threads)
		default:
			text += "; every added thread still paid"
		}
		out = append(out, Finding{Kind: "scaling", Target: k.target, Workload: k.workload, QoS: k.qos, Text: text})
	}
	return out
}
