// Package summary writes a run's summary files, summary.json, summary.csv and
// summary.md, from its analysed cells.
package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/termcolor"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Summary is a run's summary: what its summary files say, and what its
// report and charts show. (One cell's order statistics are
// analysis.OrderStats.)
type Summary struct {
	// Name is the run's name.
	Name string
	// Schema is the result schema the run's files were written in (its
	// run.json's schema_version), which says what its records can carry
	// (CPU time from 1.2, the host's view from 1.3); empty when the
	// samples came without their run.
	Schema string
	// Partial says how far a run that did not finish got (Loaded.Partial);
	// empty for a complete one.
	Partial     string
	Cells       []analysis.Cell
	Regressions []analysis.ClassRegression
	// Verdicts holds one verdict per workload (and phase) run on both the
	// host and the VM, judged with Margins.
	Verdicts []analysis.Verdict
	Margins  analysis.Margins
	// Findings are the patterns the seed articles pointed at, stated in
	// words (stragglers, batches, scaling), host and VM alike.
	Findings []analysis.Finding
	// Telemetry summarizes each cell run's telemetry per view, when the
	// run recorded any (the caller reads telemetry.jsonl into it).
	Telemetry []telemetry.CellSummary
	// Again is how to run the run again (Again), which a verdict's next
	// step (analysis.Verdict.Next) is worded with; nil without a run.
	Again *Again
}

// Of analyzes a loaded results directory: its samples (as Analyze does),
// its verdicts as every reader has them (RunVerdicts: the margins and looks
// its spec set, the run's caveats), its name and its telemetry.
func Of(l *results.Loaded) Summary {
	a := analyze(results.Cells(l.Samples), l.Samples)
	a.Margins = MarginsOf(l.Run)
	a.Verdicts = RunVerdicts(a.Cells, l.Run)
	a.Name = l.Run.Name
	a.Schema = l.Run.SchemaVersion
	a.Partial = l.Partial()
	a.Telemetry = telemetry.Summarize(l.Telemetry)
	if l.Run.Spec.Present() {
		a.Again = &Again{Spec: l.Run.Spec.Value(), Path: l.Path}
	}
	a.Findings = append(a.Findings, coreShares(l.Telemetry, SplitWorkloads(a.Cells))...)
	return a
}

// SplitWorkloads are the workloads whose cells carry their parameters
// (analysis.CellKey.Params): those the run measured with more than one set
// of them where two cells would otherwise look alike.
func SplitWorkloads(cells []analysis.Cell) map[string]bool {
	out := map[string]bool{}
	for _, c := range cells {
		if c.Params != "" {
			out[c.Workload] = true
		}
	}
	return out
}

// Analyze summarizes samples into cells (in table order, analysis.SortCells),
// fits the throughput regressions, and judges subsumption, with the default
// margins, for every workload (and phase) that ran at two or more classes
// on both targets host and vm, in that order.
// It leaves Name empty.
func Analyze(samples []results.Sample, host, vm string) Summary {
	a := analyze(results.Cells(samples), samples)
	a.Margins = analysis.DefaultMargins()
	a.Verdicts = Verdicts(a.Cells, host, vm, a.Margins, nil)
	return a
}

// analyze is Analyze of cells (from a run's records, with the host's view,
// where there are records) before any verdict: its callers judge, Of as
// every reader of a run does (RunVerdicts).
func analyze(cells []analysis.Cell, samples []results.Sample) Summary {
	cells = analysis.SortCells(cells)
	return Summary{Cells: cells, Regressions: analysis.Regressions(cells), Findings: findings(samples, cells)}
}

// MarginsOf are the verdict margins a run's spec set (its verdict: keys, as
// recorded in run.json), the defaults for those it did not set and for runs
// recorded before specs had them.
func MarginsOf(r results.Run) analysis.Margins { return SpecMargins(r.Spec.Value()) }

// SpecMargins are the verdict margins spec s set, the defaults for those it
// did not. A spec without verdict: decodes as zero margins, which are out
// of range and so give the defaults.
func SpecMargins(s spec.Spec) analysis.Margins {
	m := analysis.DefaultMargins()
	set := s.Verdict
	if v := set.Relative; v > 0 && v < 1 {
		m.Relative = v
	}
	if v := set.Absolute; v > 1 {
		m.Absolute = v
	}
	return m
}

