// Package compare sets two or more results directories side by side,
// benchstat style: one column per run, the first the baseline; per cell the
// median total rate with its confidence interval, and each later run's
// change against the baseline with "~" where a rank test finds none; the
// findings (subsumption index, QoS sensitivity) the same way; and a
// geometric-mean row per target closing each workload.
package compare

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
)

// Input is one run to compare: its loaded results directory, and the label
// its column gets ("" for the default, DefaultLabel).
type Input struct {
	Label  string
	Loaded *results.Loaded
}

// Column is one compared run.
type Column struct {
	Label string `json:"label"`
	Dir   string `json:"dir"`
	// Host and OS are the host target's host name and OS version as its
	// agent reported them ("" when run.json has none).
	Host string `json:"host"`
	OS   string `json:"os"`
	// Machine is the host's OS/arch and CPU model.
	Machine string `json:"machine"`
	// CPU is the host's CPU model alone (the chip, on a Mac), and VM the
	// VM's backend, acceleration and device model as run ("none" without
	// one): the per-machine table's (Machines) columns.
	CPU string `json:"-"`
	VM  string `json:"-"`
	// Started is when the run started (UTC, to the minute).
	Started string `json:"started"`
	// State is "complete", or what a partial run got through.
	State string `json:"state"`
	// Shape is what shapes the run's numbers, key by key (shapeKeys order).
	Shape map[string]string `json:"shape"`
	// Quick marks a --quick run (loops and sizes shrunk: a smoke run);
	// Partial one that did not finish every cell. Both are shown beside
	// the label wherever the column appears (Heading).
	Quick   bool `json:"quick"`
	Partial bool `json:"partial"`
	// OtherWork is what the host's other work took during the run's cell
	// runs (results schema 1.3); nil where it was not recorded.
	OtherWork *analysis.OtherWork `json:"other_work,omitempty"`
}

// Heading is the column's label as tables and charts show it: with
// "(quick)" and "(partial)" when the run is either, so that a smoke run
// or an unfinished one is never read as a full one.
func (c Column) Heading() string {
	var marks []string
	if c.Quick {
		marks = append(marks, "quick")
	}
	if c.Partial {
		marks = append(marks, "partial")
	}
	if len(marks) == 0 {
		return c.Label
	}
	return c.Label + " (" + strings.Join(marks, ", ") + ")"
}

// Difference is one thing that shapes the numbers and is not the same in
// every run: its value per column.
type Difference struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// Value is one run's cell: its median total rate with the median's
// interval, and, after the baseline, the change against the baseline.
type Value struct {
	Present bool `json:"present"`
	// N is how many repeats the median and interval rest on; Idle how
	// many more did no work (a total rate of 0), left out of them.
	N      int            `json:"n,omitempty"`
	Idle   int            `json:"idle,omitempty"`
	Median analysis.Float `json:"median"`
	Low    analysis.Float `json:"ci_low"`
	High   analysis.Float `json:"ci_high"`
	// Delta compares the cell with the baseline's (nil for the baseline
	// itself, or when either run lacks the cell).
	Delta *Delta `json:"delta,omitempty"`
}

// Delta is a run's change against the baseline.
type Delta struct {
	// Ratio is this run's value over the baseline's.
	Ratio analysis.Float `json:"ratio"`
	// P is the two-sided Mann-Whitney p of the two runs' repeats; NaN for
	// a geometric mean (no test).
	P analysis.Float `json:"p"`
	// Significant says whether the change is one: p below Alpha for a
	// cell; for a finding, whether the two intervals do not overlap.
	Significant bool `json:"significant"`
	// Interference, for a cell, says that some of the cell runs behind
	// the change (in either run) were interfered with by other work on
	// the host (analysis.Interfered), and what the change is without
	// them; nil when none was, or the runs carry no host view.
	Interference *DeltaInterference `json:"interference,omitempty"`
}

// DeltaInterference is the interfered cell runs behind a cell's change.
type DeltaInterference struct {
	// Runs is how many of the Of cell runs of the two cells were
	// interfered; OtherCPU the median CPU other work took during them.
	Runs     int            `json:"runs"`
	Of       int            `json:"of"`
	OtherCPU analysis.Float `json:"other_cpu"`
	// Without is the change with those cell runs left out of both cells;
	// nil when a cell has no repeat left.
	Without *Delta `json:"without,omitempty"`
}

