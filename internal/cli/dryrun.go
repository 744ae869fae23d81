package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
	"slices"
)

// runDryRun prints what run would do with o, and does none of it.
func runDryRun(o *runOptions) error {
	var s spec.Spec
	var err error
	var source string
	if o.Resume != "" {
		s, err = experiment.RecordedSpec(o.Resume)
		source = "the spec " + o.Resume + " started with"
	} else {
		s, source, err = o.newSpec()
	}
	if err != nil {
		return err
	}
	d, err := experiment.PlanDryRun(s, o.VMEnv, o.Resume, results.Paths(o.Results))
	if err != nil {
		return err
	}
	d.Chosen, d.Unfit = o.defaultWhy, o.unfit(s, d.Spinners)
	printDryRun(o.IO.Out, d, fmt.Sprintf("%s (%s)", s.Name, source), d.Writes(o.Results, o.Resume))
	return nil
}

// benchDryRun prints what bench would do with o (the experiment s), and
// does none of it.
func benchDryRun(o *benchOptions, s spec.Spec) error {
	d, err := experiment.PlanDryRun(s, o.VMEnv, "", results.Paths(o.Results))
	if err != nil {
		return err
	}
	var writes []string
	if o.Save {
		writes = d.Writes(o.Results, "")
	}
	switch {
	case o.Out != "":
		writes = append(writes, o.Out+" ("+o.Format+")")
	case o.Save:
		writes = append(writes, "and the "+o.Format+" to stdout")
	default:
		writes = append(writes, "nothing: the "+o.Format+" goes to stdout")
	}
	printDryRun(o.IO.Out, d, "bench", writes)
	return nil
}

// printDryRun prints a dry run's plan: what would run where, for how long,
// and what would be written.
func printDryRun(w io.Writer, d *experiment.DryRun, what string, writes []string) {
	s := d.Spec
	if d.Estimate.Calibrated > 0 {
		// A calibration ran the loops of some cells briefly in this
		// process, to estimate them; nothing else was measured.
		fmt.Fprintf(w, "dry run of %s: nothing is started or written; only a short calibration was measured\n", what)
	} else {
		fmt.Fprintf(w, "dry run of %s: nothing is measured, started or written\n", what)
	}
	if d.Chosen != "" {
		printDryRunLine(w, "experiment:", fmt.Sprintf("%s (chosen: %s)", s.Name, d.Chosen))
	}
	if d.Unfit != "" {
		printDryRunLine(w, "warning:", d.Unfit)
	}
	quick := "no"
	if s.Quick {
		quick = "yes (loops and sizes shrunk for a smoke run)"
	}
	printDryRunLine(w, "quick:", quick)
	printDryRunLine(w, "targets:", strings.Join(s.Targets, ", "))
	if d.VM != nil {
		printDryRunVM(w, d.VM)
	}
	printDryRunPlan(w, d)
	fmt.Fprintln(w)
	printDryRunSeries(w, d)
	fmt.Fprintln(w)
	printDryRunEstimate(w, d)
	fmt.Fprintln(w, "writes:")
	for _, p := range writes {
		fmt.Fprintln(w, "  "+p)
	}
	printDryRunOrder(w, d)
}

// printDryRunLine prints a labelled line of the plan, wrapped to
// defaultWidth with its continuations under its text.
func printDryRunLine(w io.Writer, label, text string) {
	const indent = "            " // the width of "experiment: "
	for i, l := range wrapWords(textWords(text), defaultWidth-len(indent)) {
		if i == 0 {
			fmt.Fprintf(w, "%-*s%s\n", len(indent), label, l)
			continue
		}
		fmt.Fprintln(w, indent+l)
	}
}

// printDryRunVM prints the VM a dry run would boot, or the named VM it
// would measure in.
func printDryRunVM(w io.Writer, v *experiment.VMPlan) {
	if v.Named != "" {
		printDryRunLine(w, "vm:", fmt.Sprintf("the named VM %s, as it runs (qoslab vm status %s)", v.Named, v.Named))
		return
	}
	img := v.Image
	if v.Kernel != "" {
		img += ", kernel " + v.Kernel
	}
	if v.ImageProblem != "" {
		img += " (" + v.ImageProblem + ")"
	}
	backend := v.Backend
	if v.Model != "" {
		backend += ", device model " + v.Model
	}
	printDryRunLine(w, "vm:", fmt.Sprintf("%s, image %s", backend, img))
	printDryRunLine(w, "vm size:", fmt.Sprintf("%d vCPUs, %d MiB memory, %s scratch disk", v.CPUs, v.MemoryMiB, units.FormatBytes(v.DiskBytes)))
	if v.AccelProblem != "" {
		printDryRunLine(w, "accel:", fmt.Sprintf("cannot boot: %s", v.AccelProblem))
	} else {
		printDryRunLine(w, "accel:", fmt.Sprintf("%s (%s)", v.Accel, v.AccelWhy))
	}
	for _, n := range v.Notes {
		printDryRunLine(w, "note:", n)
	}
}