// ScheduleOf is the schedule of looks a run's spec set (its repeats and
// max_repeats, as recorded in run.json: analysis.Schedule), so that a run
// that added repeats until its answer was decided is judged at the level
// of each thread count's look; nil (one look, at 5%) for a run whose spec
// set no max_repeats (or 0) and for runs recorded before specs had it.
func ScheduleOf(r results.Run) []int {
	s := r.Spec.Value()
	if s.MaxRepeats <= s.Repeats {
		return nil
	}
	return analysis.Schedule(s.Repeats, s.MaxRepeats)
}

// sequentialCaveat is what a verdict of a run whose cells ran in sequence
// must say: a change in the machine over the run reads as a QoS effect.
const sequentialCaveat = "the cells ran in sequence (order: sequential), so time and class are confounded: " +
	"a change in the machine over the run (heat, other work) would read as a QoS effect; order: interleaved shuffles them"

// RunVerdicts are run r's verdicts over cells, decided here once for
// every reader (the summary and what shows it, results list, compare,
// report, bench): judged between host and vm (Verdicts) with the margins
// and looks its spec set (MarginsOf, ScheduleOf), each with the run's
// caveats. cells may be fewer than the run's own (compare judges runs at
// the thread counts they share): the caveats are the run's whatever the
// cells, so no view of a run loses them.
func RunVerdicts(cells []analysis.Cell, r results.Run) []analysis.Verdict {
	v := Verdicts(cells, spec.TargetHost, spec.TargetVM, MarginsOf(r), ScheduleOf(r))
	withCaveats(v, r)
	return v
}

// NoVerdictReason says why run r gives no verdict for workload k over
// cells, which RunVerdicts leaves out (not at two classes on both
// targets): what the verdict would say were it asked, with the run's
// margins and looks. Compare says it in the verdict per machine.
func NoVerdictReason(cells []analysis.Cell, r results.Run, k WorkloadPhase) string {
	return render.VerdictReason(analysis.SubsumptionAt(analysis.ParamsCells(cells, k.Params), k.Workload, k.Phase, spec.TargetHost, spec.TargetVM, MarginsOf(r), ScheduleOf(r)))
}

// withCaveats gives each verdict the caveats of the run it judges: a run
// whose spec laid its cells out in sequence (order: sequential, as bench
// does) confounds time with class.
func withCaveats(verdicts []analysis.Verdict, r results.Run) {
	if r.Spec.Value().Order != spec.OrderSequential {
		return
	}
	for i := range verdicts {
		verdicts[i].Caveats = append(verdicts[i].Caveats, sequentialCaveat)
	}
}

// Verdicts judges subsumption for every workload (and phase) that ran at
// two or more classes on both targets host and vm, in cell order, with the
// margins given. A workload run at one class asks nothing about QoS
// (allocation, pi): no verdict, rather than an inconclusive one. schedule
// is the run's looks (ScheduleOf; nil for one).
func Verdicts(cells []analysis.Cell, host, vm string, margins analysis.Margins, schedule []int) []analysis.Verdict {
	var out []analysis.Verdict
	for _, k := range Judged(cells, host, vm) {
		out = append(out, analysis.SubsumptionAt(analysis.ParamsCells(cells, k.Params), k.Workload, k.Phase, host, vm, margins, schedule))
	}
	return out
}

// WorkloadPhase is a workload (and phase) a verdict judges, with the
// parameters of its cells where the run measured it with more than one set
// of them (analysis.CellKey.Params): each set is judged alone, classes and
// targets compared at equal parameters, and its verdict is named with them.
type WorkloadPhase struct{ Workload, Phase, Params string }

// Judged are the workloads (and phases, and sets of parameters) Verdicts
// judges, in cell order: those run at two or more classes on both host and
// vm. The run's looks decide the same verdicts between blocks of repeats.
func Judged(cells []analysis.Cell, host, vm string) []WorkloadPhase {
	var order []WorkloadPhase
	on := map[WorkloadPhase]map[string]bool{}
	classes := map[WorkloadPhase]map[int]bool{}
	for _, c := range cells {
		k := WorkloadPhase{c.Workload, c.Phase, c.Params}
		if on[k] == nil {
			on[k] = map[string]bool{}
			classes[k] = map[int]bool{}
			order = append(order, k)
		}
		on[k][c.Target] = true
		classes[k][c.QoS] = true
	}
	var out []WorkloadPhase
	for _, k := range order {
		if on[k][host] && on[k][vm] && len(classes[k]) >= 2 {
			out = append(out, k)
		}
	}
	return out
}

