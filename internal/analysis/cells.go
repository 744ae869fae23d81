package analysis

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/hostview"
)

// CellKey names a cell: one workload at one QoS with one thread count on one
// target (and, for compression, one timed phase), with one set of
// parameters.
type CellKey struct {
	Target   string `json:"target"`
	Workload string `json:"workload"`
	QoS      int    `json:"qos"`
	Threads  int    `json:"threads"`
	Phase    string `json:"phase,omitempty"`
	// Params tells apart the cells of a workload that a run measured with
	// more than one set of parameters (two matrix entries that differ only
	// in loops, a duration, a size...): their text as a series key writes
	// it (catalog.ParamsText), "size=4194304 ratio=3 codec=zstd level=0
	// sink=null". It is empty for a workload the run measured one way,
	// whose parameters tell nothing apart, so its cells are named, matched
	// across runs and ordered as they always were.
	Params string `json:"params,omitempty"`
}

// Cell summarizes a cell's repeats.
type Cell struct {
	CellKey
	Unit string `json:"unit"`
	// Repeats are the numbers of the cell's repeats, ascending: the order
	// of every per-repeat slice below.
	Repeats []int `json:"repeats"`
	// Contention is how many host spinner threads ran while the cell was
	// measured (the most any of its records says).
	Contention int `json:"contention,omitempty"`
	// TotalRate is per repeat: all threads' work over first start to last
	// end. Like ThreadRate, Seconds, CPUShare and Speed it summarizes the
	// repeats that did work only: an idle repeat (a total rate of 0, Idle)
	// is left out of every column alike (n, median, interval, min, max), as
	// the rank tests leave it out, so that n is the repeats the statistics
	// rest on.
	TotalRate OrderStats `json:"total_rate"`
	// TotalRates are every repeat's total rate, in repeat order, idle ones
	// (0) included: the values the rank tests and regressions use, which
	// count and leave out the idle ones themselves.
	TotalRates []float64 `json:"total_rates"`
	// ThreadRate is per repeat: the mean of its threads' own rates. The
	// threads of one repeat share its conditions, so they are not
	// independent measurements: pooling them would narrow the interval
	// without measuring anything more.
	ThreadRate OrderStats `json:"thread_rate"`
	// Dispersion says how far the repeats' total rates agree, and flags a
	// cell whose repeats cannot be summarized by one number.
	Dispersion Dispersion `json:"dispersion"`
	// Seconds is per repeat that did work: first start to last end.
	Seconds OrderStats `json:"seconds"`
	// RepeatSeconds are every repeat's time, in repeat order, idle ones
	// included (as TotalRates).
	RepeatSeconds []float64 `json:"repeat_seconds"`
	// SecondsDispersion is how far the repeats' times agree, for a cell
	// timed in phases (compression: a fixed amount of work, whose times are
	// what a user reads); nil for every other cell.
	SecondsDispersion *Dispersion `json:"seconds_dispersion,omitempty"`
	// CPUShare is per repeat: the CPU time its threads consumed over their
	// measured wall time (0.5: each thread got half a CPU); CPUShares are
	// the values in repeat order, NaN (null) for a repeat whose records
	// carry no CPU time. N is 0 when no repeat recorded it.
	CPUShare  OrderStats `json:"cpu_share"`
	CPUShares []Float    `json:"cpu_shares"`
	// Speed is per repeat: the threads' work per CPU-second they
	// consumed (Unit per CPU-second); Speeds in repeat order, as
	// CPUShares. A thread's rate is its share times its speed.
	Speed  OrderStats `json:"speed"`
	Speeds []Float    `json:"speeds"`
	// LowCPU are the positions (in repeat order) of the repeats that did
	// work on too little CPU time to read a speed from (under
	// MinReadableCPUNs a thread): their Speeds are NaN, and the mechanism
	// leaves them out and says so.
	LowCPU []int `json:"low_cpu,omitempty"`
	// VCPUShares, VCPUWaits and OtherCPU are the host's view of each
	// repeat (hostview.Use, schema 1.3), in repeat order, NaN (null)
	// where it was not recorded: how many host CPUs the VM's vCPU threads
	// got (their run time summed over the repeat's wall time), how many
	// they waited for, and how many the host's other work took. HostViews
	// are the views themselves, nil where not recorded, for what names
	// the processes (see hostuse.go).
	VCPUShares []Float         `json:"vcpu_host_shares,omitempty"`
	VCPUWaits  []Float         `json:"vcpu_waits,omitempty"`
	OtherCPU   []Float         `json:"other_cpu,omitempty"`
	HostViews  []*hostview.Use `json:"-"`
	// QoSApplied lists the classes the threads read back as, ascending.
	QoSApplied []int `json:"qos_applied"`
	// QoSPartial counts records whose class was applied only in part or not at all.
	QoSPartial int `json:"qos_partial"`
	// QoSReasons are the distinct reasons given for those.
	QoSReasons []string `json:"qos_reasons,omitempty"`
	// threadRates are ThreadRate's values per repeat, in repeat order, so
	// that a cell can be summarized again without some of its repeats
	// (WithoutRepeats).
	threadRates []float64
}