// Counts says whether a change counts against a limit: it is significant,
// and, where interfered cell runs are behind it, still is without them
// with a ratio beyond (exceeds says which ratios are); the ratio it counts
// with is returned.
func (d *Delta) Counts(exceeds func(float64) bool) (analysis.Float, bool) {
	if d == nil || !d.Significant || !exceeds(float64(d.Ratio)) {
		return 0, false
	}
	if d.Interference == nil {
		return d.Ratio, true
	}
	w := d.Interference.Without
	if w == nil || !w.Significant || !exceeds(float64(w.Ratio)) {
		return 0, false
	}
	return w.Ratio, true
}

// Row is one cell across the runs.
type Row struct {
	analysis.CellKey
	Unit   string  `json:"unit"`
	Values []Value `json:"values"`
}

// Geomean is a workload's geometric mean of median rates on one target,
// over the cells every run has.
type Geomean struct {
	Workload string `json:"workload"`
	Target   string `json:"target"`
	Unit     string `json:"unit"`
	// Cells counts the cells the mean is over; 0 when no cell of the
	// target is in every run (then every value is missing).
	Cells  int     `json:"cells"`
	Values []Value `json:"values"`
}

// Finding kinds.
const (
	KindSubsumption = "subsumption_index"
	KindSensitivity = "qos_sensitivity"
)

// FindingValue is one run's finding: its estimate with interval, and for a
// subsumption index the verdict.
type FindingValue struct {
	Value
	Outcome string `json:"outcome,omitempty"`
}

// FindingRow is a finding across the runs: the subsumption index of a
// workload (and phase), or a target's QoS sensitivity (the rate at the
// highest class over that at the lowest).
type FindingRow struct {
	Kind     string `json:"kind"`
	Workload string `json:"workload"`
	Phase    string `json:"phase,omitempty"`
	// Params are the parameters of the workload's cells where a run
	// measured it with more than one set of them (analysis.CellKey.Params).
	Params string `json:"params,omitempty"`
	Target string `json:"target,omitempty"`
	High   int    `json:"high,omitempty"`
	Low    int    `json:"low,omitempty"`
	// Threads are the thread counts the finding is over in every run;
	// empty when the runs share none (then each run's own).
	Threads []int          `json:"threads"`
	Values  []FindingValue `json:"values"`
}

// Missing is a run that was meant to be compared and is not there (a
// fleet host that did not come back), and why.
type Missing struct {
	Label  string `json:"label"`
	Reason string `json:"reason"`
}

// Comparison is the whole N-way comparison.
type Comparison struct {
	// Machines is the answer per machine, first in every format: a row per
	// run (and judged workload), in the order given, the baseline first.
	Machines []MachineVerdict `json:"machines"`
	Columns  []Column         `json:"columns"`
	// Missing are the runs that were meant to be compared and are not
	// there: the table names them above its rows, so it does not look
	// complete.
	Missing     []Missing    `json:"missing,omitempty"`
	Differences []Difference `json:"differences"`
	Rows        []Row        `json:"rows"`
	Geomeans    []Geomean    `json:"geomeans"`
	Findings    []FindingRow `json:"findings"`
	// Alpha is the significance level of the cells' tests.
	Alpha float64 `json:"alpha"`
	// Notes are what a reader must know about the comparison itself: two
	// arguments that are the same run.
	Notes []string `json:"notes"`
	// Layout is how the text tables set the runs out (one of Layouts);
	// "" picks columns up to MaxColumns runs, rows beyond. The data (JSON,
	// CSV) is the same in every layout.
	Layout string `json:"-"`

	// keyRuns and keyed are how a text format fits its width (fit): the
	// runs named #1, #2, ... in the tables, and the per-machine table's
	// columns (by heading) whose values are keys the table lists.
	keyRuns bool
	keyed   map[string]bool
}

