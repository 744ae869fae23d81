package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
)

// compareOptions are `qoslab compare`'s inputs: two or more results
// directories, the first the baseline.
type compareOptions struct {
	resultsOptions
	// Labels are --label NAME=DIR values: NAME heads DIR's column.
	Labels []string
	// Missing are --missing NAME=REASON values: runs meant to be compared
	// that are not there (the fleet playbook's hosts that did not come
	// back), named above the rows.
	Missing []string
	Format  string
	// Layout is --layout: how the tables set the runs out (compare.Layouts;
	// "" for columns up to compare.MaxColumns runs, rows beyond).
	Layout string
	// FailOn, when set (--fail-on), makes compare exit exitNo on a
	// significant change beyond it.
	FailOn *failOn

	failOn string
}

// newCmdCompare builds `qoslab compare DIR DIR [DIR...]`.
func newCmdCompare(f *Factory, runF func(context.Context, *compareOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compare DIR DIR [DIR...]",
		Short: "Compare runs: the verdict per machine, then cell by cell, benchstat style (machines, OS versions, hypervisors)",
		Long: `compare sets two or more results directories side by side, the first the
baseline. It leads with the verdict per machine: a row per run (and judged
workload) in the order given, with its label, CPU, OS version, VM backend and
model, the verdict with its subsumption index (SI) and interval, and the host's
and the VM's ratio of the highest class over the lowest; machine columns that
every run shares are said once above the rows.

Then the cells, one column per run up to 4 runs, one row per run and cell
beyond (or as --layout rows|columns asks), so that the table's width does not
grow with the fleet. Each cell (workload, target, QoS, threads) shows its median
total rate with the half-width of its 95% interval, and each later run its change
against the baseline, "~" where a Mann-Whitney U test of the repeats finds none.
A geometric-mean row per target closes each workload; the findings follow (the
subsumption index with its interval and verdict, each target's QoS sensitivity).
A cell a run lacks is shown as missing. When the runs differ in what shapes the
numbers (spec, contention, loops or durations, sizes, quick, acceleration), the
table says so above the rows.

Columns are labelled with the host's name from run.json, or with the run's start
time when runs share a host (never with a target's name, host or vm); --label
NAME=DIR sets one. A --quick run's column is marked (quick), one that did not
finish every cell (partial). Two arguments that are one run get a note.

The default format, text, fits the terminal's width (100 columns when stdout is
not a terminal): prose wraps, three or four runs get a row per cell where their
columns would be too wide (unless --layout says), and on a terminal each run's
verdict is coloured by its outcome. --format md is compare.md, as report
--compare writes it; csv and json hold every number. table and markdown, the
formats' names before, still name text and md.

With --fail-on PCT, compare exits 3 when any cell's change against the baseline
(or any QoS sensitivity's) is significant and larger than PCT percent either way,
a decrease counted by its ratio form (-50% is 2x, so --fail-on 100 catches it);
PCT may be written as a ratio, 2x. Exit status: 0 done, 1 a failure, 2 a usage
error, 3 a change beyond --fail-on.`,
		Example: `  qoslab compare fleet-results/mini/contention-* fleet-results/studio/contention-*
  qoslab compare --label M1=a --label M4=b a b --format md
  qoslab compare --fail-on 10 baseline-run new-run`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return wrapUsage(fmt.Errorf("compare needs two or more results directories, the first the baseline; got %d", len(args)))
			}
			return nil
		},
	}
	o := &compareOptions{}
	cmd.Flags().StringArrayVar(&o.Labels, "label", nil, "NAME=DIR: head DIR's column with NAME (repeatable)")
	cmd.Flags().StringArrayVar(&o.Missing, "missing", nil, "NAME=REASON: a run meant to be compared that is not there, named with why above the rows (repeatable)")
	cmd.Flags().StringVar(&o.Format, "format", render.FormatText, "output format: "+strings.Join(render.Formats, ", ")+
		" (text fits the terminal; md is compare.md; table and markdown, their older names, still work)")
	layoutFlag(cmd, &o.Layout)
	cmd.Flags().StringVar(&o.failOn, "fail-on", "", "exit 3 when a significant change against the baseline is larger than `PCT` percent either way (10, 10%, or a ratio: 2x)")
	complete(cmd, "format", func() []string { return render.Formats })
	return resultsCommand(f, cmd, "compare", &o.resultsOptions, o, compareRun, runF, func() error {
		if o.failOn != "" {
			f, err := parseFailOn("--fail-on", o.failOn)
			if err != nil {
				return err
			}
			o.FailOn = &f
		}
		if err := checkLayout(o.Layout); err != nil {
			return err
		}
		if f := render.FormatOf(o.Format); f != "" {
			o.Format = f
			return nil
		}
		return oneOf("--format", o.Format, render.Formats)
	})
}

