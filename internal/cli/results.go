package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/units"
)

// ResultsOptions are the settings of `qoslab results list|show` and
// `qoslab compare`.
type ResultsOptions struct {
	IO *IOStreams
	// Results is where results directories are (the shared results
	// setting); Dirs are the ones named, "latest" for the newest there.
	Results string
	Dirs    []string
	JSON    bool
}

// NewCmdResults builds `qoslab results`.
func NewCmdResults(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "results", Short: "List and show the results of qoslab run and bench --save"},
		newCmdResultsList(f, nil), newCmdResultsShow(f, nil))
}

// resultsCommand finishes a command that reads results directories: the
// results location, and DIR arguments where "latest" is the newest run.
func resultsCommand[O any](f *Factory, cmd *cobra.Command, section string, o *ResultsOptions, opts *O, run, runF func(context.Context, *O) error, checks ...func() error) *cobra.Command {
	o.IO = f.IO
	cmd.Flags().StringVar(&o.Results, "results", "qoslab-results", "where results directories are")
	_ = cmd.MarkFlagDirname("results")
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append([]string{"latest"}, results.Paths(o.Results)...), cobra.ShellCompDirectiveFilterDirs
	}
	return command(f, cmd, section, opts, nil, func(args []string) error {
		o.Dirs = args
		for i, d := range o.Dirs {
			if d == "latest" {
				latest, err := results.Latest(o.Results)
				if err != nil {
					return err
				}
				o.Dirs[i] = latest
			}
		}
		for _, check := range checks {
			if err := check(); err != nil {
				return err
			}
		}
		return nil
	}, run, runF)
}

func newCmdResultsList(f *Factory, runF func(context.Context, *ResultsOptions) error) *cobra.Command {
	o := &ResultsOptions{}
	cmd := &cobra.Command{Use: "list", Short: "List results directories, oldest first", Args: noArgs}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return resultsCommand(f, cmd, "results", o, o, resultsListRun, runF)
}

