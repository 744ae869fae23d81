package analysis

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// StragglerThreshold is how much later than the other threads a thread
// must finish, as a share of their median time, to be called a straggler:
// [allocation] (docs/references.md) found one 68% late.
const StragglerThreshold = 0.20

// minStragglerDelay is the least delay that counts as a straggler whatever
// the share: below a few scheduler time slices, one thread ending after the
// others says nothing.
const minStragglerDelay = 0.05 // s

// Finding is a pattern qoslab reports: a straggler thread, batches
// of completions, where adding threads stops paying, where the workers
// ran. It holds the numbers; the words are the renderer's.
type Finding struct {
	Kind     string `json:"kind"` // "stragglers", "batches", "scaling", "core-share"
	Target   string `json:"target"`
	Workload string `json:"workload"`
	QoS      int    `json:"qos"`
	Threads  int    `json:"threads,omitempty"` // the cell's, where the finding is of one cell
	// Params are the cells' parameters where they tell them apart
	// (CellKey.Params).
	Params string `json:"params,omitempty"`
	// The finding itself, one of them by Kind.
	Stragglers *LateGroups `json:"-"`
	Batches    *BatchSteps `json:"-"`
	Scaling    *ScalingFit `json:"-"`
	CoreShare  *CoreShare  `json:"-"`
}

// LateGroups is a stragglers finding (Stragglers): in how many repeats a
// late group finished after the others, the groups' sizes over them, and
// the medians over them of when the on-time group finished, how much later
// the late one did, and that as a share.
type LateGroups struct {
	Repeats, Of int
	// TwoGroups says the late group was half the threads or more in some
	// repeat: two groups, not stragglers.
	TwoGroups    bool
	OnTime, Late IntRange
	At, Delay    float64 // s
	Share        float64
}

// IntRange is the least and the most of some counts.
type IntRange struct{ Low, High int }

// BatchSteps is a batches finding (Batches): the batch size, the steps of
// the first repeat that fits (mean completion times, s), how many repeats
// fit of how many, and in how many of them one process ended outside the
// steps, and when (the earliest and latest, s).
type BatchSteps struct {
	Size                    int
	Steps                   []float64
	Fit, Of                 int
	Outliers                int
	OutlierLow, OutlierHigh float64
}

// CoreShare is a core-share finding (made from telemetry, beside the
// analysis): the worker most on the slower core type spent Median of its
// busy time there, over Shares (ascending, one per repeat); or, with
// Unavailable set, why no share could be read.
type CoreShare struct {
	Slow        string
	Median      float64
	Shares      []float64
	Unavailable string
}

// repeatTimes is one repeat's records of a cell: their end times and the
// spread of their start times (s since the cell began).
type repeatTimes struct {
	ends        []float64
	startSpread float64
}

// timesByRepeat groups each repeat's record times by cell, for
// observations keep selects.
func timesByRepeat(obs []Observation, keep func(Observation) bool) (map[CellKey]map[int]*repeatTimes, []CellKey) {
	out := map[CellKey]map[int]*repeatTimes{}
	starts := map[CellKey]map[int][2]float64{}
	var order []CellKey
	for _, o := range obs {
		if !keep(o) {
			continue
		}
		if out[o.CellKey] == nil {
			out[o.CellKey] = map[int]*repeatTimes{}
			starts[o.CellKey] = map[int][2]float64{}
			order = append(order, o.CellKey)
		}
		r := out[o.CellKey][o.Repeat]
		st := float64(o.StartNs) / 1e9
		if r == nil {
			r = &repeatTimes{}
			out[o.CellKey][o.Repeat] = r
			starts[o.CellKey][o.Repeat] = [2]float64{st, st}
		}
		r.ends = append(r.ends, float64(o.EndNs)/1e9)
		b := starts[o.CellKey][o.Repeat]
		b = [2]float64{min(b[0], st), max(b[1], st)}
		starts[o.CellKey][o.Repeat] = b
		r.startSpread = b[1] - b[0]
	}
	slices.SortStableFunc(order, CompareKeys)
	return out, order
}

// repeatNumbers are the repeats of a cell in ascending order.
func repeatNumbers[T any](reps map[int]T) []int {
	nums := make([]int, 0, len(reps))
	for r := range reps {
		nums = append(nums, r)
	}
	sort.Ints(nums)
	return nums
}

// most says whether a pattern seen in n of total repeats holds in most of
// them: a finding is stated only then.
func most(n, total int) bool { return 2*n > total }

// lateSplit is how one repeat's threads split into an on-time group and a
// late one (lateGroup).
type lateSplit struct {
	onTime, late int     // the groups' sizes
	at           float64 // the on-time group's median end, s
	delay        float64 // the late group's median end less at, s
	share        float64 // delay over at
}

// twoGroups says whether the late group is half the threads or more: then
// it is no straggler beside the others but one of two groups.
func (l lateSplit) twoGroups() bool { return 2*l.late >= l.onTime+l.late }