// layoutFlag adds --layout, how a comparison's tables set the runs out.
func layoutFlag(cmd *cobra.Command, layout *string) {
	cmd.Flags().StringVar(layout, "layout", "", fmt.Sprintf("the tables' `layout`: %s (a row per run and cell) or %s (a column per run); default %s up to %d runs, %s beyond",
		compare.LayoutRows, compare.LayoutColumns, compare.LayoutColumns, compare.MaxColumns, compare.LayoutRows))
	complete(cmd, "layout", func() []string { return compare.Layouts })
}

// checkLayout refuses a --layout that is not one of compare.Layouts ("" is
// the default).
func checkLayout(layout string) error {
	if layout == "" {
		return nil
	}
	return oneOf("--layout", layout, compare.Layouts)
}

// compareRun loads every directory, labels the columns and prints the
// comparison (compare.Build) in the asked format.
func compareRun(_ context.Context, o *compareOptions) error {
	c, _, err := buildComparison(o.Dirs, o.Labels, o.Missing)
	if err != nil {
		return err
	}
	c.Layout = o.Layout
	if o.Format == render.FormatCSV { // the other formats carry the notes themselves
		for _, n := range c.Notes {
			fmt.Fprintln(o.IO.ErrOut, "note: "+n)
		}
	}
	write := func() error { return compare.Write(o.IO.Out, o.Format, c) }
	if o.Format == render.FormatText {
		write = func() error { return compare.WriteText(o.IO.Out, c, o.IO.width(), o.IO.colored()) }
	}
	if err := write(); err != nil {
		return err
	}
	if o.FailOn != nil {
		return o.FailOn.check(c)
	}
	return nil
}

// buildComparison loads dirs and compares them, labelled by labels
// (NAME=DIR values), naming the runs missing (NAME=REASON values).
func buildComparison(dirs, labels, missing []string) (*compare.Comparison, []*results.Loaded, error) {
	given, err := parseLabels(labels, dirs)
	if err != nil {
		return nil, nil, err
	}
	absent, err := parseMissing(missing)
	if err != nil {
		return nil, nil, err
	}
	var loaded []*results.Loaded
	for _, d := range dirs {
		l, err := results.Load(d)
		if err != nil {
			return nil, nil, err
		}
		loaded = append(loaded, l)
	}
	names := compare.Labels(loaded, given)
	in := make([]compare.Input, len(loaded))
	for i, l := range loaded {
		in[i] = compare.Input{Label: names[i], Loaded: l}
	}
	c, err := compare.Build(in)
	if err != nil {
		return nil, nil, wrapUsage(err)
	}
	for _, m := range absent {
		if slices.Contains(names, m.Label) {
			return nil, nil, wrapUsage(fmt.Errorf("--missing %s=%s: %s labels one of the runs compared", m.Label, m.Reason, m.Label))
		}
	}
	c.Missing = absent
	if !c.Shared() {
		return nil, nil, fmt.Errorf("%s have no cell in common (same target, workload, class, threads and phase in two or more of them)", strings.Join(dirs, ", "))
	}
	return c, loaded, nil
}

// parseMissing reads --missing NAME=REASON values.
func parseMissing(values []string) ([]compare.Missing, error) {
	var out []compare.Missing
	for _, v := range values {
		name, reason, ok := strings.Cut(v, "=")
		name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
		if !ok || name == "" || reason == "" {
			return nil, wrapUsage(fmt.Errorf("--missing %q: want NAME=REASON, a run that is not there and why (unreachable, failed: ...)", v))
		}
		out = append(out, compare.Missing{Label: name, Reason: reason})
	}
	return out, nil
}

// parseLabels turns --label NAME=DIR values into DIR (as given among dirs)
// to NAME.
func parseLabels(labels, dirs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, l := range labels {
		name, dir, ok := strings.Cut(l, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || dir == "" {
			return nil, wrapUsage(fmt.Errorf("--label %q: want NAME=DIR, a column name and one of the directories compared", l))
		}
		match := ""
		for _, d := range dirs {
			if filepath.Clean(d) == filepath.Clean(dir) {
				match = d
			}
		}
		if match == "" && filepath.Base(dir) == dir {
			// A bare run name, as a run named on the command line may be
			// (results.Named): the one directory compared of that name.
			var named []string
			for _, d := range dirs {
				if filepath.Base(filepath.Clean(d)) == dir {
					named = append(named, d)
				}
			}
			if len(named) == 1 {
				match = named[0]
			}
		}
		if match == "" {
			return nil, wrapUsage(fmt.Errorf("--label %q: %s is not one of the directories compared (%s)", l, dir, strings.Join(dirs, ", ")))
		}
		if _, dup := out[match]; dup {
			return nil, wrapUsage(fmt.Errorf("--label %q: %s already has a label", l, dir))
		}
		out[match] = name
	}
	return out, nil
}
