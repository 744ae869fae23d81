package analysis

import (
	"math"
	"slices"
)

// A run that cannot decide because an interval is too wide may add repeats
// of the undecided thread counts' cells in blocks and decide again: a
// group-sequential design. Every look is one more chance of a false yes,
// so each look's one-sided tests run at a level of their own, and the
// levels of all the looks a thread count can have add up to
// equivalenceLevel: by the union bound the chance of a false yes at any
// look is at most their sum, whatever the correlation between looks. The
// levels come from a Lan-DeMets spending function of the Pocock type,
// alpha(t) = equivalenceLevel·ln(1 + (e-1)·t), t the share of the cap's
// repeats a look has: it spends early (45% of the 5% at the first of three
// looks), which a quiet machine that decides at the first look needs.

// Look is where one decision stands in a run's sequence of looks.
type Look struct {
	// Index is the look, from 1; Of is how many looks the schedule has.
	Index int `json:"index"`
	Of    int `json:"of"`
	// Level is each one-sided test's level at this look.
	Level float64 `json:"level"`
}

// ThreadLook is one thread count's look: its repeats (the fewer of the
// VM's two cells there) and the look they are.
type ThreadLook struct {
	Threads int `json:"threads"`
	Repeats int `json:"repeats"`
	Look
}

// MoreRepeats says which cells a block more of repeats could decide: set
// only when the verdict is undecided because an interval is too wide, or
// the repeats too few for one, and the schedule has a look left.
type MoreRepeats struct {
	// Threads are the thread counts to add a block to, ascending, each
	// with the repeats per cell it is to reach (its next schedule entry):
	// both classes on the VM.
	Threads []RepeatsTo `json:"threads"`
	// Host says the host's cells at those thread counts need the block
	// too: the host's interval sets the band's edge there (the relative
	// margin binds), so narrowing it can decide.
	Host bool `json:"host"`
}

// RepeatsTo is a thread count and the repeats per cell it is to reach.
type RepeatsTo struct {
	Threads int `json:"threads"`
	Repeats int `json:"repeats"`
}

// Schedule is the repeats per cell at each look: repeats, 2·repeats, ...,
// the last exactly maxRepeats. maxRepeats at or below repeats (0 turns
// sequential repeats off) is one look, at repeats. Nil for repeats < 1.
func Schedule(repeats, maxRepeats int) []int {
	if repeats < 1 {
		return nil
	}
	out := []int{repeats}
	for n := 2 * repeats; n < maxRepeats; n += repeats {
		out = append(out, n)
	}
	if maxRepeats > repeats {
		out = append(out, maxRepeats)
	}
	return out
}

// LookLevels are the levels of each one-sided test at each look of the
// schedule: alpha(t_k) - alpha(t_k-1), t_k = schedule[k]/schedule[last],
// alpha(t) = equivalenceLevel·ln(1 + (e-1)·t). They add up to
// equivalenceLevel; one look is equivalenceLevel exactly.
func LookLevels(schedule []int) []float64 {
	if len(schedule) == 0 {
		return nil
	}
	last := float64(schedule[len(schedule)-1])
	spent := func(k int) float64 {
		if k == len(schedule)-1 {
			return equivalenceLevel // exactly, not ln(e)'s rounding
		}
		return equivalenceLevel * math.Log(1+(math.E-1)*float64(schedule[k])/last)
	}
	out := make([]float64, len(schedule))
	prev := 0.0
	for k := range schedule {
		s := spent(k)
		out[k] = s - prev
		prev = s
	}
	return out
}

// lookPlan is the level each thread count's interval is judged at, and
// the pooled interval's.
type lookPlan struct {
	schedule []int
	levels   []float64
	// looks are the compared thread counts' looks, ascending by threads;
	// nil for a one-look verdict without a schedule.
	looks []ThreadLook
}

// planLooks finds each compared thread count's look from the repeats of
// its VM cells: the first look whose schedule entry reaches them (the
// last look beyond the cap). The VM's cells, not the host's: the VM's
// interval is what the level is for, and a block may add repeats to the
// VM alone.
func planLooks(cells []Cell, k verdictKey, schedule []int) lookPlan {
	p := lookPlan{schedule: schedule, levels: LookLevels(schedule)}
	if len(schedule) == 0 {
		return p
	}
	for _, t := range k.threads {
		n := -1
		for _, c := range cells {
			if c.Target == k.vm && c.Workload == k.workload && c.Phase == k.phase && c.Threads == t && (c.QoS == k.high || c.QoS == k.low) {
				if n < 0 || len(c.TotalRates) < n {
					n = len(c.TotalRates)
				}
			}
		}
		i := slices.IndexFunc(schedule, func(s int) bool { return s >= n })
		if i < 0 {
			i = len(schedule) - 1
		}
		p.looks = append(p.looks, ThreadLook{Threads: t, Repeats: n, Look: Look{Index: i + 1, Of: len(schedule), Level: p.levels[i]}})
	}
	return p
}

// sequential says the schedule has more than one look (Sequential).
func (p lookPlan) sequential() bool { return Sequential(p.looks) }

// Sequential says looks, a verdict's, are of a schedule of more than one
// look: the levels of looks apply. The looks say it (a verdict has only
// them).
func Sequential(looks []ThreadLook) bool { return len(looks) > 0 && looks[0].Of > 1 }

// level is thread count t's level (equivalenceLevel without a schedule).
func (p lookPlan) level(t int) float64 {
	for _, l := range p.looks {
		if l.Threads == t {
			return l.Level
		}
	}
	return equivalenceLevel
}

// confidence is the coverage of thread count t's interval.
func (p lookPlan) confidence(t int) float64 { return 1 - 2*p.level(t) }

// pooledConfidence is the coverage of the pooled interval
// (PooledConfidence).
func (p lookPlan) pooledConfidence() float64 { return PooledConfidence(p.looks) }

// PooledConfidence is the coverage of a verdict's pooled interval at its
// looks: that of the strictest level among the thread counts, since the
// pooled interval rests on all of them (equivalenceLevel without looks).
func PooledConfidence(looks []ThreadLook) float64 {
	l := equivalenceLevel
	for _, tl := range looks {
		l = math.Min(l, tl.Level)
	}
	return 1 - 2*l
}

// lastLook is the highest look any thread count is at (LastLook).
func (p lookPlan) lastLook() int { return LastLook(p.looks) }

// LastLook is the highest look any of a verdict's thread counts is at (1
// without one).
func LastLook(looks []ThreadLook) int {
	n := 1
	for _, l := range looks {
		n = max(n, l.Index)
	}
	return n
}

// more is the block that could decide an undecided verdict needing more
// repeats at threads (host: the host's cells too): each thread count not
// yet at the cap, to its next schedule entry; nil when every one is at
// the cap or there is one look.
func (p lookPlan) more(threads []int, host bool) *MoreRepeats {
	if !p.sequential() {
		return nil
	}
	var out []RepeatsTo
	for _, l := range p.looks {
		if slices.Contains(threads, l.Threads) && l.Index < len(p.schedule) {
			out = append(out, RepeatsTo{Threads: l.Threads, Repeats: p.schedule[l.Index]})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &MoreRepeats{Threads: out, Host: host}
}

// cap is the schedule's last entry: the most repeats per cell it allows.
func (p lookPlan) cap() int { return p.schedule[len(p.schedule)-1] }
