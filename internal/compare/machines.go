package compare

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/spec"
)

// Ratio is one side's QoS effect in a machine's verdict: the rate at the
// high class over that at the low one (exp of the Hodges-Lehmann shift),
// with its interval, the coverage asked of it (Level: the verdict's 90%,
// or a sensitivity's 95%) and the coverage it reaches (at least; below
// Level when the repeats are too few). Its JSON names the estimator, as
// summary.json's do (ratio_hl, ratio_hl_low, ratio_hl_high).
type Ratio struct {
	Value      analysis.Float `json:"ratio_hl"`
	Low        analysis.Float `json:"ratio_hl_low"`
	High       analysis.Float `json:"ratio_hl_high"`
	Level      analysis.Float `json:"level"`
	Confidence analysis.Float `json:"confidence"`
}

// MachineVerdict is one run's answer for one workload (and phase): the
// machine it ran on and whether QoS is subsumed in its VM, with the
// numbers that say how strongly. The per-machine table, the first thing
// every format shows, is one of these per run and judged workload, in the
// order the runs were given (the baseline first).
//
// A new per-machine quantity (the mechanism: each target's CPU share and
// speed per class, once the records carry CPU time) is a field here, set
// in machineVerdict, and one entry in verdictFields, which every format
// (text, Markdown, HTML, CSV) draws its columns from; the JSON carries the
// field as it is.
type MachineVerdict struct {
	// Run is the run's position among the columns (0, the baseline).
	Run   int    `json:"run"`
	Label string `json:"label"`
	// CPU, OS and VM say what machine answered: the host's CPU model (the
	// chip on a Mac) and OS version as its agent reported them, and the
	// VM's backend, acceleration and device model as run ("none").
	CPU string `json:"cpu"`
	OS  string `json:"os"`
	VM  string `json:"vm"`
	// Workload and Phase name what was judged; empty when the runs judge
	// nothing and no class was run twice (then the row is the machine).
	Workload string `json:"workload,omitempty"`
	Phase    string `json:"phase,omitempty"`
	// Params are the parameters judged where a run measured the workload
	// with more than one set of them (analysis.CellKey.Params).
	Params string `json:"params,omitempty"`
	// High and Low are the classes compared; Threads the thread counts
	// the verdict is over (those every run has: see FindingRow.Threads).
	High    int   `json:"high,omitempty"`
	Low     int   `json:"low,omitempty"`
	Threads []int `json:"threads"`
	// Outcome is the verdict (yes, no, inconclusive); empty when the run
	// has none to give (no VM, or the workload not at two classes on both
	// targets), which Reason then says.
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	// Caveats are what the reader must weigh beside the verdict, the
	// run's own (summary.RunVerdicts: a run whose cells ran in sequence
	// confounds time with class), said below the table as under the run's
	// own verdict.
	Caveats []string `json:"caveats,omitempty"`
	// Mechanism is what happened to the threads on each target (their CPU
	// share and speed per class), as under the run's own verdict.
	Mechanism []analysis.Mechanism `json:"mechanism,omitempty"`
	// SI is the subsumption index with its interval over both sides' 95%
	// intervals (NaN unless the host shows an effect).
	SI     analysis.Float `json:"si"`
	SILow  analysis.Float `json:"si_low"`
	SIHigh analysis.Float `json:"si_high"`
	// HostRatio and VMRatio are the two sides' ratios, High over Low: the verdict's,
	// with the 90% intervals it judges; where the run has no verdict, each
	// target's QoS sensitivity with its 95% interval (Confidence says
	// which). NaN where the target did not run both classes.
	HostRatio Ratio `json:"host_ratio"`
	VMRatio   Ratio `json:"vm_ratio"`
	// VMByThreads are the VM's ratios at each thread count the verdict
	// judged alone, with the intervals it judged (a yes needs every one
	// inside the band, not only VMRatio's): analysis.Verdict.VMByThreads.
	// Empty where the verdict judged no thread count alone.
	VMByThreads []ThreadRatio `json:"vm_by_threads,omitempty"`
	// Band is the equivalence band's upper edge M ([1/M, M] is "yes"; NaN
	// without a host effect), and BandNo the edge beyond which it is "no".
	Band   analysis.Float `json:"band"`
	BandNo analysis.Float `json:"band_no"`
}

// ThreadRatio is one thread count's ratio.
type ThreadRatio struct {
	Threads int `json:"threads"`
	Ratio
}

// Inside says the ratio's interval lies inside the band [1/band, band]:
// false where it reaches an edge or beyond, or either is undefined.
func (r Ratio) Inside(band analysis.Float) bool {
	return r.Low > 1/band && r.High < band
}