// Build compares the runs, the first as the baseline. Labels must be unique
// (Labels makes them so).
func Build(in []Input) (*Comparison, error) {
	if len(in) < 2 {
		return nil, fmt.Errorf("compare needs two or more results directories, got %d", len(in))
	}
	c := &Comparison{Alpha: analysis.Alpha}
	seen := map[string]string{}
	var cells [][]analysis.Cell
	var runs []results.Run
	for _, r := range in {
		l := r.Loaded
		if prev, ok := seen[r.Label]; ok {
			return nil, fmt.Errorf("label %q names both %s and %s: labels must differ (set one with --label NAME=DIR)", r.Label, prev, l.Path)
		}
		seen[r.Label] = l.Path
		col := describe(l)
		col.Label = r.Label
		runCells := l.Cells()
		col.OtherWork = analysis.OtherWorkOf(runCells)
		c.Columns = append(c.Columns, col)
		cells = append(cells, runCells)
		runs = append(runs, l.Run)
	}
	c.Differences = differences(c.Columns)
	c.Notes = append(sameRuns(in), otherWorkNote(c.Columns)...)
	c.Rows = rows(cells)
	c.Geomeans = geomeans(c.Rows, len(in))
	judged, common := judge(cells, runs)
	c.Findings = findings(judged, common)
	c.Machines = machineVerdicts(c.Columns, judged)
	return c, nil
}

// Labels returns a label per run: given[path] where set, else one short
// and unique: the host's name (its first DNS label) when no other run has
// it; the run's start time (UTC, "11-24 22:49") beside it when another run
// does, or alone when every run has the same host. A default label is never
// a target's name (host, vm): a host called "vm" gets its start time.
func Labels(runs []*results.Loaded, given map[string]string) []string {
	hosts := make([]string, len(runs))
	count := map[string]int{}
	for i, l := range runs {
		h, _ := hostInfo(l.Run)
		if h == "(none)" {
			h = ""
		}
		h, _, _ = strings.Cut(h, ".")
		hosts[i] = h
		count[h]++
	}
	allSame := count[hosts[0]] == len(runs)
	label := func(i int, layout string) string {
		h, t := hosts[i], runs[i].Run.Started.UTC().Format(layout)
		if runs[i].Run.Started.IsZero() || layout == "dir" {
			t = filepath.Base(runs[i].Path)
		}
		switch {
		case h != "" && count[h] == 1 && !isTarget(h):
			return h
		case h == "" || allSame:
			return t
		}
		return h + " " + t
	}
	out := make([]string, len(runs))
	for i := range runs {
		out[i] = label(i, "01-02 15:04")
	}
	// Runs started in the same minute: to the second, then by directory
	// name, then numbered.
	for _, layout := range []string{"01-02 15:04:05", "dir", ""} {
		seen := map[string]int{}
		for i, l := range runs {
			if _, ok := given[l.Path]; !ok {
				seen[out[i]]++
			}
		}
		dup := false
		nth := map[string]int{}
		for i, l := range runs {
			if _, ok := given[l.Path]; ok || seen[out[i]] < 2 {
				continue
			}
			dup = true
			if layout != "" {
				out[i] = label(i, layout)
				continue
			}
			nth[out[i]]++
			out[i] += " #" + strconv.Itoa(nth[out[i]])
		}
		if !dup {
			break
		}
	}
	for i, l := range runs {
		if g, ok := given[l.Path]; ok {
			out[i] = g
		}
	}
	return out
}

// isTarget reports whether name is a target's name, which a column must
// not be labelled with (its rows name targets).
func isTarget(name string) bool {
	return strings.EqualFold(name, spec.TargetHost) || strings.EqualFold(name, spec.TargetVM)
}

// sameRuns notes the arguments that are one run twice: the same directory
// (by another path, a link), or a copy of it (the same name, start time and
// seed), whose differences are nothing but zero.
func sameRuns(in []Input) []string {
	out := []string{}
	for i := range in {
		for j := i + 1; j < len(in); j++ {
			a, b := in[i].Loaded, in[j].Loaded
			why := ""
			sa, erra := os.Stat(a.Path)
			sb, errb := os.Stat(b.Path)
			switch {
			case erra == nil && errb == nil && os.SameFile(sa, sb):
				why = "the same directory"
			case !a.Run.Started.IsZero() && a.Run.Started.Equal(b.Run.Started) && a.Run.Name == b.Run.Name && a.Run.Seed == b.Run.Seed:
				why = "copies of one run (same name, start and seed)"
			default:
				continue
			}
			out = append(out, fmt.Sprintf("%s (%s) and %s (%s) are %s: every difference between them is zero by construction", in[i].Label, a.Path, in[j].Label, b.Path, why))
		}
	}
	return out
}

