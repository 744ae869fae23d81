// Package report writes a run's report: report.html, one self-contained file
// with inline SVG charts, and report.md, the same text linking PNG charts.
package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/plot"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/shquote"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
)

// markdownFile is the Markdown twin of results.ReportFile.
const markdownFile = "report.md"

// Report is everything a run's report shows, read from its results
// directory.
type Report struct {
	// Path is the results directory.
	Path    string
	Run     results.Run
	Summary summary.Summary
	Tables  []summary.Table
	Charts  []plot.Chart
	Skipped []plot.Skipped
	// Notes are what the reader should know about the data itself: a torn
	// end, skipped telemetry lines.
	Notes []string
	// TelemetryNotes are the run's notes about telemetry (a target that
	// could not sample, and how to enable it), shown with the telemetry.
	TelemetryNotes []string
	// Samples counts the run's samples.
	Samples int
}

// Load reads the results directory at path (results.Load) and draws its
// charts.
func Load(path string) (*Report, error) {
	l, err := results.Load(path)
	if err != nil {
		return nil, err
	}
	return newReport(l), nil
}

// newReport analyzes a loaded results directory and draws its charts.
func newReport(l *results.Loaded) *Report {
	r := &Report{Path: l.Path, Run: l.Run, Notes: l.Notes, TelemetryNotes: l.TelemetryNotes(), Samples: len(l.Samples)}
	r.Summary = summary.Of(l)
	r.Tables = summary.Tables(r.Summary)
	r.Charts, r.Skipped = plot.Charts(plot.Input{Name: l.Run.Name, Samples: l.Samples, Summary: r.Summary, Telemetry: l.Telemetry})
	return r
}

// Publish reads the results directory at path once and writes everything
// made from it: summary.{json,csv,md}, the charts and report.{html,md}. It
// prints to w the directory, the terminal summary (summary.WriteTerminal,
// the verdicts' answers in style) and where the report is, and to notes
// what a reader should know about the data (a torn end). Failing to draw the report loses no measurement:
// `qoslab report DIR` draws it again.
func Publish(path string, w, notes io.Writer, style summary.Style) (*Report, error) {
	r, err := Load(path)
	if err != nil {
		return nil, err
	}
	for _, n := range r.Notes {
		fmt.Fprintln(notes, "note: "+n)
	}
	if err := summary.Write(r.Path, r.Summary); err != nil {
		return r, fmt.Errorf("write summaries: %w", err)
	}
	fmt.Fprintf(w, "results: %s (%s)\n", r.Path, units.Plural(r.Samples, "sample"))
	style.WriteTerminal(w, r.Summary)
	if _, err := r.Write(); err != nil {
		return r, fmt.Errorf("write report: %w (the results are kept; draw it again with qoslab report %s)", err, r.Path)
	}
	fmt.Fprintf(w, "report: %s\n", filepath.Join(r.Path, results.ReportFile))
	return r, nil
}