// noOutcome is how a table shows a run with no verdict to give.
const noOutcome = "no verdict"

// machineVerdicts is the per-machine table: for each run, in order, a row
// per workload (and phase) that any run judged or ran at two classes on a
// target; one row per run when there is none. cells and verdicts are each
// run's cells and verdicts over the thread counts the findings use.
func machineVerdicts(cols []Column, runs []runFindings) []MachineVerdict {
	var keys []summary.WorkloadPhase
	for _, r := range runs {
		for _, v := range r.verdicts {
			keys = appendKey(keys, summary.WorkloadPhase{Workload: v.Host.Workload, Phase: v.Host.Phase, Params: v.Host.Params})
		}
		for _, s := range r.sensitivities {
			keys = appendKey(keys, summary.WorkloadPhase{Workload: s.Workload, Phase: s.Phase, Params: s.Params})
		}
	}
	slices.SortStableFunc(keys, func(a, b summary.WorkloadPhase) int {
		if c := strings.Compare(a.Workload, b.Workload); c != 0 {
			return c
		}
		if c := strings.Compare(a.Phase, b.Phase); c != 0 {
			return c
		}
		return analysis.CompareParams(a.Params, b.Params)
	})
	var out []MachineVerdict
	for i, r := range runs {
		if len(keys) == 0 {
			m := machineOf(i, cols[i])
			m.Reason = "no workload ran at two QoS classes"
			out = append(out, m)
		}
		for _, k := range keys {
			out = append(out, machineVerdict(i, cols[i], r, k))
		}
	}
	return out
}

func appendKey(keys []summary.WorkloadPhase, k summary.WorkloadPhase) []summary.WorkloadPhase {
	if slices.Contains(keys, k) {
		return keys
	}
	return append(keys, k)
}

// text names a workload (and phase), with its parameters where it has
// them: "compress size=4194304 ratio=3 codec=zstd level=0 sink=null".
func workloadText(k summary.WorkloadPhase) string {
	return strings.TrimSpace(render.WorkloadText(k.Workload, k.Phase) + " " + k.Params)
}

// workload is what the row judges.
func (m MachineVerdict) workload() summary.WorkloadPhase {
	return summary.WorkloadPhase{Workload: m.Workload, Phase: m.Phase, Params: m.Params}
}

// machineOf is run i's row before its verdict: the machine, nothing
// judged.
func machineOf(i int, col Column) MachineVerdict {
	nan := nan()
	none := Ratio{Value: nan, Low: nan, High: nan, Level: nan, Confidence: nan}
	return MachineVerdict{Run: i, Label: col.Label, CPU: col.CPU, OS: col.OS, VM: col.VM, Threads: []int{},
		SI: nan, SILow: nan, SIHigh: nan, HostRatio: none, VMRatio: none, Band: nan, BandNo: nan}
}

// machineVerdict is run i's row for workload k: its verdict where it has
// one; else why not, with each target's QoS sensitivity where it ran both
// classes.
func machineVerdict(i int, col Column, r runFindings, k summary.WorkloadPhase) MachineVerdict {
	m := machineOf(i, col)
	m.Workload, m.Phase, m.Params = k.Workload, k.Phase, k.Params
	m.Threads = r.threads[k]
	if m.Threads == nil {
		m.Threads = []int{}
	}
	for _, v := range r.verdicts {
		if v.Host.Workload != k.Workload || v.Host.Phase != k.Phase || v.Host.Params != k.Params {
			continue
		}
		m.Outcome, m.Reason, m.Caveats = string(v.Outcome), render.VerdictReason(v), v.Caveats
		m.High, m.Low = v.Host.High, v.Host.Low
		m.SI, m.SILow, m.SIHigh = v.SI, v.SILow, v.SIHigh
		// The verdict's intervals: two one-sided tests at v.Level each.
		m.HostRatio, m.VMRatio = ratioOf(v.Host.Shift, analysis.Float(1-2*v.Level)), ratioOf(v.VM.Shift, analysis.Float(1-2*v.Level))
		m.Band, m.BandNo = v.Margin, v.MarginNo
		m.Mechanism = v.Mechanism
		m.VMByThreads = threadRatios(v)
	}
	if m.Outcome == "" {
		m.Reason = noVerdictReason(r, k)
	}
	// Where the verdict has no ratio (it had no cells to compare, or none
	// was asked), the target's QoS sensitivity stands in, at 95%.
	for _, s := range r.sensitivities {
		if s.Workload != k.Workload || s.Phase != k.Phase || s.Params != k.Params || s.Shift.Estimate.IsNaN() {
			continue
		}
		side := map[string]*Ratio{spec.TargetHost: &m.HostRatio, spec.TargetVM: &m.VMRatio}[s.Target]
		if side == nil || !side.Value.IsNaN() {
			continue
		}
		if m.High == 0 {
			m.High, m.Low = s.High, s.Low
		}
		if s.High == m.High && s.Low == m.Low {
			*side = ratioOf(s.Shift, analysis.Confidence)
		}
	}
	return m
}