// findings states the patterns in samples: stragglers among the threads
// (or processes) of fixed-work cells (a fixed-duration cell's threads all
// end at its deadline), batches of process completions (a cell whose
// completions form batches gets that finding, not a straggler's: its last
// batch is late by design), and where adding threads stops paying.
func findings(samples []results.Sample, cells []analysis.Cell) []analysis.Finding {
	var fixed []results.Sample
	for _, s := range samples {
		if s.DurationNs == 0 {
			fixed = append(fixed, s)
		}
	}
	obs := results.Observations(fixed)
	all := func(analysis.Observation) bool { return true }
	batches := analysis.Batches(obs, all)
	batched := map[analysis.CellKey]bool{}
	for _, f := range batches {
		batched[analysis.CellKey{Target: f.Target, Workload: f.Workload, QoS: f.QoS, Threads: f.Threads, Params: f.Params}] = true
	}
	out := analysis.Stragglers(obs, func(o analysis.Observation) bool { return !batched[o.CellKey] }, analysis.StragglerThreshold)
	out = append(out, batches...)
	return append(out, analysis.Scaling(cells, func(w string) bool { return catalog.Lookup(w).LoopsInTotal })...)
}

// Write writes summary.json, summary.csv and summary.md into the results
// directory dir, each replaced atomically.
func Write(dir string, a Summary) error {
	files := []struct {
		name   string
		render func(io.Writer) error
	}{
		{results.SummaryJSONFile, func(w io.Writer) error { return writeJSON(w, a) }},
		{results.SummaryCSVFile, func(w io.Writer) error { return writeCSV(w, a.Cells) }},
		{results.SummaryMDFile, func(w io.Writer) error { return WriteMarkdown(w, a) }},
	}
	for _, f := range files {
		var buf bytes.Buffer
		if err := f.render(&buf); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(dir, f.name), err)
		}
		if err := atomicfile.Write(filepath.Join(dir, f.name), buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSV writes summary.csv's rows for a.
func WriteCSV(w io.Writer, a Summary) error { return writeCSV(w, a.Cells) }

// Document is summary.json.
type Document struct {
	SchemaVersion string `json:"schema_version"`
	Name          string `json:"name"`
	// Confidence is the coverage asked of every confidence interval; a
	// cell's ci_confidence is what its n allowed.
	Confidence  float64                    `json:"confidence"`
	Alpha       float64                    `json:"alpha"`
	Cells       []analysis.Cell            `json:"cells"`
	Regressions []analysis.ClassRegression `json:"regressions"`
	Verdicts    []render.VerdictJSON       `json:"verdicts"`
	Findings    []FindingDoc               `json:"findings"`
	// Warnings are, per workload, the VM cell runs other work on the host
	// interfered with (render.Interference), then the cells whose repeats
	// disagree (each cell's dispersion.flag, with the cell named), in table
	// order.
	Warnings  []string                `json:"warnings"`
	Telemetry []telemetry.CellSummary `json:"telemetry"`
}

// FindingDoc is a finding as summary.json has it: the cell it is of
// (analysis.Finding) and what it says (render.FindingText).
type FindingDoc struct {
	Kind     string `json:"kind"`
	Target   string `json:"target"`
	Workload string `json:"workload"`
	QoS      int    `json:"qos"`
	Threads  int    `json:"threads,omitempty"`
	Params   string `json:"params,omitempty"`
	Text     string `json:"text"`
}

// writeJSON writes summary.json: the cells, regressions and verdicts with
// analysis's field names, rates in unit per second. A statistic that is not
// a number (a cell without repeats, a regression without a line) is null.
func writeJSON(w io.Writer, a Summary) error {
	b, err := json.MarshalIndent(NewDocument(a), "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// NewDocument is summary.json's content for a, for those who print it
// (results show --json).
func NewDocument(a Summary) Document {
	doc := Document{
		SchemaVersion: results.SchemaVersion, Name: a.Name, Confidence: analysis.Confidence, Alpha: analysis.Alpha,
		Cells: orEmpty(render.WithFlags(a.Cells)), Regressions: orEmpty(a.Regressions), Verdicts: render.VerdictDocuments(a.Verdicts), Findings: []FindingDoc{},
		Telemetry: orEmpty(a.Telemetry),
	}
	for _, f := range a.Findings {
		doc.Findings = append(doc.Findings, FindingDoc{Kind: f.Kind, Target: f.Target, Workload: f.Workload, QoS: f.QoS, Threads: f.Threads,
			Params: f.Params, Text: render.FindingText(f)})
	}
	per, rest := Warnings(a)
	for _, ws := range per {
		doc.Warnings = append(doc.Warnings, ws...)
	}
	doc.Warnings = orEmpty(append(doc.Warnings, rest...))
	return doc
}

// orEmpty makes a nil slice an empty one, so that JSON has [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// csvHeader returns summary.csv's columns, in order. The first eleven are a
// promise to scripts; median to ci_high are the total rate in unit.
func csvHeader() []string {
	return []string{
		"target", "workload", "qos", "threads", "n", "median", "min", "max", "ci_low", "ci_high", "unit",
		"phase", "ci_confidence",
		"thread_n", "thread_median", "thread_min", "thread_max",
		"seconds_median", "seconds_min", "seconds_max",
		"qos_applied", "qos_partial",
		"cv", "max_min", "flag",
		"idle",
		"cpu_share_median", "cpu_share_ci_low", "cpu_share_ci_high", "speed_median", "speed_ci_low", "speed_ci_high", "speed_unit",
		"vcpu_host_share_median", "vcpu_wait_median", "other_cpu_median",
		"params",
	}
}

// writeCSV writes summary.csv: one row per cell. median, min, max, ci_low
// and ci_high are the cell's total rate over its repeats (all threads' work
// from first start to last end) and unit is the rate's, such as "loops/s";
// the thread_ columns pool every thread's own rate, the seconds_ columns the
// repeats' durations; the cpu_share_ columns are the repeats' CPU share (the
// CPU time their threads consumed over their wall time: 1 is a whole CPU
// per thread) and the speed_ columns their work per CPU-second, in
// speed_unit, medians with their 95% intervals. Every one of them is of the
// repeats that did work (n); idle counts those that did none (a total rate
// of 0), left out of all. The last three are the host's view of the
// cell's repeats (schema 1.3), medians over every repeat that recorded one:
// vcpu_host_share_median the host CPUs the VM's vCPU threads got (their
// run time over the wall time, summed over vCPUs), vcpu_wait_median the
// host CPUs' worth of time they waited for one, other_cpu_median the host
// CPUs the host's other work took (not the run's own: controller, agent,
// spinners, hypervisor). A value that is not a number (a run whose records
// carry no CPU time has no share or speed; a host cell has no vCPUs; a run
// before 1.3 has no host view) is left empty. params tells apart the cells
// of a workload the run measured with more than one set of parameters
// (analysis.CellKey.Params), empty for the others.
func writeCSV(w io.Writer, cells []analysis.Cell) error {
	if err := render.CSV(w, CSVTable(cells)); err != nil {
		return fmt.Errorf("write summary csv: %w", err)
	}
	return nil
}

// CSVTable is summary.csv's table: its columns (csvHeader), a row per
// cell (writeCSV says what each holds).
func CSVTable(cells []analysis.Cell) *render.Table {
	t := &render.Table{}
	for _, h := range csvHeader() {
		t.Columns = append(t.Columns, render.Column{Head: h})
	}
	for _, c := range cells {
		t.Rows = append(t.Rows, render.TextCells(csvRow(c)...))
	}
	return t
}

// csvRow is cell c's line of summary.csv, in csvHeader's order.
func csvRow(c analysis.Cell) []string {
	applied := make([]string, len(c.QoSApplied))
	for i, q := range c.QoSApplied {
		applied[i] = strconv.Itoa(q)
	}
	tr, th, s := c.TotalRate, c.ThreadRate, c.Seconds
	return []string{
		c.Target, c.Workload, strconv.Itoa(c.QoS), strconv.Itoa(c.Threads),
		strconv.Itoa(tr.N), csvFloat(tr.Median), csvFloat(tr.Min), csvFloat(tr.Max), csvFloat(tr.CILow), csvFloat(tr.CIHigh), rateUnit(c.Unit),
		c.Phase, csvFloat(tr.CIConfidence),
		strconv.Itoa(th.N), csvFloat(th.Median), csvFloat(th.Min), csvFloat(th.Max),
		csvFloat(s.Median), csvFloat(s.Min), csvFloat(s.Max),
		strings.Join(applied, " "), strconv.Itoa(c.QoSPartial),
		csvFloat(c.Dispersion.CV), csvFloat(c.Dispersion.MaxMin), render.CellFlag(c),
		strconv.Itoa(c.Idle()),
		csvFloat(c.CPUShare.Median), csvFloat(c.CPUShare.CILow), csvFloat(c.CPUShare.CIHigh),
		csvFloat(c.Speed.Median), csvFloat(c.Speed.CILow), csvFloat(c.Speed.CIHigh), speedUnit(c.Unit),
		csvFloat(analysis.MedianOf(c.VCPUShares)), csvFloat(analysis.MedianOf(c.VCPUWaits)), csvFloat(analysis.MedianOf(c.OtherCPU)),
		c.Params,
	}
}

// csvFloat writes x exactly (results.FormatCSVFloat); NaN, which
// spreadsheets and pandas read as missing when empty, is empty.
func csvFloat(f analysis.Float) string {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return ""
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return results.FormatCSVFloat(x)
}

func rateUnit(unit string) string { return unit + "/s" }

// speedUnit is the unit of a cell's speed: work per CPU-second.
func speedUnit(unit string) string { return unit + "/CPU-s" }

// tablesIntro says what the tables' columns are: summary.md's opening
// paragraph.
func tablesIntro() string {
	return fmt.Sprintf("Per cell, the total rate is all threads' work from the first start to the last end, one value per repeat: "+
		"median, its distribution-free %g%% confidence interval (lower coverage, in parentheses, when there are too few repeats), min and max. "+
		"The per-thread rate is the mean of each repeat's threads' own rates, one value per repeat. "+
		"max/min and CV (the standard deviation over the mean) say how far the repeats' total rates agree; "+
		"a cell whose repeats are more than %gx apart, or fall in two groups, is flagged (!): one number cannot stand for it.", analysis.Confidence*100, analysis.DisagreeRatio)
}

// section is the cells of one workload (and phase, and set of parameters
// where the run measured it with more than one) in one unit: one table.
type section struct {
	workload, phase, params, unit string
	cells                         []analysis.Cell
}

func sections(cells []analysis.Cell) []*section {
	var out []*section
	byKey := map[[4]string]*section{}
	for _, c := range cells {
		k := [4]string{c.Workload, c.Phase, c.Params, c.Unit}
		s := byKey[k]
		if s == nil {
			s = &section{workload: c.Workload, phase: c.Phase, params: c.Params, unit: c.Unit}
			byKey[k] = s
			out = append(out, s)
		}
		s.cells = append(s.cells, c)
	}
	return out
}

// Table is one workload's (and phase's) cells as summary.md shows them, in
// plain text, for any renderer: summary.md and the HTML report draw the same
// rows.
type Table struct {
	// Title names the workload (and phase).
	Title string
	// Header names the columns, with units; RightAlign marks numeric ones.
	Header     []string
	RightAlign []bool
	Rows       [][]string
	// QoSNotes give the reasons behind the "(partial)" and "(other
	// class)" of the "QoS applied" column.
	QoSNotes []string
	// Marks explain the symbols the rows use, one line per symbol used
	// (DispersionMark), and the idle repeats beside n (IdleNote): the
	// legend beside the table.
	Marks []string
	// RateUnit is the regressions' unit (loops/s); Regressions are printed
	// as [game] (docs/references.md) prints them.
	RateUnit    string
	Regressions []string
	// Short are the columns' headings where a terminal has little room
	// (Header without the units, which Units says once), and Drop the rank
	// at which each column gives way to fit a terminal's width (0 never,
	// the highest first): the text view's (View).
	Short []string
	Drop  []int
	Units string
}

// QoSNotesIntro explains the words of the "QoS applied" column.
const QoSNotesIntro = "QoS applied: the class the threads read back as; (partial): part of the class's OS mapping did not take effect; (other class): the threads ran at another class than asked. Why:"

// DispersionMark is the one symbol of the tables, "!", and its legend:
// the repeats of the cell disagree, so no single number stands for it.
const DispersionMark = "!: the repeats disagree (more than 3x apart, or in two groups): one number cannot stand for the cell; see its warning"

// IdleNote is the legend of the idle repeats beside a cell's n,
// "4 (+2 idle)" (RepeatsText).
const IdleNote = "n (+k idle): k repeats did no work (a total rate of 0); every column leaves them out alike, as the tests do, and the cell's warning names them"

// RepeatsText is a cell's n as the tables print it: how many repeats its
// statistics rest on, and beside it how many did no work and are left out
// of every column ("4 (+2 idle)"; "0 (+6 idle)" when none did work).
func RepeatsText(c analysis.Cell) string {
	n := strconv.Itoa(c.TotalRate.N)
	if k := c.Idle(); k > 0 {
		n += fmt.Sprintf(" (+%d idle)", k)
	}
	return n
}

// Tables returns one table per workload (and phase), in the order the cells
// first show them.
func Tables(a Summary) []Table {
	var out []Table
	for _, sec := range sections(a.Cells) {
		out = append(out, sectionTable(sec, a.Regressions))
	}
	return out
}

func sectionTable(sec *section, regressions []analysis.ClassRegression) Table {
	var largest float64
	for _, c := range sec.cells {
		if m := math.Abs(float64(c.TotalRate.Median)); !math.IsNaN(m) && !math.IsInf(m, 0) {
			largest = max(largest, m)
		}
	}
	unit, scale := units.ScaleRate(sec.unit, largest)
	speedLabel, speedScale := speedScale(sec)
	// The host's view (schema 1.3) gets its columns, beside the share the
	// threads saw, only where some cell recorded one: an older run's table
	// is as it was.
	hostView := slices.ContainsFunc(sec.cells, func(c analysis.Cell) bool {
		return slices.ContainsFunc(c.HostViews, func(u *hostview.Use) bool { return u != nil })
	})
	header := []string{"target", "QoS", "threads", "n",
		"total rate median (" + unit + ")", fmt.Sprintf("%g%% CI (%s)", analysis.Confidence*100, unit), "min (" + unit + ")", "max (" + unit + ")", "max/min", "CV",
		"per-thread rate median (" + unit + ")", "CPU share median"}
	if hostView {
		header = append(header, HostVCPUsHeader, HostOtherHeader)
	}
	header = append(header, "speed median ("+speedLabel+")", "time median (s)", "QoS applied")
	right := make([]bool, len(header))
	for i := 2; i < len(header)-1; i++ {
		right[i] = true
	}
	t := Table{
		Title:      strings.TrimSpace(render.WorkloadText(sec.workload, sec.phase) + " " + sec.params),
		Header:     header,
		RightAlign: right,
		RateUnit:   rateUnit(sec.unit),
		Units:      "Total rate (median, its interval, min, max) and per-thread rate in " + unit + "; speed in " + speedLabel + ".",
	}
	t.Short, t.Drop = shortColumns(hostView)
	for _, c := range sec.cells {
		tr := c.TotalRate
		ci := "-"
		if tr.N > 0 {
			ci = sig(float64(tr.CILow)/scale) + " – " + sig(float64(tr.CIHigh)/scale)
		}
		if tr.N > 0 && tr.CIConfidence < analysis.Confidence {
			ci += fmt.Sprintf(" (%.1f%%)", tr.CIConfidence*100)
		}
		row := []string{c.Target, fmt.Sprintf("%d %s", c.QoS, qos.Class(c.QoS)), strconv.Itoa(c.Threads), RepeatsText(c),
			sig(float64(tr.Median) / scale), ci, sig(float64(tr.Min) / scale), sig(float64(tr.Max) / scale), spreadText(c), cvText(c.Dispersion),
			sig(float64(c.ThreadRate.Median) / scale), shareText(c)}
		if hostView {
			row = append(row, hostCPUsText(analysis.MedianOf(c.VCPUShares)), hostCPUsText(analysis.MedianOf(c.OtherCPU)))
		}
		t.Rows = append(t.Rows, append(row, speedText(c, speedScale), sig(float64(c.Seconds.Median)), AppliedText(c)))
	}
	t.QoSNotes = QoSNotes(sec.cells)
	for _, c := range sec.cells {
		if c.Flagged() {
			t.Marks = []string{DispersionMark}
			break
		}
	}
	for _, c := range sec.cells {
		if c.Idle() > 0 {
			t.Marks = append(t.Marks, IdleNote)
			break
		}
	}
	for _, r := range regressions {
		if r.Workload != sec.workload || r.Phase != sec.phase || r.Params != sec.params {
			continue
		}
		line := render.ClassRegression(r)
		if !r.R2.IsNaN() {
			line += fmt.Sprintf(" (R² %.3f, %d points)", r.R2, r.N)
		}
		t.Regressions = append(t.Regressions, line)
	}
	return t
}

// shortColumns are a workload's table's columns as a terminal heads them
// (Table.Short), and the rank at which each gives way to fit its width
// (Table.Drop): the spread of the repeats and the CPU figures before the
// median, its interval, max/min and the class applied.
func shortColumns(hostView bool) (short []string, drop []int) {
	short = []string{"target", "QoS", "threads", "n", "median", fmt.Sprintf("%g%% CI", analysis.Confidence*100), "min", "max", "max/min", "CV",
		"per-thread", "CPU share"}
	drop = []int{0, 0, 0, 0, 0, 0, 11, 10, 0, 3, 8, 2}
	if hostView {
		short = append(short, "vCPUs on host", "other work on host")
		drop = append(drop, 4, 5)
	}
	return append(short, "speed", "time (s)", "QoS applied"), append(drop, 7, 9, 0)
}

// The host view's columns in a workload's table: the host CPUs the VM's
// vCPU threads got and those the host's other work took, medians over the
// cell's repeats.
const (
	HostVCPUsHeader = "vCPUs on host median (CPUs)"
	HostOtherHeader = "other work on host median (CPUs)"
)

// hostCPUsText is a number of host CPUs ("0.74"), "-" where it was not
// recorded (a host cell has no vCPUs).
func hostCPUsText(x analysis.Float) string {
	if math.IsNaN(float64(x)) {
		return "-"
	}
	return strconv.FormatFloat(float64(x), 'f', 2, 64)
}

// shareText is a cell's median CPU share ("99.8%"), "-" where its records
// carry no CPU time.
func shareText(c analysis.Cell) string {
	if c.CPUShare.N == 0 {
		return "-"
	}
	return render.Share(c.CPUShare.Median)
}

// speedText is a cell's median speed in the section's scale, "-" where its
// records carry no CPU time.
func speedText(c analysis.Cell, scale float64) string {
	if c.Speed.N == 0 {
		return "-"
	}
	return sig(float64(c.Speed.Median) / scale)
}

// speedScale is the unit and scale of a section's speeds (work per
// CPU-second), from its largest median speed: "M loops/CPU-s".
func speedScale(sec *section) (string, float64) {
	var largest float64
	for _, c := range sec.cells {
		if m := math.Abs(float64(c.Speed.Median)); !math.IsNaN(m) && !math.IsInf(m, 0) {
			largest = max(largest, m)
		}
	}
	label, scale := units.ScaleRate(sec.unit, largest)
	return strings.TrimSuffix(label, "/s") + "/CPU-s", scale
}

// spreadText is a cell's max/min, marked "!" when its repeats are flagged.
func spreadText(c analysis.Cell) string {
	d := c.Dispersion
	if d.N == 0 || d.MaxMin.IsNaN() {
		return "-"
	}
	s := fmt.Sprintf("%.3g", float64(d.MaxMin))
	if c.Flagged() {
		s += " !"
	}
	return s
}

// cvText is the repeats' coefficient of variation in percent ("2.1%"); "-"
// when undefined (fewer than 2 repeats).
func cvText(d analysis.Dispersion) string {
	if d.N < 2 || d.CV.IsNaN() {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", float64(d.CV)*100)
}

// sig renders x with four significant digits (every integer digit from
// 10000 up), never in exponent form; "-" when it is not a number.
func sig(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	if x == 0 {
		return "0"
	}
	return strconv.FormatFloat(x, 'f', max(0, 3-int(math.Floor(math.Log10(math.Abs(x))))), 64)
}

// QoSNotes are the lines under QoSNotesIntro: why each cell marked
// "(partial)" or "(other class)" is so, one line per target, class and
// reason, sorted; a marked cell whose agent gave no reason says so, so that
// no mark stands without its legend.
func QoSNotes(cells []analysis.Cell) []string {
	notes := map[string]bool{}
	for _, c := range cells {
		for _, r := range c.QoSReasons {
			notes[fmt.Sprintf("%s %s: %s", c.Target, qos.Class(c.QoS), r)] = true
		}
		if len(c.QoSReasons) == 0 && strings.HasSuffix(AppliedText(c), ")") {
			notes[fmt.Sprintf("%s %s: the agent gave no reason", c.Target, qos.Class(c.QoS))] = true
		}
	}
	return slices.Sorted(maps.Keys(notes))
}

// AppliedText says which class the threads ran at: the asked class's name
// when it took fully, with "(partial)" when part of its OS mapping did not,
// "(other class)" when the threads read back as another class; "-" without
// records. Words, not marks: "!" means one thing in every table (the
// repeats disagree, DispersionMark).
func AppliedText(c analysis.Cell) string {
	if len(c.QoSApplied) == 0 {
		return "-"
	}
	names := make([]string, len(c.QoSApplied))
	for i, q := range c.QoSApplied {
		names[i] = qos.Class(q).String()
	}
	s := strings.Join(names, "+")
	switch {
	case len(c.QoSApplied) != 1 || c.QoSApplied[0] != c.QoS:
		return s + " (other class)"
	case c.QoSPartial > 0:
		return s + " (partial)"
	}
	return s
}

// Warnings are the interference warnings and the dispersion warnings of
// the cells (analysis.InterferenceReport, analysis.Dispersion):
// per verdict, those of its workload (and phase), then those of workloads
// that have no verdict, each group in table order.
func Warnings(a Summary) (perVerdict [][]string, rest []string) {
	judged := map[WorkloadPhase]bool{}
	for _, v := range a.Verdicts {
		judged[WorkloadPhase{Workload: v.Host.Workload, Phase: v.Host.Phase}] = true
		perVerdict = append(perVerdict, render.VerdictWarnings(v, a.Cells))
	}
	seen := map[WorkloadPhase]bool{}
	for _, c := range a.Cells {
		k := WorkloadPhase{Workload: c.Workload, Phase: c.Phase}
		if judged[k] || seen[k] {
			continue
		}
		seen[k] = true
		rest = append(rest, render.InterferenceWarnings(a.Cells, k.Workload, k.Phase)...)
		rest = append(rest, render.DispersionWarnings(a.Cells, k.Workload, k.Phase)...)
	}
	return perVerdict, rest
}

// timeSpreadText is ", cv 2.1%, max/min 1.05" for a cell timed in phases
// (compression), from its times; empty for other cells and below 2 repeats.
func timeSpreadText(c analysis.Cell) string {
	d := c.SecondsDispersion
	if d == nil || d.CV.IsNaN() {
		return ""
	}
	s := fmt.Sprintf(", cv %.1f%%, max/min %.3g", float64(d.CV)*100, float64(d.MaxMin))
	if d.Flag != analysis.FlagNone {
		s += " !"
	}
	return s
}

// WriteTerminal prints what a finished run says at a glance: the
// throughput regressions of fp and int in the articles' form, the
// compression times, and one verdict line per workload.
func WriteTerminal(w io.Writer, a Summary) { Plain.WriteTerminal(w, a) }

// WriteTerminal prints the run at a glance (the package's WriteTerminal)
// with each verdict's answer in style s: Colored on a terminal.
func (s Style) WriteTerminal(w io.Writer, a Summary) {
	// Regressions with a line, in the articles' form; for a workload whose
	// series have too few thread counts, one line saying so, not one per
	// series.
	without := map[string]int{}
	var order []string
	for _, reg := range a.Regressions {
		if reg.Workload != catalog.FP && reg.Workload != catalog.Int {
			continue
		}
		if reg.B.IsNaN() {
			if _, ok := without[reg.Workload]; !ok {
				order = append(order, reg.Workload)
			}
			without[reg.Workload] = max(without[reg.Workload], reg.ThreadCounts)
			continue
		}
		fmt.Fprintf(w, "%s %s\n", reg.Workload, render.ClassRegression(reg))
	}
	for _, wl := range order {
		fmt.Fprintf(w, "%s: no regression lines (%s; a line needs %d or more)\n", wl, units.Plural(without[wl], "thread count"), analysis.MinThreadCounts)
	}
	for _, c := range a.Cells {
		if catalog.IsCompression(c.Workload) {
			fmt.Fprintf(w, "%s %s qos %d threads %d: %.2f s median [%.2f..%.2f], n=%s%s\n", c.Target, c.Workload, c.QoS, c.Threads,
				c.Seconds.Median, c.Seconds.Min, c.Seconds.Max, RepeatsText(c), timeSpreadText(c))
		}
	}
	per, rest := Warnings(a)
	for i, v := range a.Verdicts {
		fmt.Fprintln(w, s.TerminalVerdict(v))
		if m := render.MechanismLine(v); m != "" {
			fmt.Fprintf(w, "  mechanism: %s\n", m)
		}
		if o := render.OtherWorkLine(v); o != "" {
			fmt.Fprintf(w, "  host: %s\n", o)
		}
		for _, wl := range per[i] {
			_ = termcolor.Warn(w, "  warning: "+wl, wl) // as every line here, unchecked
		}
		if n := a.Again.NextLine(v.Next); n != "" {
			fmt.Fprintf(w, "  next: %s\n", n)
		}
	}
	for _, wl := range rest {
		_ = termcolor.Warn(w, "warning: "+wl, wl)
	}
	for _, f := range a.Findings {
		fmt.Fprintf(w, "finding: %s\n", render.Finding(f))
	}
}