// hostInfo is the host target's host name and OS version from run.json.
func hostInfo(r results.Run) (host, osVersion string) {
	info := r.Targets["host"].Value()
	return info.Hostname, info.OSVersion
}

// shapeKeys are the things that shape a run's numbers, in the order the
// table lists them; per-workload keys ("fp work") follow.
var shapeKeys = []string{"spec", "quick", "contention", "accel", "vm cpus", "repeats"}

func describe(l *results.Loaded) Column {
	col := Column{Dir: l.Path, Started: started(l.Run.Started), State: "complete", Shape: map[string]string{}}
	col.Host, col.OS = hostInfo(l.Run)
	host, ok := l.Run.Targets["host"]
	info := host.Value()
	if ok {
		col.Machine = strings.TrimPrefix(strings.Join([]string{info.OS + "/" + info.Arch, info.CPUModel}, ", "), "/, ")
	}
	col.CPU = info.CPUModel
	if p := l.Partial(); p != "" {
		col.State, col.Partial = p, true
	} else if !l.Run.Complete() {
		col.State, col.Partial = "incomplete", true
	}
	spec := l.Run.Spec.Value()
	col.Shape["spec"] = l.Run.Name
	if l.Run.Spec.IsZero() {
		col.Shape["spec"] += " (run.json records no spec)"
		return col
	}
	col.Shape["quick"] = strconv.FormatBool(spec.Quick)
	col.Quick = spec.Quick
	col.Shape["repeats"] = repeatsText(spec.Repeats, l.Run.Looks)
	col.Shape["contention"] = contentionText(l.Run, spec)
	col.Shape["accel"], col.Shape["vm cpus"] = "no vm", "no vm"
	if slices.Contains(spec.Targets, "vm") {
		col.Shape["accel"] = appliedAccel(l.Run, spec)
		col.Shape["vm cpus"] = strconv.Itoa(spec.VM.CPUs)
	}
	col.VM = "none"
	if slices.Contains(spec.Targets, "vm") {
		col.VM = col.Shape["accel"]
	}
	for _, m := range spec.Matrix {
		key := m.Workload + " work"
		if prev, ok := col.Shape[key]; ok {
			if !slices.Contains(strings.Split(prev, "; "), workText(m)) {
				col.Shape[key] = prev + "; " + workText(m)
			}
		} else {
			col.Shape[key] = workText(m)
		}
	}
	return col
}

// contentionText is the host's contention as asked and as run: "all (2
// spinners)", "none".
func contentionText(r results.Run, spec spec.Spec) string {
	if c := r.Contention.Value(); c.Threads > 0 {
		return fmt.Sprintf("%v (%s)", c.Asked, units.Plural(c.Threads, "spinner"))
	}
	if s := spec.Contention.String(); s != "0" && s != "" {
		return s + " (not recorded as run)"
	}
	return "none"
}

// appliedAccel is the VM's acceleration as run (run.json's machines), else
// as the spec asked.
func appliedAccel(r results.Run, spec spec.Spec) string {
	if m, ok := r.Machines.Value()["vm"]; ok && m.Accel != "" {
		s := strings.TrimPrefix(m.Backend+" "+m.Accel, " ")
		if m.Accel == m.Backend { // vz's acceleration is vz
			s = m.Backend
		}
		if m.Model != "" {
			// Another guest layout: runs that differ in it differ in shape.
			s += ", model " + m.Model
		}
		return s
	}
	if spec.VM.Accel != "" {
		return spec.VM.Accel + " (asked)"
	}
	return "not recorded"
}

// workText is what a matrix entry does per cell: "loops 1e7", "1s",
// "16 MiB, ratio 3, zstd level 3, sink file".
func workText(m spec.MatrixEntry) string {
	var parts []string
	if m.Loops > 0 {
		parts = append(parts, "loops "+units.FormatCount(m.Loops))
	}
	if m.Duration > 0 {
		parts = append(parts, "duration "+m.Duration.String())
	}
	if m.SizeBytes > 0 {
		parts = append(parts, "size "+units.FormatBytes(m.SizeBytes))
	}
	if m.Ratio > 0 {
		parts = append(parts, "ratio "+strconv.FormatFloat(m.Ratio, 'g', -1, 64))
	}
	if m.Codec != "" {
		c := m.Codec
		if m.Level != 0 {
			c += " level " + strconv.Itoa(m.Level)
		}
		parts = append(parts, c)
	}
	if m.Sink != "" {
		parts = append(parts, "sink "+m.Sink)
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ", ")
}

