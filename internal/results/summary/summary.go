// Package summary writes a run's summary files, summary.json, summary.csv and
// summary.md, from its analysed cells.
package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/atomicfile"
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
// through the one renderer, fitted to TerminalWidth, each verdict's answer
// in its tone, coloured in style Colored: the lines of the run (fp's and
// int's regressions, the compression times), then the verdicts as results
// show lists them (with their next step, mechanism, host and warnings),
// then the other warnings and the findings.
func (s Style) WriteTerminal(w io.Writer, a Summary) {
	var d render.Document
	if lines := a.glanceLines(); len(lines) > 0 {
		d.Add(&render.List{Items: lines})
	}
	per, rest := Warnings(a)
	for i := range per {
		per[i] = termcolor.Untold(w, per[i])
	}
	if len(a.Verdicts) > 0 {
		d.Add(&render.List{Items: a.VerdictItems(per)})
	}
	tail := WarningItems(termcolor.Untold(w, rest))
	for _, f := range a.Findings {
		tail = append(tail, render.Item{Spans: []render.Span{label("finding:"), render.Words(render.Finding(f))}})
	}
	if len(tail) > 0 {
		d.Add(&render.List{Items: tail})
	}
	_ = render.Text(w, d, TerminalWidth, s == Colored) // the run's own stream, as every line of it, unchecked
}

// TerminalWidth is the width WriteTerminal fits the run's summary to.
const TerminalWidth = 100

// glanceLines are the run's lines at a glance: the throughput regressions
// of fp and int in the articles' form (for a workload whose series have
// too few thread counts, one line saying so, not one per series), then
// the compression times.
func (a Summary) glanceLines() []render.Item {
	var items []render.Item
	add := func(format string, args ...any) {
		items = append(items, render.Item{Spans: []render.Span{render.Words(fmt.Sprintf(format, args...))}})
	}
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
		add("%s %s", reg.Workload, render.ClassRegression(reg))
	}
	for _, wl := range order {
		add("%s: no regression lines (%s; a line needs %d or more)", wl, units.Plural(without[wl], "thread count"), analysis.MinThreadCounts)
	}
	for _, c := range a.Cells {
		if catalog.IsCompression(c.Workload) {
			add("%s %s qos %d threads %d: %.2f s median [%.2f..%.2f], n=%s%s", c.Target, c.Workload, c.QoS, c.Threads,
				c.Seconds.Median, c.Seconds.Min, c.Seconds.Max, RepeatsText(c), timeSpreadText(c))
		}
	}
	return items
}