func resultsListRun(_ context.Context, o *ResultsOptions) error {
	entries, err := results.ListPlanned(o.Results, experiment.PlannedOf)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if o.JSON {
		rows := []results.Listing{}
		for _, e := range entries {
			rows = append(rows, e.Listing())
		}
		return printJSON(o.IO.Out, rows)
	}
	if len(entries) == 0 {
		fmt.Fprintf(o.IO.Out, "no results in %s; make some with `qoslab run`\n", o.Results)
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DIRECTORY\tSPEC\tSTARTED\tSTATE\tSAMPLES")
	for _, e := range entries {
		started := "-"
		if !e.Run.Started.IsZero() {
			started = e.Run.Started.Format("2006-01-02 15:04:05Z")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", e.Path, e.SpecName, started, e.State(), e.Samples)
	}
	return tw.Flush()
}

func newCmdResultsShow(f *Factory, runF func(context.Context, *ResultsOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "show DIR|latest", Short: "Print a run's summary (summary.md, or computed when the run wrote none yet)", Args: cobra.ExactArgs(1)}
	o := &ResultsOptions{}
	return resultsCommand(f, cmd, "results", o, o, resultsShowRun, runF)
}

func resultsShowRun(_ context.Context, o *ResultsOptions) error {
	l, err := results.Load(o.Dirs[0])
	if err != nil {
		return err
	}
	held := results.Assess(experiment.PlannedOf(l.Dir), l.Run.Planned, l.Records, l.Torn, nil)
	state := results.StateComplete
	if h, ok := results.Running(l.Path); ok {
		state = fmt.Sprintf("running (%s)", h)
	} else if !l.Run.Complete() || held.State != results.StateComplete {
		state = held.Text() + " (finish it with qoslab run --resume " + l.Path + ")"
	}
	fmt.Fprintf(o.IO.Out, "%s: %s, started %s, %s\n\n", l.Path, l.Run.Name, l.Run.Started.Format("2006-01-02 15:04:05Z"), state)
	// summary.md is what the run wrote when it ended; samples that
	// changed since (a torn end, a cell run lost) make it stale, and the
	// summary is computed again from what the samples hold now.
	if stale := staleSummary(l); stale != "" {
		fmt.Fprintf(o.IO.ErrOut, "%s: %s is older than what its samples hold (%s): computed from its %s\n", l.Path, results.SummaryMDFile, stale, units.Plural(len(l.Samples), "sample"))
		return summary.WriteMarkdown(o.IO.Out, summary.Of(l))
	}
	if l.HasSummary() {
		file, err := os.Open(filepath.Join(l.Path, results.SummaryMDFile))
		if err != nil {
			return err
		}
		defer file.Close()
		_, err = io.Copy(o.IO.Out, file)
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "%s has no %s yet: computed from its %s\n", l.Path, results.SummaryMDFile, units.Plural(len(l.Samples), "sample"))
	return summary.WriteMarkdown(o.IO.Out, summary.Of(l))
}

// staleSummary says why the run's summary.md no longer matches its samples
// (it was written, then samples.jsonl changed), or "" when it does or the
// run has none.
func staleSummary(l *results.Loaded) string {
	sum, err := os.Stat(filepath.Join(l.Path, results.SummaryMDFile))
	if err != nil {
		return ""
	}
	if l.Torn != nil {
		return "a torn end"
	}
	if samples, err := os.Stat(filepath.Join(l.Path, results.SamplesFile)); err == nil && samples.ModTime().After(sum.ModTime()) {
		return results.SamplesFile + " changed after it"
	}
	return ""
}

// CompareOptions are `qoslab compare`'s inputs: two or more results
// directories, the first the baseline.
type CompareOptions struct {
	ResultsOptions
	// Labels are --label NAME=DIR values: NAME heads DIR's column.
	Labels []string
	// Missing are --missing NAME=REASON values: runs meant to be compared
	// that are not there (the fleet playbook's hosts that did not come
	// back), named above the rows.
	Missing []string
	Format  string
}

// NewCmdCompare builds `qoslab compare DIR DIR [DIR...]`.
func NewCmdCompare(f *Factory, runF func(context.Context, *CompareOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compare DIR DIR [DIR...]",
		Short: "Compare runs cell by cell, benchstat style: one column per run (machines, OS versions, hypervisors)",
		Long: `compare sets two or more results directories side by side, one column per run,
the first the baseline. Each cell (workload, target, QoS, threads) shows its median
total rate with the half-width of its 95% interval, and each later run its change
against the baseline, "~" where a Mann-Whitney U test of the repeats finds none.
A geometric-mean row per target closes each workload; the findings follow (the
subsumption index with its interval and verdict, each target's QoS sensitivity).
A cell a run lacks is shown as missing. When the runs differ in what shapes the
numbers (spec, contention, loops or durations, sizes, quick, acceleration), the
table says so above the rows.

Columns are labelled with the host's name and OS version from run.json; --label
NAME=DIR sets one.`,
		Example: `  qoslab compare fleet-results/mini/contention-* fleet-results/studio/contention-*
  qoslab compare --label M1=a --label M4=b a b --format markdown`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError(fmt.Errorf("compare needs two or more results directories, the first the baseline; got %d", len(args)))
			}
			return nil
		},
	}
	o := &CompareOptions{}
	cmd.Flags().StringArrayVar(&o.Labels, "label", nil, "NAME=DIR: head DIR's column with NAME (repeatable)")
	cmd.Flags().StringArrayVar(&o.Missing, "missing", nil, "NAME=REASON: a run meant to be compared that is not there, named with why above the rows (repeatable)")
	cmd.Flags().StringVar(&o.Format, "format", "table", "output format: "+strings.Join(compare.Formats, ", "))
	complete(cmd, "format", func() []string { return compare.Formats })
	return resultsCommand(f, cmd, "compare", &o.ResultsOptions, o, compareRun, runF, func() error { return oneOf("--format", o.Format, compare.Formats) })
}

// compareRun loads every directory, labels the columns and prints the
// comparison (compare.Build) in the asked format.
func compareRun(_ context.Context, o *CompareOptions) error {
	c, _, err := buildComparison(o.Dirs, o.Labels, o.Missing)
	if err != nil {
		return err
	}
	return compare.Write(o.IO.Out, o.Format, c)
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
		return nil, nil, usageError(err)
	}
	for _, m := range absent {
		if slices.Contains(names, m.Label) {
			return nil, nil, usageError(fmt.Errorf("--missing %s=%s: %s labels one of the runs compared", m.Label, m.Reason, m.Label))
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
			return nil, usageError(fmt.Errorf("--missing %q: want NAME=REASON, a run that is not there and why (unreachable, failed: ...)", v))
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
			return nil, usageError(fmt.Errorf("--label %q: want NAME=DIR, a column name and one of the directories compared", l))
		}
		match := ""
		for _, d := range dirs {
			if filepath.Clean(d) == filepath.Clean(dir) {
				match = d
			}
		}
		if match == "" {
			return nil, usageError(fmt.Errorf("--label %q: %s is not one of the directories compared (%s)", l, dir, strings.Join(dirs, ", ")))
		}
		if _, dup := out[match]; dup {
			return nil, usageError(fmt.Errorf("--label %q: %s already has a label", l, dir))
		}
		out[match] = name
	}
	return out, nil
}