// differences lists the shape keys whose values are not all the same.
func differences(cols []Column) []Difference {
	keys := slices.Clone(shapeKeys)
	var extra []string
	for _, c := range cols {
		for k := range c.Shape {
			if !slices.Contains(keys, k) && !slices.Contains(extra, k) {
				extra = append(extra, k)
			}
		}
	}
	slices.Sort(extra)
	keys = append(keys, extra...)
	var out []Difference
	for _, k := range keys {
		d := Difference{Key: k}
		same := true
		for _, c := range cols {
			v, ok := c.Shape[k]
			if !ok {
				v = "-"
			}
			d.Values = append(d.Values, v)
			same = same && v == d.Values[0]
		}
		if !same {
			out = append(out, d)
		}
	}
	return out
}

// rows is every cell any run has, in table order, with each run's value.
func rows(cells [][]analysis.Cell) []Row {
	interfered := make([]map[analysis.CellKey][]analysis.InterferedRun, len(cells))
	for i, cs := range cells {
		interfered[i] = map[analysis.CellKey][]analysis.InterferedRun{}
		for _, r := range analysis.Interfered(cs).Runs {
			interfered[i][r.CellKey] = append(interfered[i][r.CellKey], r)
		}
	}
	byKey := map[analysis.CellKey][]*analysis.Cell{}
	var keys []analysis.CellKey
	unit := map[analysis.CellKey]string{}
	for i, cs := range cells {
		for j := range cs {
			k := cs[j].CellKey
			if byKey[k] == nil {
				byKey[k] = make([]*analysis.Cell, len(cells))
				keys = append(keys, k)
				unit[k] = cs[j].Unit
			}
			byKey[k][i] = &cs[j]
		}
	}
	slices.SortFunc(keys, analysis.CompareKeys)
	out := make([]Row, 0, len(keys))
	for _, k := range keys {
		r := Row{CellKey: k, Unit: unit[k]}
		base := byKey[k][0]
		for i, c := range byKey[k] {
			if c == nil || c.TotalRate.N == 0 && c.Idle() == 0 {
				r.Values = append(r.Values, Value{Median: nan(), Low: nan(), High: nan()})
				continue
			}
			v := Value{Present: true, N: c.TotalRate.N, Idle: c.Idle(), Median: c.TotalRate.Median, Low: c.TotalRate.CILow, High: c.TotalRate.CIHigh}
			if c != base && base != nil && base.TotalRate.N > 0 && c.TotalRate.N > 0 {
				ch := analysis.Compare(*base, *c)
				v.Delta = &Delta{Ratio: ch.Ratio, P: ch.Test.P, Significant: ch.Test.Significant(analysis.Alpha) && base.TotalRate.Median != 0 && !ch.Ratio.IsNaN()}
				v.Delta.Interference = deltaInterference(*base, *c, interfered[0][k], interfered[i][k])
			}
			r.Values = append(r.Values, v)
		}
		out = append(out, r)
	}
	return out
}

// deltaInterference is what the interfered cell runs of the baseline's
// cell (baseRuns) and the other run's (runs) do to their change: nil when
// there are none.
func deltaInterference(base, c analysis.Cell, baseRuns, runs []analysis.InterferedRun) *DeltaInterference {
	if len(baseRuns)+len(runs) == 0 {
		return nil
	}
	var other []float64
	for _, r := range append(slices.Clone(baseRuns), runs...) {
		other = append(other, float64(r.OtherCPU))
	}
	slices.Sort(other)
	d := &DeltaInterference{Runs: len(other), Of: len(base.Repeats) + len(c.Repeats), OtherCPU: analysis.OrderStatsOf(other).Median}
	b := analysis.WithoutRepeats([]analysis.Cell{base}, baseRuns)[0]
	n := analysis.WithoutRepeats([]analysis.Cell{c}, runs)[0]
	if b.TotalRate.N > 0 && n.TotalRate.N > 0 {
		ch := analysis.Compare(b, n)
		d.Without = &Delta{Ratio: ch.Ratio, P: ch.Test.P, Significant: ch.Test.Significant(analysis.Alpha) && b.TotalRate.Median != 0 && !ch.Ratio.IsNaN()}
	}
	return d
}