// lateGroup finds the late group of one repeat: sorted ends split in two
// clusters, an on-time group and a late one, at a gap that stands out from
// the spread within each: wider than gapToSpread times the wider group's
// own range (the rule that tells two groups of repeats apart in Disperse).
// A gap that does not stand out so splits one spread, not two groups: 2.00,
// 2.00, 3.00, 3.01, 3.02, 3.02, 3.03 split anywhere but before 3.00 would
// leave late threads in the on-time group, or call one cluster two. At most
// one split can stand out (two would each need a gap over 4 times the
// other). The late group must also have finished more than threshold (share
// of the on-time group's median end), minStragglerDelay and the repeat's
// own start-up spread (a process started last ends last without being
// late) after the on-time median, and the on-time group's last thread not.
// ok is false when no split qualifies.
func lateGroup(ends []float64, startSpread, threshold float64) (split lateSplit, ok bool) {
	s := slices.Sorted(slices.Values(ends))
	past := func(v, on float64) bool {
		return v-on > threshold*on && v-on >= minStragglerDelay && v-on > startSpread
	}
	n := len(s)
	for k := 1; k < n; k++ {
		gap := s[k] - s[k-1]
		spread := max(s[k-1]-s[0], s[n-1]-s[k])
		on := median(s[:k])
		if gap <= gapToSpread*spread || on <= 0 || !past(s[k], on) || past(s[k-1], on) {
			continue
		}
		d := median(s[k:]) - on
		return lateSplit{onTime: k, late: n - k, at: on, delay: d, share: d / on}, true
	}
	return lateSplit{}, false
}

// Stragglers finds, in fixed-work cells of 2 or more threads or processes
// (keep says which observations count), the late group of each repeat (see
// lateGroup), as [allocation] saw: 2.03, 2.03, 3.42 s. A cell gets a
// finding when most of its repeats have one, with the count of repeats, the
// groups' sizes (or the range of their sizes) and the late group's median
// delay and share over those repeats. While the late group is under half
// the threads in every such repeat, its threads are stragglers: "in 5 of 6
// repeats two threads finished 1.10 s (55%) after the other four". Half or
// more is no straggler beside the others but two groups, and said so, with
// when the first finished: "in 6 of 6 repeats threads finished in two
// groups: two at 2.00 s, five 1.02 s (51%) later".
func Stragglers(obs []Observation, keep func(Observation) bool, threshold float64) []Finding {
	times, order := timesByRepeat(obs, func(o Observation) bool { return o.Phase == "" && o.Threads >= 2 && keep(o) })
	var out []Finding
	for _, k := range order {
		reps := times[k]
		var splits []lateSplit
		for _, r := range repeatNumbers(reps) {
			if len(reps[r].ends) < 2 {
				continue
			}
			if l, ok := lateGroup(reps[r].ends, reps[r].startSpread, threshold); ok {
				splits = append(splits, l)
			}
		}
		if !most(len(splits), len(reps)) {
			continue
		}
		out = append(out, Finding{Kind: "stragglers", Target: k.Target, Workload: k.Workload, QoS: k.QoS, Threads: k.Threads, Params: k.Params,
			Stragglers: lateGroups(splits, len(reps))})
	}
	return out
}

// lateGroups sums up the repeats with a late group (see Stragglers),
// medians over those repeats, of repeats in all.
func lateGroups(splits []lateSplit, repeats int) *LateGroups {
	var ats, delays, shares []float64
	var onTime, late []int
	groups := false
	for _, l := range splits {
		ats, delays, shares = append(ats, l.at), append(delays, l.delay), append(shares, l.share)
		onTime, late = append(onTime, l.onTime), append(late, l.late)
		groups = groups || l.twoGroups()
	}
	med := func(v []float64) float64 { return median(slices.Sorted(slices.Values(v))) }
	return &LateGroups{Repeats: len(splits), Of: repeats, TwoGroups: groups,
		OnTime: IntRange{slices.Min(onTime), slices.Max(onTime)}, Late: IntRange{slices.Min(late), slices.Max(late)},
		At: med(ats), Delay: med(delays), Share: med(shares)}
}