// printDryRunPlan prints the contention and how many cells would run, in
// what order, and what a resume skips.
func printDryRunPlan(w io.Writer, d *experiment.DryRun) {
	s := d.Spec
	switch {
	case d.Spinners == 0:
		printDryRunLine(w, "contention:", "none")
	case len(d.SpinnerCPUs) > 0:
		printDryRunLine(w, "contention:", fmt.Sprintf("%s at the default class on the host, pinned to CPUs %s", units.Plural(d.Spinners, "spinner thread"), intList(d.SpinnerCPUs)))
	default:
		printDryRunLine(w, "contention:", fmt.Sprintf("%s at the default class on the host", units.Plural(d.Spinners, "spinner thread")))
	}
	timed := 0
	for _, c := range d.Cells {
		if c.Timed() {
			timed++
		}
	}
	order := s.Order
	if s.Order != spec.OrderSequential {
		order += ": shuffled per repeat, targets alternating"
		if !d.Seeded {
			order += "; the seed is picked when the run starts, so the order below is one example"
		}
	}
	printDryRunLine(w, "cells:", fmt.Sprintf("%s (%s), %s, %s; order %s", units.Plural(len(d.Series), "cell"), units.Plural(s.Repeats, "repeat"),
		units.Plural(timed, "timed run"), units.Plural(len(d.Cells)-timed, "warm-up"), order))
	if d.Done > 0 {
		printDryRunLine(w, "resume:", fmt.Sprintf("%s measured already are skipped", units.Plural(d.Done, "cell run")))
	}
	switch {
	case len(d.Looks) > 1:
	case s.MaxRepeats <= s.Repeats:
		printDryRunLine(w, "looks:", fmt.Sprintf("one: the planned repeats decide (max_repeats %d)", s.MaxRepeats))
		return
	default:
		printDryRunLine(w, "looks:", "one: no verdict to decide, the run does not measure both host and vm")
		return
	}
	printDryRunLine(w, "looks:", fmt.Sprintf("up to %s per cell when a verdict is undecided: %d looks (at %s repeats)",
		units.Plural(d.Looks[len(d.Looks)-1], "repeat"), len(d.Looks), intList(d.Looks)))
}

// printDryRunSeries prints the table of cells: each one's runs, how long
// one takes and what says so. A FROM longer than a few words is a numbered
// note under the table, once for every cell it is of, so the table keeps
// to a row per cell within the width.
func printDryRunSeries(w io.Writer, d *experiment.DryRun) {
	t := &render.Table{Columns: []render.Column{{Head: "#", Right: true}, {Head: "TARGET"}, {Head: "WORKLOAD"}, {Head: "QOS"},
		{Head: "THREADS", Right: true}, {Head: "WORK", Wrap: true}, {Head: "RUNS"}, {Head: "EACH"}, {Head: "FROM", Wrap: true}}}
	var notes []string
	for i, sp := range d.Series {
		c := sp.Cell
		runs := strconv.Itoa(sp.Runs)
		if sp.Warmups > 0 {
			runs += fmt.Sprintf(" + %d warm-up", sp.Warmups)
		}
		each, from := seriesEach(sp)
		if len(from) > shortFrom {
			n := slices.Index(notes, from)
			if n < 0 {
				notes, n = append(notes, from), len(notes)
			}
			from = fmt.Sprintf("[%d]", n+1)
		}
		t.Rows = append(t.Rows, render.TextCells(strconv.Itoa(i+1), c.Target, c.Workload, fmt.Sprintf("%d %s", int(c.QoS), c.QoS),
			strconv.Itoa(c.Threads), experiment.WorkText(c), runs, each, from))
	}
	_ = render.Text(w, render.Document{Blocks: []render.Block{t}}, defaultWidth, false) // the plan's stream: nothing to do if it fails
	for i, n := range notes {
		printDryRunLine(w, fmt.Sprintf("  [%d]", i+1), n)
	}
}