// threadRatios are v's VM ratios per thread count, each at the level
// asked of it: its look's where the run has looks, else the verdict's.
func threadRatios(v analysis.Verdict) []ThreadRatio {
	var out []ThreadRatio
	for _, ts := range v.VMByThreads {
		level := 1 - 2*v.Level
		for _, l := range v.Looks {
			if l.Threads == ts.Threads {
				level = 1 - 2*l.Level
			}
		}
		out = append(out, ThreadRatio{Threads: ts.Threads, Ratio: ratioOf(ts.Shift, analysis.Float(level))})
	}
	return out
}

// noVerdictReason says why run r gives no verdict for workload k.
func noVerdictReason(r runFindings, k summary.WorkloadPhase) string {
	onVM, ran := false, false
	for _, c := range r.cells {
		onVM = onVM || c.Target == spec.TargetVM
		ran = ran || (c.Workload == k.Workload && c.Phase == k.Phase && c.Params == k.Params)
	}
	switch {
	case !onVM:
		return "no vm target"
	case !ran:
		return "the run has no " + workloadText(k)
	}
	return summary.NoVerdictReason(r.cells, r.run, k)
}

// ratioOf is a shift, its interval asked at level, as a ratio: exp of
// its estimate and ends.
func ratioOf(s analysis.Shift, level analysis.Float) Ratio {
	exp := func(f analysis.Float) analysis.Float { return analysis.Float(math.Exp(float64(f))) }
	return Ratio{Value: exp(s.Estimate), Low: exp(s.Low), High: exp(s.High), Level: level, Confidence: s.Confidence}
}

// Text renders the ratio as the verdict line does: "280x [234..301]",
// with the coverage when it is not the verdict's 90%: reached short of
// it ("1.01x [0.5..2] (67%)"), or asked at another level ("(95%)"); "-"
// when there is none.
func (r Ratio) Text() string {
	if r.Value.IsNaN() {
		return "-"
	}
	s := render.FormatRatio(r.Value)
	if r.Low.IsNaN() || r.High.IsNaN() {
		return s
	}
	bare := func(f analysis.Float) string { return strings.TrimSuffix(render.FormatRatio(f), "x") }
	s += " [" + bare(r.Low) + ".." + bare(r.High) + "]"
	switch c := float64(r.Confidence); {
	case c < float64(r.Level)-1e-9:
		s += " (" + strconv.FormatFloat(math.Round(100*c), 'f', -1, 64) + "%)"
	case float64(r.Level) == analysis.Confidence: // a sensitivity's, not the verdict's
		s += " (" + strconv.FormatFloat(math.Round(100*float64(r.Level)), 'f', -1, 64) + "%)"
	}
	return s
}

// OutcomeText is the verdict as the table shows it: yes, no,
// inconclusive, or "no verdict".
func (m MachineVerdict) OutcomeText() string {
	if m.Outcome == "" {
		return noOutcome
	}
	return m.Outcome
}

// SIText is the subsumption index with its interval: "0.984
// [0.906..1.043]"; "n/a" when the verdict has none (no host effect), "-"
// when there is no verdict.
func (m MachineVerdict) SIText() string {
	switch {
	case m.Outcome == "":
		return "-"
	case m.SI.IsNaN():
		return "n/a"
	}
	s := strconv.FormatFloat(float64(m.SI), 'f', 3, 64)
	if !m.SILow.IsNaN() && !m.SIHigh.IsNaN() {
		s += " [" + strconv.FormatFloat(float64(m.SILow), 'f', 3, 64) + ".." + strconv.FormatFloat(float64(m.SIHigh), 'f', 3, 64) + "]"
	}
	return s
}

// classesText is "33/9", the classes a row's ratios compare; "" when none.
func (m MachineVerdict) classesText() string {
	if m.High == 0 && m.Low == 0 {
		return ""
	}
	return strconv.Itoa(m.High) + "/" + strconv.Itoa(m.Low)
}