// Write writes the PNG charts into DIR/plots, then report.html and report.md,
// each file replaced atomically. It returns the paths written.
func (r *Report) Write() ([]string, error) {
	paths, err := plot.WriteAll(filepath.Join(r.Path, results.PlotsDir), r.Charts, "png")
	if err != nil {
		return paths, err
	}
	var html, md bytes.Buffer
	if err := r.WriteHTML(&html); err != nil {
		return paths, fmt.Errorf("render %s: %w", results.ReportFile, err)
	}
	if err := r.WriteMarkdown(&md); err != nil {
		return paths, fmt.Errorf("render %s: %w", markdownFile, err)
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{results.ReportFile, html.Bytes()}, {markdownFile, md.Bytes()}} {
		p := filepath.Join(r.Path, f.name)
		if err := atomicfile.Write(p, f.b); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// Field is one line of a machine's description.
type Field struct{ Key, Value string }

// Machine is one target's agent Info, as key and value lines.
type Machine struct {
	Target string
	Fields []Field
}

// Machines lists each target's Info in target order (host first), every
// top-level field it recorded as text.
func (r *Report) Machines() []Machine {
	var out []Machine
	for _, t := range r.targets() {
		m := Machine{Target: t}
		for _, f := range r.Run.Targets[t].Fields() {
			m.Fields = append(m.Fields, Field{f.Key, f.Text()})
		}
		out = append(out, m)
	}
	return out
}

// targets are the run's targets in target order (host first).
func (r *Report) targets() []string {
	var names []string
	for t := range r.Run.Targets {
		names = append(names, t)
	}
	sort.Slice(names, func(i, j int) bool {
		return analysis.TargetRank(names[i]) < analysis.TargetRank(names[j]) || analysis.TargetRank(names[i]) == analysis.TargetRank(names[j]) && names[i] < names[j]
	})
	return names
}

// SpecText is the spec as run, as a spec file (spec.Encode) that `qoslab
// run --spec` takes; a spec that cannot be written as one (run.json has
// none) is shown as recorded.
func (r *Report) SpecText() string {
	if !r.Run.Spec.Present() {
		return r.Run.Spec.Text()
	}
	b, err := spec.Encode(r.Run.Spec.Value())
	if err != nil {
		return r.Run.Spec.Text()
	}
	if r.Run.Spec.Value().Quick {
		return "# shrunk by --quick: its loops and sizes as it ran them\n" + string(b)
	}
	return string(b)
}

// SpecAgain says how to run the spec again: from the results directory, or
// from the spec written to a file.
func (r *Report) SpecAgain() string {
	return "Run it again, with a new seed: qoslab run --again " + shquote.Quote(r.Path) + "; or save it as a file for qoslab run --spec FILE."
}

// Platform says, in one sentence, what machines the numbers come from, so a
// Linux run is never read as an Apple silicon one.
func (r *Report) Platform() string { return strings.Join(r.platformSentences(), " ") }

// platformSentences are Platform's sentences: what each machine is, what
// device model ran a VM when not its backend's own, and that the host is
// not a Mac on Apple silicon when it is not; the comparison says those
// every run shares once.
func (r *Report) platformSentences() []string {
	var parts []string
	apple := false
	for _, t := range r.targets() {
		info := r.Run.Targets[t].Value()
		desc := strings.TrimSpace(info.OS + "/" + info.Arch)
		if info.CPUModel != "" {
			desc += ", " + info.CPUModel
		}
		if info.LogicalCPUs > 0 { // 0: not recorded
			desc += fmt.Sprintf(", %d logical CPUs", info.LogicalCPUs)
		}
		if info.Virtualized {
			desc += ", virtualized"
			if info.Virtualization != "" {
				desc += " (" + info.Virtualization + ")"
			}
		}
		parts = append(parts, t+": "+desc)
		if info.OS == "darwin" && info.Arch == "arm64" && t == "host" {
			apple = true
		}
	}
	if len(parts) == 0 {
		return []string{"No machine information was recorded."}
	}
	out := []string{"Measured on " + strings.Join(parts, "; ") + "."}
	if m := modelSentence(r.Run.Machines.Value()); m != "" {
		out = append(out, m)
	}
	if !apple {
		out = append(out, "The host is not a Mac on Apple silicon: these are not Apple silicon results, and QoS here maps to Linux scheduling classes (see the QoS applied columns).")
	}
	return out
}

// modelSentence says which VM ran in another device model than its
// backend's own (run.json's machines), "" when none did: results from the
// vz model are QEMU's, never Virtualization.framework's.
func modelSentence(byTarget map[string]hv.MachineInfo) string {
	var names []string
	for t := range byTarget {
		names = append(names, t)
	}
	sort.Strings(names)
	var out []string
	for _, t := range names {
		if line := ModelLine(t, byTarget[t]); line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, " ")
}

// ModelLine says, for a VM in a device model other than its backend's own,
// what ran it: "vm: qemu (tcg), device model vz: ...". "" for the
// backend's own model.
func ModelLine(target string, mi hv.MachineInfo) string {
	if mi.Model == "" {
		return ""
	}
	line := fmt.Sprintf("%s: %s (%s), device model %s", target, mi.Backend, mi.Accel, mi.Model)
	if mi.Model == hv.ModelVZ {
		line += ": the guest laid out as Virtualization.framework lays it out, emulated by " + mi.Backend + "; a test of the guest a Mac boots, not a measurement of Virtualization.framework or of a Mac."
	} else {
		line += "."
	}
	return line
}

// VerdictLine is one workload's verdict, named, with what happened to
// its threads (the mechanism line) and the warnings of its workload.
type VerdictLine struct {
	Text      string
	Mechanism string
	// OtherWork is what the host's other work took (empty on an idle host
	// or without the host's view).
	OtherWork string
	// Next is the command that would decide an undecided verdict
	// (summary.Again.NextLine); empty when there is none.
	Next string
	// NextCommand and NextRest are Next's command and the words after it,
	// for the HTML report, which shows the command as code.
	NextCommand, NextRest string
	Warnings              []string
}

// VerdictLines are the verdicts as the report shows them: "fp: QoS
// subsumed in VM: yes (...)", each with its mechanism and warnings.
func (r *Report) VerdictLines() []VerdictLine {
	per, _ := summary.Warnings(r.Summary)
	out := make([]VerdictLine, len(r.Summary.Verdicts))
	for i, v := range r.Summary.Verdicts {
		out[i] = VerdictLine{Text: summary.VerdictText(v), Mechanism: render.MechanismLine(v), OtherWork: render.OtherWorkLine(v), Next: r.Summary.Again.NextLine(v.Next), Warnings: per[i]}
		out[i].NextCommand, out[i].NextRest = r.Summary.Again.NextParts(v.Next)
	}
	return out
}

// VerdictRule says what SI is, the margins the verdicts used and the
// test's level (render.VerdictRule).
func (r *Report) VerdictRule() string { return render.VerdictRule(r.Summary.Margins) }

// Contention says how the host was loaded while the cells ran: how many
// spinners, the CPU each was pinned to and their class; empty when none ran.
func (r *Report) Contention() string {
	if r.Run.Contention.IsZero() {
		return ""
	}
	c := r.Run.Contention.Value()
	return "Contention: " + c.Text() + " ran on the host, outside the agents, throughout."
}

// Status says whether the run finished, and when.
func (r *Report) Status() string {
	run := r.Run
	switch {
	case run.Interrupted != nil:
		return fmt.Sprintf("started %s, %s at %s before finishing: the report covers the cells finished so far", run.Started.UTC().Format("2006-01-02 15:04:05Z"), run.Error, run.Interrupted.UTC().Format("2006-01-02 15:04:05Z"))
	case run.Finished == nil:
		return fmt.Sprintf("started %s, not finished (still running, or it crashed): the report covers the cells finished so far", run.Started.UTC().Format("2006-01-02 15:04:05Z"))
	case run.Error != "":
		return fmt.Sprintf("started %s, stopped %s before finishing: %s", run.Started.UTC().Format("2006-01-02 15:04:05Z"), run.Finished.UTC().Format("2006-01-02 15:04:05Z"), run.Error)
	}
	return fmt.Sprintf("started %s, finished %s (%s)", run.Started.UTC().Format("2006-01-02 15:04:05Z"), run.Finished.UTC().Format("2006-01-02 15:04:05Z"),
		run.Finished.Sub(run.Started).Round(1e9))
}