func nan() analysis.Float { return analysis.Float(math.NaN()) }

// geomeans is, per workload and target in row order, the geometric mean of
// the median rates of the cells every run has (with a positive median): the
// same cells in every column, so the means compare.
func geomeans(rows []Row, n int) []Geomean {
	type key struct{ workload, target string }
	var order []key
	sums := map[key][]float64{}
	counts := map[key]int{}
	unit := map[key]string{}
	for _, r := range rows {
		k := key{r.Workload, r.Target}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
			sums[k] = make([]float64, n)
			unit[k] = r.Unit
		}
		all := true
		for _, v := range r.Values {
			all = all && v.Present && v.Median > 0
		}
		if !all {
			continue
		}
		counts[k]++
		for i, v := range r.Values {
			sums[k][i] += math.Log(float64(v.Median))
		}
	}
	var out []Geomean
	for _, k := range order {
		g := Geomean{Workload: k.workload, Target: k.target, Unit: unit[k], Cells: counts[k]}
		for i := range n {
			if g.Cells == 0 {
				g.Values = append(g.Values, Value{Median: nan(), Low: nan(), High: nan()})
				continue
			}
			m := math.Exp(sums[k][i] / float64(g.Cells))
			v := Value{Present: true, Median: analysis.Float(m), Low: nan(), High: nan()}
			if i > 0 {
				v.Delta = &Delta{Ratio: analysis.Float(m / math.Exp(sums[k][0]/float64(g.Cells))), P: nan()}
			}
			g.Values = append(g.Values, v)
		}
		out = append(out, g)
	}
	return out
}

// runFindings is what one run is judged on and what it says: its cells at
// the thread counts every run that has the workload can use (threads, per
// workload and phase; a run's own where the runs share none), and the
// verdicts (as the run's own summary decides them: summary.RunVerdicts)
// and QoS sensitivities over them.
type runFindings struct {
	cells         []analysis.Cell
	threads       map[summary.WorkloadPhase][]int
	run           results.Run
	verdicts      []analysis.Verdict
	sensitivities []analysis.Sensitivity
}

// judge restricts each run's cells to the thread counts at which every run
// that has the workload ran all of its targets and classes, so that the
// runs are judged on the same cells (a run's own report may use more;
// where the runs share no thread count, each run's own are used), and
// judges them as the run's own summary does (summary.RunVerdicts: the
// margins and looks its spec set, with its caveats).
func judge(cells [][]analysis.Cell, runs []results.Run) ([]runFindings, map[summary.WorkloadPhase][]int) {
	common := commonThreads(cells)
	out := make([]runFindings, len(cells))
	for i, cs := range cells {
		kept := slices.DeleteFunc(slices.Clone(cs), func(c analysis.Cell) bool {
			ts := common[summary.WorkloadPhase{Workload: c.Workload, Phase: c.Phase, Params: c.Params}]
			return len(ts) > 0 && !slices.Contains(ts, c.Threads)
		})
		r := runFindings{cells: kept, threads: map[summary.WorkloadPhase][]int{}, run: runs[i]}
		for k, ts := range usableThreads(kept) {
			r.threads[k] = slices.Sorted(slices.Values(ts))
		}
		r.verdicts = summary.RunVerdicts(kept, runs[i])
		r.sensitivities = sensitivities(kept)
		out[i] = r
	}
	return out, common
}

