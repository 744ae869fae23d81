// Package benchdoc is bench's output document: what was asked and applied,
// on what, every record, and the cells summarized from them; and its
// formats (an aligned table, Markdown, JSON, the tidy CSV). A saved bench is
// a results directory like a run's, whose report is package report's.
package benchdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/report"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/termcolor"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/version"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// resultsSchema versions bench's JSON with the results files'.
const resultsSchema = results.SchemaVersion

// BenchFormats are bench's output formats.
var BenchFormats = []string{"table", "json", "csv", "markdown"}

// Bench is bench's JSON output: what was asked, on what, and every record.
type Bench struct {
	SchemaVersion string                    `json:"schema_version"`
	ToolVersion   string                    `json:"tool_version"`
	Started       time.Time                 `json:"started"`
	Finished      time.Time                 `json:"finished"`
	Targets       map[string]any            `json:"targets"`            // target name -> agent Info
	Machines      map[string]hv.MachineInfo `json:"machines,omitempty"` // target name -> VM as the host sees it
	Request       BenchRequest              `json:"request"`
	// Spec is the experiment the flags described, as run.
	Spec       spec.Spec              `json:"spec"`
	Contention *contention.Contention `json:"contention,omitempty"`
	Runs       []BenchRun             `json:"runs"`
	// Cells summarize the samples per cell as summary.json's cells do:
	// n, median, min, max and the median's interval of the total and
	// per-thread rates and of the times, and the repeats' dispersion (cv,
	// max_min, flag); Warnings name the flagged ones.
	Cells    []analysis.Cell  `json:"cells"`
	Warnings []string         `json:"warnings"`
	Samples  []results.Sample `json:"samples"`
	// Results is the results directory of a saved run.
	Results string   `json:"results,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Error   string   `json:"error,omitempty"`

	// warnings are the session's notes that are warnings (their text
	// alone), which the table says under it.
	warnings []string
}

// BenchRequest records the settings as they were applied.
type BenchRequest struct {
	Targets   []string          `json:"targets"`
	VM        *BenchVM          `json:"vm,omitempty"`
	Workloads []string          `json:"workloads"`
	QoS       []int             `json:"qos"`
	Threads   []int             `json:"threads"`
	Loops     map[string]uint64 `json:"loops"`
	// Params are the cells' parameters, in their JSON names, but loops,
	// which Loops holds per workload (the shallower field wins in JSON):
	// Duration is that of the cells that ran for one (fp, int, mmul with
	// --duration), 0 when they ran loops; the compression parameters are
	// those of the compress and decompress cells.
	catalog.Params
	Warmup     int                     `json:"warmup,omitempty"`
	Repeat     int                     `json:"repeat"`
	Contention contention.SpinnerCount `json:"contention"`
	Seed       uint64                  `json:"seed"`
}

// BenchVM is the VM of a vm target as applied.
type BenchVM struct {
	Name      string `json:"name,omitempty"`
	Image     string `json:"image"`
	Store     string `json:"store"`
	CPUs      int    `json:"cpus"`
	MemoryMiB int    `json:"memory_mib"`
	DiskBytes int64  `json:"disk_bytes"`
	Accel     string `json:"accel,omitempty"`
	Backend   string `json:"backend"`
	// Model is the device model asked for, "" for the backend's own.
	Model string `json:"model,omitempty"`
}

// newBenchRequest records a bench spec's settings as applied; name and
// store say which named VM and image store the vm target used.
func newBenchRequest(s spec.Spec, name, store string) BenchRequest {
	r := BenchRequest{Targets: s.Targets, Loops: map[string]uint64{}, Repeat: s.Repeats, Warmup: s.Warmup, Contention: s.Contention, Seed: s.DataSeed}
	if slices.Contains(s.Targets, spec.TargetVM) {
		mem, disk := spec.VMSize(s)
		r.VM = &BenchVM{Name: name, Image: s.VM.Image, Store: store, CPUs: s.VM.CPUs, MemoryMiB: mem, DiskBytes: disk, Accel: s.VM.Accel, Backend: s.VM.Backend, Model: s.VM.Model}
	}
	for _, e := range s.Matrix {
		r.Workloads = append(r.Workloads, e.Workload)
		r.Threads = e.Threads
		r.QoS = r.QoS[:0]
		for _, c := range e.QoS {
			r.QoS = append(r.QoS, int(c))
		}
		switch {
		case e.Duration > 0:
			r.Duration = e.Duration
		case e.Loops == 0:
			for _, k := range catalog.ParamKeys() {
				if k.TakenBy(e.Workload) {
					k.Copy(&r.Params, e.Params)
				}
			}
		default:
			r.Loops[e.Workload] = e.Loops
		}
	}
	return r
}

// NewBench starts bench's document for spec s, as started now; name and
// store say which named VM and image store the vm target uses; results is
// the results directory of a saved run ("" for none).
func NewBench(s spec.Spec, name, store, results string) *Bench {
	return &Bench{SchemaVersion: resultsSchema, ToolVersion: version.String(), Started: time.Now().UTC(), Targets: map[string]any{},
		Request: newBenchRequest(s, name, store), Spec: s, Results: results}
}

// Add records what a session measured and on what.
func (b *Bench) Add(res *experiment.Session) {
	for name, info := range res.Infos {
		b.Targets[name] = agent.InfoJSON(info)
	}
	if len(res.Machines) > 0 {
		b.Machines = res.Machines
	}
	b.Contention = res.Contention
	b.Notes, b.warnings = nil, nil
	for _, n := range res.Notes {
		b.Notes = append(b.Notes, n.String())
		if n.Kind.Warning() {
			b.warnings = append(b.warnings, n.Text)
		}
	}
	for _, r := range res.Runs {
		c := r.Cell
		b.Runs = append(b.Runs, BenchRun{Target: c.Target, Workload: c.Workload, QoS: int(c.QoS), Threads: c.Threads,
			Repeat: c.Repeat, Metrics: r.Metrics, Notes: r.Notes})
		b.Samples = append(b.Samples, r.Samples...)
	}
}

// Finish records when the session ended and the error that stopped it.
func (b *Bench) Finish(err error) {
	b.Finished = time.Now().UTC()
	if err != nil {
		b.Error = err.Error()
	}
}

// BenchRun is one run of a cell: its metrics and notes (the samples carry
// the records).
type BenchRun struct {
	Target   string             `json:"target"`
	Workload string             `json:"workload"`
	QoS      int                `json:"qos"`
	Threads  int                `json:"threads"`
	Repeat   int                `json:"repeat"`
	Metrics  map[string]float64 `json:"metrics,omitempty"`
	Notes    []string           `json:"notes,omitempty"`
}

// WriteBench writes b in format: a table, Markdown, JSON, or the tidy CSV
// of its samples.
func WriteBench(w io.Writer, format string, r *Bench) error {
	switch format {
	case "json":
		doc := *r
		doc.Cells = analysis.SortCells(results.Cells(r.Samples))
		doc.Warnings = []string{}
		for _, c := range doc.Cells {
			if c.Flagged() {
				doc.Warnings = append(doc.Warnings, render.DispersionWarnings([]analysis.Cell{c}, c.Workload, c.Phase)...)
			}
		}
		doc.Cells = render.WithFlags(doc.Cells)
		if doc.Cells == nil {
			doc.Cells = []analysis.Cell{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(&doc)
	case "csv":
		return results.WriteCSV(w, r.Samples)
	case "markdown":
		return writeCells(w, r, true)
	default:
		return writeCells(w, r, false)
	}
}

// rateSpread is a cell's total rate as spread shows it, with the
// coefficient of variation of its repeats ("cv 2.1%") and "!" when they
// disagree (analysis.Dispersion; the warning under the table says how).
func rateSpread(c analysis.Cell, scale float64) string {
	s := spread(c.TotalRate, scale)
	if s == "-" {
		return s
	}
	if cv := c.Dispersion.CV; !cv.IsNaN() {
		s += fmt.Sprintf(" cv %.1f%%", float64(cv)*100)
	}
	if c.Flagged() {
		s += " !"
	}
	return s
}

func spread(s analysis.OrderStats, scale float64) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%s [%s..%s]", units.SI(float64(s.Median)/scale), units.SI(float64(s.Min)/scale), units.SI(float64(s.Max)/scale))
}

// cellRows lays cells out one per row, or, with several targets, one row per
// (workload, qos, threads, phase) with the targets side by side and the ratio
// of each target's median total rate to the first target's.
func cellRows(cells []analysis.Cell, found map[runKey]string) (header []string, rows [][]string) {
	var targets []string
	seen := map[string]bool{}
	for _, c := range cells {
		if !seen[c.Target] {
			seen[c.Target] = true
			targets = append(targets, c.Target)
		}
	}
	slices.SortStableFunc(targets, func(a, b string) int { return analysis.TargetRank(a) - analysis.TargetRank(b) })
	if len(targets) < 2 {
		return oneTargetRows(cells, found)
	}
	return sideBySideRows(cells, targets, found)
}

// phaseText is a cell's phase, or a dash for none.
func phaseText(p string) string {
	if p == "" {
		return "-"
	}
	return p
}

// oneTargetRows lays cells out one per row.
func oneTargetRows(cells []analysis.Cell, found map[runKey]string) (header []string, rows [][]string) {
	header = []string{"target", "workload", "qos", "threads", "phase", "n", "seconds median [min..max]", "total rate", "per-thread rate", "unit", "qos applied"}
	if len(found) > 0 {
		header = append(header, "result")
	}
	for _, c := range cells {
		unit, scale := units.RateUnit(c.Unit)
		row := []string{
			c.Target, c.Workload, fmt.Sprintf("%d %s", c.QoS, qos.Class(c.QoS)), fmt.Sprint(c.Threads), phaseText(c.Phase),
			summary.RepeatsText(c),
			fmt.Sprintf("%.3f [%.3f..%.3f]", c.Seconds.Median, c.Seconds.Min, c.Seconds.Max),
			rateSpread(c, scale), spread(c.ThreadRate, scale), unit, summary.AppliedText(c),
		}
		if len(found) > 0 {
			row = append(row, orDash(found[runKey{c.Target, c.Workload, c.QoS, c.Threads}]))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// rowKey is a row of the side-by-side table.
type rowKey struct {
	workload, phase string
	qos, threads    int
}

// sideBySideRows lays cells out one row per (workload, qos, threads,
// phase), targets side by side in the order given, each later target's
// median total rate over the first's with the test of their repeats.
func sideBySideRows(cells []analysis.Cell, targets []string, found map[runKey]string) (header []string, rows [][]string) {
	var order []rowKey
	byKey := map[rowKey]map[string]analysis.Cell{}
	for _, c := range cells {
		k := rowKey{c.Workload, c.Phase, c.QoS, c.Threads}
		if byKey[k] == nil {
			byKey[k] = map[string]analysis.Cell{}
			order = append(order, k)
		}
		byKey[k][c.Target] = c
	}
	// Each target against the first, with the test of their repeats.
	ratios := map[string]map[analysis.CellKey]analysis.TargetRatio{}
	for _, t := range targets[1:] {
		ratios[t] = map[analysis.CellKey]analysis.TargetRatio{}
		for _, r := range analysis.CompareTargets(cells, targets[0], t) {
			ratios[t][r.CellKey] = r
		}
	}
	header = []string{"workload", "qos", "threads", "phase", "n"}
	for _, t := range targets {
		header = append(header, t+" seconds", t+" total rate")
	}
	for _, t := range targets[1:] {
		header = append(header, t+"/"+targets[0])
	}
	header = append(header, "unit", "qos applied")
	if len(found) > 0 {
		header = append(header, "result")
	}
	for _, k := range order {
		rows = append(rows, sideBySideRow(k, byKey[k], targets, ratios, found))
	}
	return header, rows
}

// sideBySideRow is row k of the side-by-side table: its targets' cells
// (a dash for one a target lacks), the ratios to the first target, and
// the results found.
func sideBySideRow(k rowKey, byTarget map[string]analysis.Cell, targets []string,
	ratios map[string]map[analysis.CellKey]analysis.TargetRatio, found map[runKey]string) []string {
	row := []string{k.workload, fmt.Sprintf("%d %s", k.qos, qos.Class(k.qos)), fmt.Sprint(k.threads), phaseText(k.phase)}
	var ns, applied []string
	unit := "-"
	for _, t := range targets {
		c, ok := byTarget[t]
		if !ok {
			continue
		}
		ns = append(ns, summary.RepeatsText(c))
		applied = append(applied, t+" "+summary.AppliedText(c))
	}
	row = append(row, strings.Join(ns, "/"))
	for _, t := range targets {
		c, ok := byTarget[t]
		if !ok {
			row = append(row, "-", "-")
			continue
		}
		var scale float64
		unit, scale = units.RateUnit(c.Unit)
		row = append(row, fmt.Sprintf("%.3f", c.Seconds.Median), rateSpread(c, scale))
	}
	for _, t := range targets[1:] {
		r, ok := ratios[t][analysis.CellKey{Target: t, Workload: k.workload, Phase: k.phase, QoS: k.qos, Threads: k.threads}]
		if !ok || r.Ratio.IsNaN() || math.IsInf(float64(r.Ratio), 0) {
			row = append(row, "-")
			continue
		}
		row = append(row, fmt.Sprintf("%.3fx %s", float64(r.Ratio), render.FormatSignificance(r.Test.P, analysis.Alpha)))
	}
	row = append(row, unit, strings.Join(applied, ", "))
	if len(found) > 0 {
		var res []string
		for _, t := range targets {
			if f := found[runKey{t, k.workload, k.qos, k.threads}]; f != "" {
				res = append(res, t+" "+f)
			}
		}
		row = append(row, orDash(strings.Join(res, ", ")))
	}
	return row
}

// runKey names a cell's runs.
type runKey struct {
	target, workload string
	qos, threads     int
}

// findings are what a cell computed beside its rate, from the runs'
// metrics, by cell: pi's estimate and its error, and the compression ratio
// (medians over the repeats).
func findings(runs []BenchRun) map[runKey]string {
	metrics := map[runKey]map[string][]float64{}
	for _, r := range runs {
		k := runKey{r.Target, r.Workload, r.QoS, r.Threads}
		if metrics[k] == nil {
			metrics[k] = map[string][]float64{}
		}
		for name, v := range r.Metrics {
			metrics[k][name] = append(metrics[k][name], v)
		}
	}
	out := map[runKey]string{}
	for k, m := range metrics {
		switch {
		case len(m["pi_estimate"]) > 0:
			out[k] = fmt.Sprintf("pi %.6f (error %.2g)", analysis.OrderStatsOf(m["pi_estimate"]).Median, analysis.OrderStatsOf(m["pi_error"]).Median)
		case len(m["compression_ratio"]) > 0:
			out[k] = fmt.Sprintf("ratio %.2f:1", analysis.OrderStatsOf(m["compression_ratio"]).Median)
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeCells writes bench's table, as Markdown or aligned text, and what
// is to be known to read it under it.
func writeCells(w io.Writer, r *Bench, markdown bool) error {
	cells := analysis.SortCells(results.Cells(r.Samples))
	header, rows := cellRows(cells, findings(r.Runs))
	if err := writeTable(w, header, rows, markdown); err != nil {
		return err
	}
	writeUnderTable(w, r, cells, markdown)
	return nil
}

// writeTable writes rows under header as a Markdown table or as columns
// aligned with spaces; "no cells finished" when there are none.
func writeTable(w io.Writer, header []string, rows [][]string, markdown bool) error {
	switch {
	case len(rows) == 0:
		fmt.Fprintln(w, "no cells finished")
	case markdown:
		fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
		fmt.Fprintln(w, "|"+strings.Repeat("---|", len(header)))
		for _, row := range rows {
			fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
		}
	default:
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
		for _, row := range rows {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		return tw.Flush()
	}
	return nil
}

// writeUnderTable writes the lines under bench's table: the legends of
// "!" and of idle repeats, the classes not applied, the runs' notes, the contention, the
// device models, the warnings, and whether the run stopped early.
func writeUnderTable(w io.Writer, r *Bench, cells []analysis.Cell, markdown bool) {
	lines := summary.QoSNotes(cells)
	// bullet starts a line under a heading line, lead a line of its own.
	bullet, lead := "  ", ""
	if markdown {
		bullet, lead = "- ", "- "
		fmt.Fprintln(w)
	}
	for _, c := range cells {
		if c.Flagged() {
			fmt.Fprintln(w, lead+summary.DispersionMark)
			break
		}
	}
	for _, c := range cells {
		if c.Idle() > 0 {
			fmt.Fprintln(w, lead+summary.IdleNote)
			break
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, lead+summary.QoSNotesIntro)
		for _, l := range lines {
			fmt.Fprintln(w, bullet+l)
		}
	}
	runNotes := map[string]bool{}
	for _, run := range r.Runs {
		for _, n := range run.Notes {
			runNotes[n] = true
		}
	}
	lines = lines[:0]
	for n := range runNotes {
		lines = append(lines, n)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, bullet+"note: "+l)
	}
	if r.Contention != nil {
		fmt.Fprintf(w, "%scontention: %s ran on the host, outside the agents, throughout\n", lead, r.Contention.Text())
	}
	var targets []string
	for t := range r.Machines {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		if line := report.ModelLine(t, r.Machines[t]); line != "" {
			fmt.Fprintf(w, "%s%s\n", lead, line)
		}
	}
	// The run's warnings (a cell too short to mean anything) were said as
	// it ran; under the table they are where the numbers are read.
	for _, n := range r.warnings {
		_ = termcolor.Warn(w, lead+"warning: "+n, n) // as every line here, unchecked: WriteBench's caller sees w's error
	}
	for _, c := range cells {
		if c.Flagged() {
			n := render.DispersionWarnings([]analysis.Cell{c}, c.Workload, c.Phase)[0]
			_ = termcolor.Warn(w, lead+"warning: "+n, n)
		}
	}
	if r.Error != "" {
		// The error itself is qoslab's last word (and in the JSON): not
		// printed twice.
		fmt.Fprintf(w, "incomplete: %s finished before the run stopped\n", units.Plural(len(r.Runs), "cell run"))
	}
}

// RunText is one cell run's elapsed time and total rate, for a log line:
// "0.512 s, 3.9M loops/s" (each phase of compression).
func RunText(samples []results.Sample) string {
	var parts []string
	for _, c := range results.Cells(samples) {
		unit, scale := units.RateUnit(c.Unit)
		p := fmt.Sprintf("%.3f s, %s %s", float64(c.Seconds.Median), units.SI(float64(c.TotalRate.Median)/scale), unit)
		if c.Phase != "" {
			p = c.Phase + " " + p
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "no records"
	}
	return strings.Join(parts, "; ")
}

// CheckWritable fails when a file cannot be created at path, so that a
// run is not measured for an output it cannot keep.
func CheckWritable(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// WriteBenchFile writes b in format to path, whole or not at all, then the
// table to out; when path cannot be written, the format goes to out
// instead, so nothing measured is lost, and log says so.
func WriteBenchFile(out, log io.Writer, path, format string, b *Bench) error {
	var buf bytes.Buffer
	err := WriteBench(&buf, format, b)
	if err == nil {
		err = atomicfile.Write(path, buf.Bytes())
	}
	if err != nil {
		fmt.Fprintf(log, "qoslab: --out %s failed (%v); writing %s to stdout instead\n", path, err, format)
		if _, werr := out.Write(buf.Bytes()); werr != nil {
			return fmt.Errorf("%w; and stdout: %w", err, werr)
		}
		return err
	}
	fmt.Fprintf(log, "wrote %s (%s, %d records)\n", path, format, len(b.Samples))
	return WriteBench(out, "table", b)
}
