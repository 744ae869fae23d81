package analysis

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/qoslab/qoslab/internal/hostview"
)

// The interference rule's settings, fixed before any data: a VM cell run
// is interfered when its vCPU threads got clearly less host CPU than the
// run's norm at its thread count AND other work on the host took CPU
// during it. Both, because either alone says nothing of other work: the
// run's own contention spinners take the vCPUs' CPU in every cell run alike
// (which is why the norm is the run's own), and other work that took an
// idle CPU took nothing from the VM.
const (
	// InterferenceMinDeficit is the least shortfall, in host CPUs, below
	// the norm that counts: 0.15 of a host CPU, well above what the vCPU
	// threads' own run time varies by beside the run's spinners (a few
	// hundredths) and well below what one busy process takes (0.5 or 1).
	InterferenceMinDeficit = 0.15
	// InterferenceSpreads is how many robust spreads of the norm's own
	// cell runs (1.4826 times their median absolute deviation, which
	// estimates a standard deviation however many runs stray) the
	// shortfall must also exceed, where that is more than the minimum: a
	// thread count whose runs vary widely by themselves counts only a run
	// far below them.
	InterferenceSpreads = 3.0
	// InterferenceOtherFloor is the least CPU, in host CPUs, the host's
	// other work must have taken during the cell run: a tenth of a CPU,
	// above what an idle desktop's daemons take (a few hundredths), below
	// what a process that takes a vCPU's place takes.
	InterferenceOtherFloor = 0.10
)

// InterferenceRule is the rule's settings (the constants above, by
// default).
type InterferenceRule struct {
	MinDeficit float64 `json:"min_deficit"`
	Spreads    float64 `json:"spreads"`
	OtherFloor float64 `json:"other_floor"`
}

// DefaultInterferenceRule is the rule with the constants above.
func DefaultInterferenceRule() InterferenceRule {
	return InterferenceRule{MinDeficit: InterferenceMinDeficit, Spreads: InterferenceSpreads, OtherFloor: InterferenceOtherFloor}
}

// InterferenceNorm is the host CPU a run's VM cell runs got at one thread
// count: the median over its cell runs of both classes (blind to class,
// so that leaving runs out cannot favour one), and the margin below it
// that counts as clearly less.
type InterferenceNorm struct {
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Phase    string `json:"phase,omitempty"`
	Threads  int    `json:"threads"`
	// Share is the median of the cell runs' vCPU shares, in host CPUs.
	Share Float `json:"share"`
	// Spread is 1.4826 times their median absolute deviation.
	Spread Float `json:"spread"`
	// Margin is how far below Share a cell run must fall to count:
	// max(MinDeficit, Spreads·Spread). A norm with only a Share set (as an
	// online check has it before it has runs to spread: Interfered) gets
	// MinDeficit.
	Margin Float `json:"margin"`
	// Runs is how many cell runs it is over.
	Runs int `json:"runs"`
}

// NormOf is the norm of the vCPU shares of a thread count's cell runs
// (NaN ones left out); its Share is NaN without any.
func (r InterferenceRule) NormOf(shares []float64) InterferenceNorm {
	v := sortedFinite(shares)
	n := InterferenceNorm{Share: Float(math.NaN()), Spread: Float(math.NaN()), Margin: Float(r.MinDeficit), Runs: len(v)}
	if len(v) == 0 {
		return n
	}
	m := median(v)
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - m)
	}
	sort.Float64s(dev)
	n.Share, n.Spread = Float(m), Float(1.4826*median(dev))
	n.Margin = Float(math.Max(r.MinDeficit, r.Spreads*float64(n.Spread)))
	return n
}

// Interfered is the rule for one cell run beside a norm given as a share
// alone (host CPUs), with the minimum margin, MinDeficit: what a check
// online has before the run's cell runs have a spread (InterferedBeside).
func (r InterferenceRule) Interfered(vcpuShare, otherCPU, norm float64) bool {
	return r.InterferedBeside(vcpuShare, otherCPU, InterferenceNorm{Share: Float(norm)})
}

// InterferedBeside is the rule for one cell run: its vCPUs got host CPU
// vcpuShare while other work took otherCPU, beside the norm. False when
// either is not a number (not recorded): nothing unrecorded is called
// interfered.
func (r InterferenceRule) InterferedBeside(vcpuShare, otherCPU float64, norm InterferenceNorm) bool {
	margin := math.Max(r.MinDeficit, float64(norm.Margin))
	if math.IsNaN(vcpuShare) || math.IsNaN(otherCPU) || norm.Share.IsNaN() {
		return false
	}
	return float64(norm.Share)-vcpuShare > margin && otherCPU >= r.OtherFloor
}

// InterferenceKind is what the rule found in a run.
type InterferenceKind string