// Batches finds, in procs cells (keep says which observations count),
// process completions that come in steps, as [processes] saw: 10
// processes in batches of 4 ending at about 2.1, 4.1 and 6.2 s.
// Completions are split into steps where the gaps between them stand out
// from the completions within them: every gap between two steps wider than
// gapToSpread times the widest range of a step's own completions, as two
// groups of repeats are told from one spread. A fixed threshold decided it
// before, and made steps of any gaps that alternate across it (gaps of 0.20
// and 0.26 s beside a quarter of a 1 s first completion were "batches of
// 2"), and broke a step whose own gaps crossed it. A floor stays below
// which no gap is a step, however it stands out: a quarter of the first
// completion time (a batch is a round of the CPUs, so steps come about a
// first completion apart), minStragglerDelay (scheduler noise), and the
// spread of the repeat's own start times (steps at the scale of process
// start-up are not batches). A
// repeat fits when it has two or more steps and every step but the last
// holds the same number of processes, two or more; when it fits only
// without one completion (a process that ended early or late by itself),
// it fits with that one outlying, and the finding says so. A cell gets a
// finding when most of its repeats fit with the same batch size: the steps
// of the first such repeat and how many repeats fit. Completions that do
// not fall into such steps are no finding.
func Batches(obs []Observation, keep func(Observation) bool) []Finding {
	times, order := timesByRepeat(obs, func(o Observation) bool { return o.Workload == "procs" && keep(o) })
	var out []Finding
	for _, k := range order {
		reps := times[k]
		type fit struct {
			steps   []batch
			outlier float64 // the completion left out; NaN for none
		}
		fits := map[int]fit{}
		count := map[int]int{}
		for _, r := range repeatNumbers(reps) {
			steps, outlier, ok := batchesOf(reps[r].ends, reps[r].startSpread)
			if !ok {
				continue
			}
			fits[r] = fit{steps, outlier}
			count[steps[0].size]++
		}
		size, best := 0, 0
		for sz, n := range count {
			if n > best || n == best && sz < size {
				size, best = sz, n
			}
		}
		if !most(best, len(reps)) {
			continue
		}
		var first fit
		outliers := 0
		var outlierAt []float64
		for _, r := range repeatNumbers(fits) {
			f := fits[r]
			if f.steps[0].size != size {
				continue
			}
			if first.steps == nil {
				first = f
			}
			if !math.IsNaN(f.outlier) {
				outliers++
				outlierAt = append(outlierAt, f.outlier)
			}
		}
		b := &BatchSteps{Size: size, Fit: best, Of: len(reps), Outliers: outliers}
		for _, st := range first.steps {
			b.Steps = append(b.Steps, st.at)
		}
		if outliers > 0 {
			b.OutlierLow, b.OutlierHigh = slices.Min(outlierAt), slices.Max(outlierAt)
		}
		out = append(out, Finding{Kind: "batches", Target: k.Target, Workload: k.Workload, QoS: k.QoS, Threads: k.Threads, Params: k.Params, Batches: b})
	}
	return out
}

// batchesOf splits one repeat's completions into steps (see Batches) and
// says whether they fit, leaving out at most one completion to make them
// fit (returned as outlier; NaN when none was left out).
func batchesOf(ends []float64, startSpread float64) (steps []batch, outlier float64, ok bool) {
	s := slices.Sorted(slices.Values(ends))
	if b, ok := fitting(s, startSpread); ok {
		return b, math.NaN(), true
	}
	for i := range s {
		rest := slices.Delete(slices.Clone(s), i, i+1)
		if b, ok := fitting(rest, startSpread); ok {
			return b, s[i], true
		}
	}
	return nil, math.NaN(), false
}

// fitting is the first of the ways sorted completions split into steps
// (stepSplits) whose steps are batches (fits).
func fitting(s []float64, startSpread float64) ([]batch, bool) {
	for _, b := range stepSplits(s, startSpread) {
		if fits(b) {
			return b, true
		}
	}
	return nil, false
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

// stepSplits are the ways sorted completion times split into steps (see
// Batches), the one whose steps stand out most first (the highest ratio of
// the narrowest gap between steps to the widest range within one): each
// cut makes every gap wider than it a gap between steps and every other a
// gap within one, and counts when the narrowest gap between steps is wider
// than gapToSpread times the widest range within one, and than the floor
// below which no gap is a step (Batches). Steps within steps (a hierarchy)
// give more than one.
func stepSplits(s []float64, startSpread float64) [][]batch {
	if len(s) < 2 || s[0] <= 0 {
		return nil
	}
	gaps := make([]float64, len(s)-1)
	for i := range gaps {
		gaps[i] = s[i+1] - s[i]
	}
	floor := max(s[0]/4, minStragglerDelay, startSpread)
	type split struct {
		steps []batch
		ratio float64 // the narrowest gap between steps over the widest range within one
	}
	var out []split
	for _, cut := range slices.Compact(slices.Sorted(slices.Values(gaps))) {
		narrowest, widest := math.Inf(1), 0.0
		var steps []batch
		start := 0
		for i := 1; i <= len(s); i++ {
			if i < len(s) && gaps[i-1] <= cut {
				continue
			}
			if i < len(s) {
				narrowest = min(narrowest, gaps[i-1])
			}
			widest = max(widest, s[i-1]-s[start])
			var sum float64
			for _, v := range s[start:i] {
				sum += v
			}
			steps = append(steps, batch{size: i - start, at: sum / float64(i-start)})
			start = i
		}
		if len(steps) < 2 || narrowest <= gapToSpread*widest || narrowest <= floor {
			continue
		}
		out = append(out, split{steps, narrowest / widest})
	}
	slices.SortStableFunc(out, func(a, b split) int { return cmp.Compare(b.ratio, a.ratio) })
	steps := make([][]batch, len(out))
	for i, x := range out {
		steps[i] = x.steps
	}
	return steps
}