// verdictField is one column of the per-machine table: its heading in the
// text tables, its names in the CSV (after csvHeader's own columns), and
// how a row shows it in each. classes is what every row compares ("33/9",
// "" when rows differ). hoist marks the machine's columns, which the text
// tables state once above the rows when every run has the same value.
type verdictField struct {
	head    func(classes string) string
	text    func(m MachineVerdict, classes string) string
	csv     []string
	value   func(MachineVerdict) []string
	hoist   bool
	numeric bool
	// key starts the keys that stand for a machine column's values where
	// a text format abbreviates it to fit its width (C1, C2, ...).
	key string
	// gone is what a run that did not come back shows ("-" when empty).
	gone string
}

// verdictFields are the per-machine table's columns after the run's label
// (and the workload, when more than one is judged), in order. The
// subsumption index goes in the CSV's value, low and high, and the
// outcome in its outcome column, so they have no CSV names here.
var verdictFields = []verdictField{
	{head: fixed("CPU"), text: func(m MachineVerdict, _ string) string { return orDash(m.CPU) },
		csv: []string{"cpu"}, value: func(m MachineVerdict) []string { return []string{m.CPU} }, hoist: true, key: "C"},
	{head: fixed("OS"), text: func(m MachineVerdict, _ string) string { return orDash(m.OS) },
		csv: []string{"os"}, value: func(m MachineVerdict) []string { return []string{m.OS} }, hoist: true, key: "O"},
	{head: fixed("VM"), text: func(m MachineVerdict, _ string) string { return orDash(m.VM) },
		csv: []string{"vm"}, value: func(m MachineVerdict) []string { return []string{m.VM} }, hoist: true, key: "V"},
	{head: fixed("VERDICT"), text: func(m MachineVerdict, _ string) string { return m.OutcomeText() }, gone: notBack},
	{head: fixed("SI"), text: func(m MachineVerdict, _ string) string { return m.SIText() }, numeric: true},
	{head: ratioHead("HOST"), text: func(m MachineVerdict, classes string) string { return m.ratioText(m.HostRatio, classes) },
		csv: []string{"host_ratio_hl", "host_ratio_hl_low", "host_ratio_hl_high"}, value: func(m MachineVerdict) []string { return ratioValues(m.HostRatio) }, numeric: true},
	{head: ratioHead("VM"), text: func(m MachineVerdict, classes string) string { return m.ratioText(m.VMRatio, classes) },
		csv: []string{"vm_ratio_hl", "vm_ratio_hl_low", "vm_ratio_hl_high"}, value: func(m MachineVerdict) []string { return ratioValues(m.VMRatio) }, numeric: true},
	{head: fixed("MECHANISM"), text: func(m MachineVerdict, _ string) string { return orDash(m.MechanismText()) },
		csv: []string{"mechanism"}, value: func(m MachineVerdict) []string { return []string{m.MechanismText()} }, hoist: true, key: "M"},
	{csv: []string{"reason"}, value: func(m MachineVerdict) []string { return []string{m.Reason} }},
}

// MechanismText says in a few words where each target's effect was: "host
// in CPU share, vm alike"; empty without a verdict.
func (m MachineVerdict) MechanismText() string {
	parts := make([]string, len(m.Mechanism))
	recorded := false
	for i, t := range m.Mechanism {
		parts[i] = t.Target + " " + render.MechanismBrief(t)
		recorded = recorded || t.Recorded()
	}
	if len(parts) > 0 && !recorded {
		return "not recorded"
	}
	return strings.Join(parts, ", ")
}

// ratioText is a side's ratio in a row: its classes first when the
// column's heading does not name them ("33/9 = 280x [234..301]").
func (m MachineVerdict) ratioText(r Ratio, classes string) string {
	if classes == "" && !r.Value.IsNaN() {
		return m.classesText() + " = " + r.Text()
	}
	return r.Text()
}

func ratioValues(r Ratio) []string { return []string{num(r.Value), num(r.Low), num(r.High)} }

func fixed(head string) func(string) string { return func(string) string { return head } }

// ratioHead heads a target's ratio column: "HOST 33/9" when every row
// compares those classes, "HOST RATIO" when rows differ (each then says
// its classes).
func ratioHead(target string) func(string) string {
	return func(classes string) string {
		if classes == "" {
			return target + " RATIO"
		}
		return target + " " + classes
	}
}

// sharedClasses is the classes every row with ratios compares ("33/9"),
// or "" when rows differ.
func sharedClasses(rows []MachineVerdict) string {
	shared := ""
	for _, m := range rows {
		c := m.classesText()
		switch {
		case c == "":
		case shared == "":
			shared = c
		case shared != c:
			return ""
		}
	}
	return shared
}

// notBack is the verdict column of a run that did not come back.
const notBack = "did not come back"