const (
	// InterferenceNotRecorded means no VM cell run carries a host view with
	// vCPU threads (a run before schema 1.3, or a backend without them).
	InterferenceNotRecorded InterferenceKind = "not recorded"
	// InterferenceNone means the host view was recorded and no cell run was
	// interfered.
	InterferenceNone InterferenceKind = "none"
	// InterferenceSome means some cell runs were interfered, and the rest can be judged
	// without them.
	InterferenceSome InterferenceKind = "some"
	// InterferenceAll means every cell run judged was interfered, so nothing is left to
	// judge without them. (Against the runs' own median norm this cannot
	// happen; a norm from elsewhere could make it.)
	InterferenceAll InterferenceKind = "all"
)

// InterferedRun is one interfered cell run.
type InterferedRun struct {
	CellKey
	Repeat int `json:"repeat"`
	// VCPUShare is the host CPU its vCPUs got, Norm the run's norm at its
	// thread count, Deficit how much less it got (Norm - VCPUShare).
	VCPUShare Float `json:"vcpu_share"`
	Norm      Float `json:"norm"`
	Deficit   Float `json:"deficit"`
	// OtherCPU is the CPU the host's other work took during it.
	OtherCPU Float `json:"other_cpu"`
	// Others are the largest other processes during it.
	Others []hostview.Process `json:"others,omitempty"`
}

// InterferenceReport is the rule applied to a run's VM cell runs.
type InterferenceReport struct {
	Kind  InterferenceKind   `json:"kind"`
	Rule  InterferenceRule   `json:"rule"`
	Norms []InterferenceNorm `json:"norms,omitempty"`
	// Runs are the interfered cell runs, in table order then repeat.
	Runs []InterferedRun `json:"runs,omitempty"`
	// Judged is how many cell runs the rule could judge (a vCPU share
	// recorded).
	Judged int `json:"judged"`
	// OtherCPU is the median of the interfered runs' other work's CPU;
	// Others their largest other processes over all of them (CPU time
	// summed per process), most first, at most three.
	OtherCPU Float              `json:"other_cpu"`
	Others   []hostview.Process `json:"others,omitempty"`
}

// Interfered applies the default rule to cells (see InterferenceRule.Report).
func Interfered(cells []Cell) InterferenceReport { return DefaultInterferenceRule().Report(cells) }

// Report applies the rule to every cell run of cells whose host view has a
// vCPU share (the VM's), each beside the norm of its target, workload,
// phase and thread count.
func (r InterferenceRule) Report(cells []Cell) InterferenceReport {
	rep := InterferenceReport{Kind: InterferenceNotRecorded, Rule: r, OtherCPU: Float(math.NaN())}
	type normKey struct {
		target, workload, phase string
		threads                 int
	}
	shares := map[normKey][]float64{}
	var keys []normKey
	sorted := SortCells(cells)
	for _, c := range sorted {
		k := normKey{c.Target, c.Workload, c.Phase, c.Threads}
		for _, s := range c.VCPUShares {
			if s.IsNaN() {
				continue
			}
			if _, ok := shares[k]; !ok {
				keys = append(keys, k)
			}
			shares[k] = append(shares[k], float64(s))
		}
	}
	if len(keys) == 0 {
		return rep
	}
	norms := map[normKey]InterferenceNorm{}
	for _, k := range keys {
		n := r.NormOf(shares[k])
		n.Target, n.Workload, n.Phase, n.Threads = k.target, k.workload, k.phase, k.threads
		norms[k] = n
		rep.Norms = append(rep.Norms, n)
		rep.Judged += n.Runs
	}
	rep.Kind = InterferenceNone
	var others []float64
	procs := map[int]*hostview.Process{}
	for _, c := range sorted {
		n, ok := norms[normKey{c.Target, c.Workload, c.Phase, c.Threads}]
		if !ok {
			continue
		}
		for i, s := range c.VCPUShares {
			o := at(c.OtherCPU, i)
			if !r.InterferedBeside(float64(s), o, n) {
				continue
			}
			run := InterferedRun{CellKey: c.CellKey, Repeat: c.Repeats[i], VCPUShare: s, Norm: n.Share, Deficit: n.Share - s, OtherCPU: Float(o)}
			if i < len(c.HostViews) && c.HostViews[i] != nil {
				run.Others = c.HostViews[i].Others
				for _, p := range run.Others {
					if procs[p.PID] == nil {
						procs[p.PID] = &hostview.Process{PID: p.PID, Name: p.Name}
					}
					procs[p.PID].CPUNs += p.CPUNs
				}
			}
			rep.Runs = append(rep.Runs, run)
			others = append(others, o)
		}
	}
	switch {
	case len(rep.Runs) == rep.Judged:
		rep.Kind = InterferenceAll
	case len(rep.Runs) > 0:
		rep.Kind = InterferenceSome
	}
	if len(others) > 0 {
		rep.OtherCPU = Float(median(sortedFinite(others)))
	}
	rep.Others = mostCPU(procs, 3)
	return rep
}