// findings are the subsumption indexes of the workloads any run can judge,
// and each target's QoS sensitivity per workload (and phase) run at two or
// more classes, in workload order, from the runs judged alike (judge); a
// run without the finding has it missing. common is the thread counts
// they were judged at, per workload (and phase).
func findings(runs []runFindings, common map[summary.WorkloadPhase][]int) []FindingRow {
	t := findingTable{n: len(runs), vals: map[findingKey][]FindingValue{}}
	for i, r := range runs {
		for _, v := range r.verdicts {
			if v.SI.IsNaN() {
				continue
			}
			t.put(findingKey{kind: KindSubsumption, workload: v.Host.Workload, phase: v.Host.Phase, params: v.Host.Params},
				i, FindingValue{Value: Value{Present: true, Median: v.SI, Low: v.SILow, High: v.SIHigh}, Outcome: string(v.Outcome)})
		}
		for _, s := range r.sensitivities {
			if s.Shift.Estimate.IsNaN() {
				continue
			}
			t.put(findingKey{kind: KindSensitivity, workload: s.Workload, phase: s.Phase, params: s.Params, target: s.Target, high: s.High, low: s.Low},
				i, FindingValue{Value: Value{Present: true, N: s.Shift.Pairs,
					Median: analysis.Float(s.RatioEstimate()),
					Low:    analysis.Float(math.Exp(float64(s.Shift.Low))), High: analysis.Float(math.Exp(float64(s.Shift.High)))}})
		}
	}
	slices.SortStableFunc(t.order, compareFindingKeys)
	out := make([]FindingRow, 0, len(t.order))
	for _, k := range t.order {
		r := FindingRow{Kind: k.kind, Workload: k.workload, Phase: k.phase, Params: k.params, Target: k.target, High: k.high, Low: k.low, Values: t.vals[k]}
		r.Threads = slices.Sorted(slices.Values(common[summary.WorkloadPhase{Workload: k.workload, Phase: k.phase, Params: k.params}]))
		addFindingDeltas(r.Values, k.kind)
		out = append(out, r)
	}
	return out
}

// commonThreads is, per workload (and phase), the thread counts that
// every run that ran it can use: those at which it has every (target,
// class) of the workload.
func commonThreads(cells [][]analysis.Cell) map[summary.WorkloadPhase][]int {
	common := map[summary.WorkloadPhase][]int{}
	for _, cs := range cells {
		for k, ts := range usableThreads(cs) {
			if prev, ok := common[k]; ok {
				common[k] = slices.DeleteFunc(prev, func(t int) bool { return !slices.Contains(ts, t) })
			} else {
				common[k] = ts
			}
		}
	}
	return common
}

// usableThreads is, per workload (and phase) of one run, the thread counts
// at which it has every (target, class) of the workload it ran at all.
func usableThreads(cs []analysis.Cell) map[summary.WorkloadPhase][]int {
	type series struct {
		target string
		qos    int
	}
	has := map[summary.WorkloadPhase]map[series]map[int]bool{}
	for _, c := range cs {
		k := summary.WorkloadPhase{Workload: c.Workload, Phase: c.Phase, Params: c.Params}
		if has[k] == nil {
			has[k] = map[series]map[int]bool{}
		}
		sk := series{c.Target, c.QoS}
		if has[k][sk] == nil {
			has[k][sk] = map[int]bool{}
		}
		has[k][sk][c.Threads] = true
	}
	mine := map[summary.WorkloadPhase][]int{}
	for k, bySeries := range has {
		mine[k] = []int{}
		for _, threads := range bySeries {
			for t := range threads {
				all := true
				for _, other := range bySeries {
					all = all && other[t]
				}
				if all && !slices.Contains(mine[k], t) {
					mine[k] = append(mine[k], t)
				}
			}
		}
	}
	return mine
}

// findingKey names a finding row: the subsumption index of a workload (and
// phase), or a target's QoS sensitivity there, high class over low.
type findingKey struct {
	kind, workload, phase, params, target string
	high, low                             int
}

// findingTable collects the findings' values, one per run, and the rows in
// the order they were first found.
type findingTable struct {
	n     int // runs
	order []findingKey
	vals  map[findingKey][]FindingValue
}

// put sets run i's value of row k; the other runs' stay missing until put.
func (t *findingTable) put(k findingKey, i int, v FindingValue) {
	if t.vals[k] == nil {
		t.vals[k] = make([]FindingValue, t.n)
		for j := range t.vals[k] {
			t.vals[k][j] = FindingValue{Value: Value{Median: nan(), Low: nan(), High: nan()}}
		}
		t.order = append(t.order, k)
	}
	t.vals[k][i] = v
}

// compareFindingKeys orders finding rows by workload, then phase, then the
// index first and each target's ratio after it, host first.
func compareFindingKeys(a, b findingKey) int {
	if c := strings.Compare(a.workload, b.workload); c != 0 {
		return c
	}
	if c := strings.Compare(a.phase, b.phase); c != 0 {
		return c
	}
	if c := analysis.CompareParams(a.params, b.params); c != 0 {
		return c
	}
	if a.kind != b.kind { // the index first, then each target's ratio
		if a.kind == KindSubsumption {
			return -1
		}
		return 1
	}
	return analysis.TargetRank(a.target) - analysis.TargetRank(b.target)
}