// whys are what a row says under the table: why its answer is not yes,
// and its run's caveats; named with the row's workload where the section
// has several (multi).
func (m MachineVerdict) whys(multi bool) []string {
	var out []string
	if m.Outcome != string(analysis.Subsumed) && m.Reason != "" {
		out = append(out, m.OutcomeText()+": "+m.Reason)
	}
	for _, c := range m.Caveats {
		out = append(out, "caveat: "+c)
	}
	if multi {
		for i, why := range out {
			out[i] = workloadText(m.workload()) + ": " + why
		}
	}
	return out
}

// MachineSection is the per-machine table, the first of every text
// format: a row per run (and judged workload) in the order given, with
// the machine, the verdict, SI and both sides' ratios; a row per run that
// did not come back. A machine column whose value every run shares is said
// once, above the rows (Lead), so a fleet of like machines keeps a narrow
// table; below them (Notes), why each run that is not a yes is not, and
// each verdict's caveats, one line per reason or caveat with the runs it
// holds for.
func (c *Comparison) MachineSection() Section {
	rows := c.Machines
	classes := sharedClasses(rows)
	multi := false
	for _, m := range rows {
		multi = multi || m.Workload != rows[0].Workload || m.Phase != rows[0].Phase || m.Params != rows[0].Params
	}
	header := []string{"RUN"}
	if multi {
		header = append(header, "WORKLOAD")
	}
	var fields []verdictField
	var shared []string
	for _, f := range verdictFields {
		if f.head == nil {
			continue
		}
		if f.hoist && len(rows) > 0 && allSame(rows, func(m MachineVerdict) string { return f.text(m, classes) }) {
			shared = append(shared, f.head(classes)+" "+f.text(rows[0], classes))
			continue
		}
		fields = append(fields, f)
		header = append(header, f.head(classes))
	}
	s := newSection("verdict per machine", "QoS subsumed in the VM; SI with its interval over both sides' 95% intervals; "+
		"host and VM ratios, highest class over lowest, with the verdict's 90% intervals", header)
	for i := range fields {
		s.Numeric[len(header)-len(fields)+i] = fields[i].numeric
	}
	if len(shared) > 0 {
		s.Lead = "Every run: " + strings.Join(shared, "; ") + "."
	}
	var reasons []string
	runs := map[string][]string{}
	keys := columnKeys{}
	for _, m := range rows {
		row := []string{c.runName(m.Run)}
		if multi {
			row = append(row, orDash(workloadText(m.workload())))
		}
		for _, f := range fields {
			text := f.text(m, classes)
			if c.keyed[f.head(classes)] {
				text = keys.of(f, classes, text)
			}
			row = append(row, text)
		}
		s.Rows = append(s.Rows, row)
		for _, why := range m.whys(multi) {
			if runs[why] == nil {
				reasons = append(reasons, why)
			}
			runs[why] = append(runs[why], m.Label)
		}
	}
	for j := range c.Missing {
		row := []string{c.runName(len(c.Columns) + j)}
		if multi {
			row = append(row, "-")
		}
		for _, f := range fields {
			row = append(row, cmp.Or(f.gone, "-"))
		}
		s.Rows = append(s.Rows, row)
	}
	for _, why := range reasons {
		s.Notes = append(s.Notes, strings.Join(runs[why], ", ")+": "+why)
	}
	for _, f := range fields {
		s.Keys = append(s.Keys, keys.lines[f.head(classes)]...)
	}
	return *s
}

// columnKeys are the keys a text format gives a machine column's values
// to fit its width: per column (by heading), each value's key in the
// order first met (C1, C2, ...), and what each stands for, one a line
// ("CPU C1: AMD EPYC 7763 64-Core Processor").
type columnKeys struct {
	byValue map[string]string
	count   map[string]int
	lines   map[string][]string
}

// of is the key of text in column f's rows, made when first met; "-"
// (nothing to say) stays as it is.
func (k *columnKeys) of(f verdictField, classes, text string) string {
	if text == "-" {
		return text
	}
	head := f.head(classes)
	if k.byValue == nil {
		k.byValue, k.count, k.lines = map[string]string{}, map[string]int{}, map[string][]string{}
	}
	if key, ok := k.byValue[head+"\x00"+text]; ok {
		return key
	}
	k.count[head]++
	key := f.key + strconv.Itoa(k.count[head])
	k.byValue[head+"\x00"+text] = key
	k.lines[head] = append(k.lines[head], head+" "+key+": "+text)
	return key
}

// allSame reports whether text gives every row the same value.
func allSame(rows []MachineVerdict, text func(MachineVerdict) string) bool {
	for _, m := range rows {
		if text(m) != text(rows[0]) {
			return false
		}
	}
	return true
}
