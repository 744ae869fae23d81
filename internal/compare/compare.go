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
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
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

// workText is what a matrix entry does per cell, its parameters as a
// reader sees them (catalog.ParamsShown): "loops 1e7", "duration 1s",
// "size 16MiB, ratio 3, zstd level 3, sink file".
func workText(m spec.MatrixEntry) string {
	if parts := catalog.ParamsShown(m.Params); len(parts) > 0 {
		return strings.Join(parts, ", ")
	}
	return "default"
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
		if who := render.OtherWork(w); who != "" && len(w.Others) > 0 {
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