// shortFrom is the longest FROM the table holds itself ("its duration").
const shortFrom = 24

// seriesEach is how long one run of a cell takes, and what says so.
func seriesEach(sp experiment.SeriesPlan) (each, from string) {
	switch {
	case sp.Source == "duration":
		return roundDuration(sp.Each).String(), "its duration"
	case sp.Each > 0 && sp.How != "":
		return roundDuration(sp.Each).String(), sp.How
	case sp.Each > 0:
		return roundDuration(sp.Each).String(), sp.Source
	}
	return "unknown", sp.Why
}

// printDryRunEstimate prints how long the plan would take: what earlier
// runs measured, the overhead beyond it, and the VM's boot.
func printDryRunEstimate(w io.Writer, d *experiment.DryRun) {
	e := d.Estimate
	total, exact := e.Total(len(d.Cells))
	measured := roundDuration(e.Known).String() + " measured"
	if e.Calibrated > 0 {
		measured = fmt.Sprintf("%s estimated (%s of it from a brief calibration on this host, not a measurement)",
			roundDuration(e.Known), roundDuration(e.Calibrated))
	}
	switch {
	case e.Unknown > 0 && e.Known == 0:
		measured = fmt.Sprintf("unknown: %s of fixed work that nothing here can time (FROM says why)", units.Plural(e.Unknown, "cell run"))
	case e.Unknown > 0:
		measured += fmt.Sprintf(" for the cell runs whose time is known, and %s of unknown length (FROM says why)", units.Plural(e.Unknown, "cell run"))
	}
	printDryRunLine(w, "estimate:", measured)
	switch {
	case e.PerRunOverhead > 0 && exact:
		printDryRunLine(w, "", fmt.Sprintf("about %s in all: %s per cell run beyond its measured time in %s", roundDuration(total), roundDuration(e.PerRunOverhead), e.OverheadFrom))
	case e.PerRunOverhead > 0:
		printDryRunLine(w, "", fmt.Sprintf("at least %s: %s per cell run beyond its measured time in %s, and the unknown runs on top", roundDuration(total), roundDuration(e.PerRunOverhead), e.OverheadFrom))
	default:
		printDryRunLine(w, "", "plus starting the targets and each cell run's orchestration (unknown: no earlier run of this spec ran in one go)")
	}
	switch {
	case d.VM == nil || d.VM.Named != "":
	case e.Boot > 0:
		printDryRunLine(w, "", fmt.Sprintf("including the VM's boot (%s there)", roundDuration(e.Boot)))
	default:
		printDryRunLine(w, "", "plus the VM's boot")
	}
	printDryRunLongest(w, d)
}

// printDryRunLongest prints the longest the run could take: every cell at
// the cap's repeats, when the run may add repeats.
func printDryRunLongest(w io.Writer, d *experiment.DryRun) {
	if len(d.Looks) < 2 {
		return
	}
	l := d.Longest
	at := fmt.Sprintf("every cell at %s (%s)", units.Plural(d.Looks[len(d.Looks)-1], "repeat"), units.Plural(d.LongestRuns, "cell run"))
	total, exact := l.Total(d.LongestRuns)
	switch {
	case l.Known == 0 && l.Unknown > 0:
		printDryRunLine(w, "longest:", fmt.Sprintf("%s, of unknown length", at))
	case l.Unknown > 0 || l.PerRunOverhead == 0:
		how := "measured"
		if l.Calibrated > 0 {
			how = "estimated"
		}
		printDryRunLine(w, "longest:", fmt.Sprintf("%s: %s %s, and what is unknown on top", at, roundDuration(l.Known), how))
	case exact:
		printDryRunLine(w, "longest:", fmt.Sprintf("%s: about %s in all", at, roundDuration(total)))
	}
}

// printDryRunOrder prints the cell runs of the first repeat to run, in
// the order they would run.
func printDryRunOrder(w io.Writer, d *experiment.DryRun) {
	if len(d.Cells) == 0 {
		return
	}
	first := d.Cells[0].Repeat
	if first == 0 {
		first = 1
	}
	how := "every repeat runs in this order"
	if d.Spec.Order != spec.OrderSequential {
		how = "each repeat is shuffled anew"
	}
	fmt.Fprintf(w, "\norder of repeat %d (%s):\n", first, how)
	for i, c := range d.Cells {
		if c.Repeat > first {
			break
		}
		fmt.Fprintf(w, "  %d. %s\n", i+1, c)
	}
}

// roundDuration keeps a duration's two most significant units' worth.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func intList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}