// mostCPU are the n processes of procs (CPU time summed per pid) that
// took the most, most first (by pid where they took alike).
func mostCPU(procs map[int]*hostview.Process, n int) []hostview.Process {
	var out []hostview.Process
	for _, p := range procs {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b hostview.Process) int {
		return cmp.Or(cmp.Compare(b.CPUNs, a.CPUNs), cmp.Compare(a.PID, b.PID))
	})
	return out[:min(n, len(out))]
}

// at is v[i] as a float64, NaN past its end.
func at(v []Float, i int) float64 {
	if i < len(v) {
		return float64(v[i])
	}
	return math.NaN()
}

// WithoutRepeats is cells with the given cell runs left out, each cell
// summarized again over the repeats left (as Cells would have it had they
// never run); cells none of whose runs are listed are as they were. A cell
// left with no repeat stays, with none (n 0), so that what is missing is
// seen missing.
func WithoutRepeats(cells []Cell, runs []InterferedRun) []Cell {
	drop := map[CellKey]map[int]bool{}
	for _, r := range runs {
		if drop[r.CellKey] == nil {
			drop[r.CellKey] = map[int]bool{}
		}
		drop[r.CellKey][r.Repeat] = true
	}
	out := make([]Cell, len(cells))
	for i, c := range cells {
		d := drop[c.CellKey]
		if len(d) == 0 {
			out[i] = c
			continue
		}
		var keep []int
		for j, r := range c.Repeats {
			if !d[r] {
				keep = append(keep, j)
			}
		}
		out[i] = c.only(keep)
	}
	return out
}

// only is the cell summarized again over the repeats at positions keep of
// its per-repeat slices.
func (c Cell) only(keep []int) Cell {
	pick := func(v []float64) []float64 {
		out := []float64{}
		for _, j := range keep {
			out = append(out, atF(v, j))
		}
		return out
	}
	pickF := func(v []Float) []Float {
		out := []Float{}
		for _, j := range keep {
			out = append(out, Float(at(v, j)))
		}
		return out
	}
	unF := func(v []Float) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	n := c
	n.Repeats = nil
	for _, j := range keep {
		n.Repeats = append(n.Repeats, c.Repeats[j])
	}
	threadRates := c.threadRates
	if threadRates == nil { // a cell not from Cells: its threads' rates are not known
		threadRates = make([]float64, len(c.TotalRates))
		for i := range threadRates {
			threadRates[i] = math.NaN()
		}
	}
	n.summarize(pick(c.TotalRates), pick(c.RepeatSeconds), unF(pickF(c.CPUShares)), unF(pickF(c.Speeds)), pick(threadRates))
	if c.CPUShares == nil {
		n.CPUShares, n.Speeds = nil, nil
	}
	if c.VCPUShares != nil {
		n.VCPUShares, n.VCPUWaits, n.OtherCPU = pickF(c.VCPUShares), pickF(c.VCPUWaits), pickF(c.OtherCPU)
	}
	if c.HostViews != nil {
		n.HostViews = []*hostview.Use{}
		for _, j := range keep {
			if j < len(c.HostViews) {
				n.HostViews = append(n.HostViews, c.HostViews[j])
			}
		}
	}
	return n
}

// atF is v[i], NaN past its end.
func atF(v []float64, i int) float64 {
	if i < len(v) {
		return v[i]
	}
	return math.NaN()
}

// NormGot is what an interference report's runs got at one norm: the
// median of the vCPU shares of its interfered cell runs.
type NormGot struct {
	Norm InterferenceNorm
	Got  float64
}

// Got are, for each norm with interfered cell runs, in the report's order,
// the median host CPU their vCPUs got.
func (rep InterferenceReport) Got() []NormGot {
	var out []NormGot
	for _, n := range rep.Norms {
		var shares []float64
		for _, r := range rep.Runs {
			if r.Target == n.Target && r.Workload == n.Workload && r.Phase == n.Phase && r.Threads == n.Threads {
				shares = append(shares, float64(r.VCPUShare))
			}
		}
		if len(shares) > 0 {
			out = append(out, NormGot{Norm: n, Got: median(sortedFinite(shares))})
		}
	}
	return out
}

// InterferedAmong is the rule applied to the cells of a workload (and
// phase): what a warning says of the cells no verdict judges.
func InterferedAmong(cells []Cell, workload, phase string) InterferenceReport {
	var of []Cell
	for _, c := range cells {
		if c.Workload == workload && c.Phase == phase {
			of = append(of, c)
		}
	}
	return Interfered(of)
}