// addFindingDeltas sets each later run's change against the baseline's
// (the first) value where both have one: a difference for an index, a
// ratio for a sensitivity, significant when their intervals are disjoint.
func addFindingDeltas(vals []FindingValue, kind string) {
	base := vals[0]
	for i := 1; i < len(vals); i++ {
		v := &vals[i]
		if !v.Present || !base.Present {
			continue
		}
		d := &Delta{P: nan(), Significant: disjoint(base.Value, v.Value)}
		if kind == KindSubsumption {
			d.Ratio = v.Median - base.Median // an index: the difference
		} else {
			d.Ratio = v.Median / base.Median
		}
		v.Delta = d
	}
}

// disjoint reports whether two intervals do not overlap: a conservative
// test of a difference (two 95% intervals that miss each other differ at
// well under 5%).
func disjoint(a, b Value) bool {
	if a.Low.IsNaN() || a.High.IsNaN() || b.Low.IsNaN() || b.High.IsNaN() {
		return false
	}
	return a.High < b.Low || b.High < a.Low
}

// sensitivities is each target's QoS sensitivity per workload (and phase)
// run at two or more classes there: the highest class against the lowest,
// at every thread count with both.
func sensitivities(cells []analysis.Cell) []analysis.Sensitivity {
	// Judged without the VM's interfered cell runs, as the verdict is
	// (the rule is blind to class, so leaving them out favours neither).
	cells = analysis.WithoutRepeats(cells, analysis.Interfered(cells).Runs)
	type key struct{ target, workload, phase, params string }
	var order []key
	classes := map[key][]int{}
	for _, c := range cells {
		k := key{c.Target, c.Workload, c.Phase, c.Params}
		if _, ok := classes[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(classes[k], c.QoS) {
			classes[k] = append(classes[k], c.QoS)
		}
	}
	var out []analysis.Sensitivity
	for _, k := range order {
		qs := classes[k]
		if len(qs) < 2 {
			continue
		}
		s := analysis.QoSSensitivity(analysis.ParamsCells(cells, k.params), k.target, k.workload, k.phase, slices.Max(qs), slices.Min(qs), nil)
		s.Params = k.params
		out = append(out, s)
	}
	return out
}

// started is a run's start time for the legend; zero-safe.
func started(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04Z")
}

// Shared reports whether two or more runs have some cell in common: without
// one there is nothing to compare.
func (c *Comparison) Shared() bool {
	for _, r := range c.Rows {
		n := 0
		for _, v := range r.Values {
			if v.Present {
				n++
			}
		}
		if n >= 2 {
			return true
		}
	}
	return false
}

// repeatsText is a run's repeats per cell: its spec's, and the most its
// looks took any cell to, when they added some ("6, up to 12 after 2
// looks"), so runs that stopped at different looks differ in shape.
func repeatsText(repeats int, looks []results.Look) string {
	most := repeats
	for _, lk := range looks {
		for _, b := range lk.Blocks {
			most = max(most, b.To)
		}
	}
	if most == repeats {
		return strconv.Itoa(repeats)
	}
	return fmt.Sprintf("%d, up to %d after %d looks", repeats, most, looks[len(looks)-1].Index)
}

// otherWorkNote says when the host's other work differs between the runs
// (the median cell run of one took a tenth of a CPU more than another's):
// a change beside it may be the other work's, not the machine's. None
// when the runs recorded no host view or took alike.
func otherWorkNote(cols []Column) []string {
	lo, hi := math.Inf(1), math.Inf(-1)
	var each []string
	for _, col := range cols {
		w := col.OtherWork
		if w == nil {
			continue
		}
		lo, hi = math.Min(lo, float64(w.Median)), math.Max(hi, float64(w.Median))
		t := col.Label + " " + strconv.FormatFloat(float64(w.Median), 'g', 2, 64) + " CPU"
		if who := w.Text(); who != "" && len(w.Others) > 0 {
			t += " (" + w.Others[0].Name + ", pid " + strconv.Itoa(w.Others[0].PID) + ")"
		}
		each = append(each, t)
	}
	if len(each) < 2 || hi-lo < analysis.InterferenceOtherFloor {
		return nil
	}
	return []string{"other work on the host differs between the runs (CPU it took in the median cell run): " + strings.Join(each, ", ") +
		": a change beside it may be the other work's, not the machine's"}
}