// Observation is one thread's (or process's) record in one repeat of a
// cell: what the statistics are computed from.
type Observation struct {
	CellKey
	Repeat int
	Unit   string
	// StartNs and EndNs bound the record's interval on the target's clock;
	// Work is what it did in it, Rate its own Work per second.
	StartNs, EndNs int64
	Work, Rate     float64
	// CPUNs is the CPU time the thread consumed in its interval; 0 when
	// it was not recorded.
	CPUNs int64
	// Contention is how many host spinner threads ran while it was
	// measured.
	Contention int
	// QoSApplied is the class the thread read back as; QoSFull is false
	// when part of the class's OS mapping did not take effect, QoSReason
	// says why.
	QoSApplied int
	QoSFull    bool
	QoSReason  string
	// HostView is what the host saw of the observation's cell run, the
	// same for each of its records; nil where it was not recorded.
	HostView *hostview.Use
}

// Cells groups observations into cells, in the order each cell first
// appears.
func Cells(samples []Observation) []Cell {
	type acc struct {
		cell    Cell
		repeats map[int][]interval
		rates   map[int][]float64
		applied map[int]bool
		reasons map[string]bool
		views   map[int]*hostview.Use
	}
	var order []CellKey
	byKey := map[CellKey]*acc{}
	for _, s := range samples {
		k := s.CellKey
		a := byKey[k]
		if a == nil {
			a = &acc{cell: Cell{CellKey: k, Unit: s.Unit}, repeats: map[int][]interval{}, rates: map[int][]float64{}, applied: map[int]bool{}, reasons: map[string]bool{}, views: map[int]*hostview.Use{}}
			byKey[k] = a
			order = append(order, k)
		}
		a.repeats[s.Repeat] = append(a.repeats[s.Repeat], interval{StartNs: s.StartNs, EndNs: s.EndNs, Work: s.Work, CPUNs: s.CPUNs})
		a.rates[s.Repeat] = append(a.rates[s.Repeat], s.Rate)
		if s.HostView != nil && a.views[s.Repeat] == nil {
			a.views[s.Repeat] = s.HostView
		}
		a.applied[s.QoSApplied] = true
		a.cell.Contention = max(a.cell.Contention, s.Contention)
		if !s.QoSFull || s.QoSApplied != s.QoS {
			a.cell.QoSPartial++
			if s.QoSReason != "" {
				a.reasons[s.QoSReason] = true
			}
		}
	}
	out := make([]Cell, 0, len(order))
	for _, k := range order {
		a := byKey[k]
		reps := make([]int, 0, len(a.repeats))
		for r := range a.repeats {
			reps = append(reps, r)
		}
		sort.Ints(reps)
		a.cell.Repeats = reps
		var totals, secs, shares, speeds, threadRates []float64
		for i, r := range reps {
			rate, el := totalRate(a.repeats[r])
			share, speed, low := cpuUse(a.repeats[r])
			if low {
				a.cell.LowCPU = append(a.cell.LowCPU, i)
			}
			totals, secs = append(totals, rate), append(secs, float64(el)/1e9)
			shares, speeds = append(shares, share), append(speeds, speed)
			threadRates = append(threadRates, mean(a.rates[r]))
		}
		a.cell.summarize(totals, secs, shares, speeds, threadRates)
		if len(a.views) > 0 { // a cell none of whose records carry a view (before schema 1.3) keeps these empty
			a.cell.HostViews = make([]*hostview.Use, len(reps))
			for i, r := range reps {
				a.cell.HostViews[i] = a.views[r]
			}
			a.cell.VCPUShares, a.cell.VCPUWaits, a.cell.OtherCPU = HostUse(a.cell.HostViews)
		}
		for c := range a.applied {
			a.cell.QoSApplied = append(a.cell.QoSApplied, c)
		}
		sort.Ints(a.cell.QoSApplied)
		for r := range a.reasons {
			a.cell.QoSReasons = append(a.cell.QoSReasons, r)
		}
		sort.Strings(a.cell.QoSReasons)
		out = append(out, a.cell)
	}
	return out
}

// summarize sets the cell's statistics from its per-repeat values, in
// Repeats order, every repeat included: totals, secs, shares and speeds
// hold every repeat; each summary is of those that did work.
func (c *Cell) summarize(totals, secs, shares, speeds, threadRates []float64) {
	var workingTotals, workingSecs, workingShares, workingSpeeds, workingThreadRates []float64
	for i, rate := range totals {
		if idleRate(rate) {
			continue
		}
		workingTotals = append(workingTotals, rate)
		workingSecs = append(workingSecs, secs[i])
		workingShares, workingSpeeds = append(workingShares, shares[i]), append(workingSpeeds, speeds[i])
		workingThreadRates = append(workingThreadRates, threadRates[i])
	}
	c.TotalRate = OrderStatsOf(workingTotals)
	c.TotalRates = totals
	c.Seconds = OrderStatsOf(workingSecs)
	c.RepeatSeconds = secs
	c.ThreadRate = OrderStatsOf(workingThreadRates)
	c.threadRates = threadRates
	c.CPUShare, c.CPUShares = OrderStatsOf(workingShares), floats(shares)
	c.Speed, c.Speeds = OrderStatsOf(workingSpeeds), floats(speeds)
	c.Dispersion = Disperse(totals, c.Unit+"/s")
	c.SecondsDispersion = nil
	if c.Phase != "" {
		d := Disperse(workingSecs, "s")
		c.SecondsDispersion = &d
	}
}

// idleRate says whether a repeat's total rate is that of a repeat that did
// no work: 0 (or below), as Disperse counts it in Zero.
func idleRate(rate float64) bool { return rate <= 0 }

// Idle is how many of the cell's repeats did no work (a total rate of 0):
// left out of TotalRate, ThreadRate, Seconds, CPUShare and Speed, and
// flagged (Dispersion.Zero).
func (c Cell) Idle() int { return c.Dispersion.Zero }

// TargetRank orders targets in tables: host, then vm, then any other by
// name.
func TargetRank(target string) int {
	switch target {
	case "host":
		return 0
	case "vm":
		return 1
	}
	return 2
}

// CompareKeys orders cell keys as every table shows them: by workload,
// parameters (CompareParams), target (host before vm), QoS class, threads,
// then phase.
func CompareKeys(a, b CellKey) int {
	if c := strings.Compare(a.Workload, b.Workload); c != 0 {
		return c
	}
	if c := CompareParams(a.Params, b.Params); c != 0 {
		return c
	}
	if c := cmp.Compare(TargetRank(a.Target), TargetRank(b.Target)); c != 0 {
		return c
	}
	if c := strings.Compare(a.Target, b.Target); c != 0 {
		return c
	}
	if c := cmp.Compare(a.QoS, b.QoS); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Threads, b.Threads); c != 0 {
		return c
	}
	return strings.Compare(a.Phase, b.Phase)
}

// CompareParams orders two parameters' texts (CellKey.Params) value by
// value, numbers as numbers, so that size=4194304 comes before
// size=33554432.
func CompareParams(a, b string) int {
	fa, fb := strings.Fields(a), strings.Fields(b)
	for i := range min(len(fa), len(fb)) {
		_, va, _ := strings.Cut(fa[i], "=")
		_, vb, _ := strings.Cut(fb[i], "=")
		na, erra := strconv.ParseFloat(va, 64)
		nb, errb := strconv.ParseFloat(vb, 64)
		if erra == nil && errb == nil {
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
		}
		if c := strings.Compare(fa[i], fb[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(fa), len(fb))
}

// SortCells returns the cells in table order (CompareKeys).
func SortCells(cells []Cell) []Cell {
	out := slices.Clone(cells)
	slices.SortStableFunc(out, func(a, b Cell) int { return CompareKeys(a.CellKey, b.CellKey) })
	return out
}

// mean is the arithmetic mean of xs without its NaNs; NaN when none is left.
func mean(xs []float64) float64 {
	var sum float64
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
