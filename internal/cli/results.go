package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/compare"
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
	// ExitStatus makes results show exit by the run's verdicts
	// (verdictStatus).
	ExitStatus bool
}

// NewCmdResults builds `qoslab results`.
func NewCmdResults(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "results", Short: "List, show and remove the results of qoslab run and bench --save"},
		newCmdResultsList(f, nil), newCmdResultsShow(f, nil), newCmdResultsRm(f, nil), newCmdResultsPrune(f, nil))
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

func newCmdResultsShow(f *Factory, runF func(context.Context, *ResultsOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show DIR|latest",
		Short: "Print a run's summary (summary.md, or computed when the run wrote none yet)",
		Long: `show prints a run's summary: its summary.md, or, for a run that has not written
one yet (still running, or stopped), the same computed from its samples. With
--json it prints the summary as summary.json has it (computed from the samples,
so always current), with the directory and how the run stands.

` + exitStatusDoc,
		Example: `  qoslab results show latest
  qoslab results show --json latest | jq '.verdicts[].outcome'
  qoslab results show --exit-status qoslab-results/contention-20261124T224900Z`,
		Args: dirArgs(1, 1),
	}
	o := &ResultsOptions{}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the summary as JSON (summary.json's shape, with path and state)")
	cmd.Flags().BoolVar(&o.ExitStatus, "exit-status", false, exitStatusHelp)
	return resultsCommand(f, cmd, "results", o, o, resultsShowRun, runF)
}

func resultsShowRun(_ context.Context, o *ResultsOptions) error {
	l, err := results.Load(o.Dirs[0])
	if err != nil {
		return err
	}
	state := "complete"
	if h, ok := results.Running(l.Path); ok {
		state = fmt.Sprintf("running (%s)", h)
	} else if !l.Run.Complete() {
		state = "incomplete (finish it with qoslab run --resume " + l.Path + ")"
	}
	a := summary.Of(l)
	if err := showSummary(o, l, a, state); err != nil {
		return err
	}
	if o.ExitStatus {
		return verdictStatus(a.Verdicts, l.Partial())
	}
	return nil
}

// showSummary prints the run's summary: as JSON, summary.json's document
// computed now with the run's path and state; else summary.md as the run
// wrote it, or computed when it wrote none.
func showSummary(o *ResultsOptions, l *results.Loaded, a summary.Analysis, state string) error {
	if o.JSON {
		return printJSON(o.IO.Out, struct {
			Path  string `json:"path"`
			State string `json:"state"`
			summary.Document
		}{l.Path, state, summary.NewDocument(a)})
	}
	fmt.Fprintf(o.IO.Out, "%s: %s, started %s, %s\n\n", l.Path, l.Run.Name, l.Run.Started.Format("2006-01-02 15:04:05Z"), state)
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
	return summary.WriteMarkdown(o.IO.Out, a)
}

// CompareOptions are `qoslab compare`'s inputs: two or more results
// directories, the first the baseline.
type CompareOptions struct {
	ResultsOptions
	// Labels are --label NAME=DIR values: NAME heads DIR's column.
	Labels []string
	Format string
	// FailOn, when set (--fail-on), makes compare exit ExitNo on a
	// significant change beyond it.
	FailOn *failOn

	failOn string
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

Columns are labelled with the host's name from run.json, or with the run's start
time when runs share a host (never with a target's name, host or vm); --label
NAME=DIR sets one. A --quick run's column is marked (quick), one that did not
finish every cell (partial). Two arguments that are one run get a note.

With --fail-on PCT, compare exits 3 when any cell's change against the baseline
(or any QoS sensitivity's) is significant and larger than PCT percent either way,
a decrease counted by its ratio form (-50% is 2x, so --fail-on 100 catches it);
PCT may be written as a ratio, 2x. Exit status: 0 done, 1 a failure, 2 a usage
error, 3 a change beyond --fail-on.`,
		Example: `  qoslab compare fleet-results/mini/contention-* fleet-results/studio/contention-*
  qoslab compare --label M1=a --label M4=b a b --format markdown
  qoslab compare --fail-on 10 baseline-run new-run`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError(fmt.Errorf("compare needs two or more results directories, the first the baseline; got %d", len(args)))
			}
			return nil
		},
	}
	o := &CompareOptions{}
	cmd.Flags().StringArrayVar(&o.Labels, "label", nil, "NAME=DIR: head DIR's column with NAME (repeatable)")
	cmd.Flags().StringVar(&o.Format, "format", "table", "output format: "+strings.Join(compare.Formats, ", "))
	cmd.Flags().StringVar(&o.failOn, "fail-on", "", "exit 3 when a significant change against the baseline is larger than `PCT` percent either way (10, 10%, or a ratio: 2x)")
	complete(cmd, "format", func() []string { return compare.Formats })
	return resultsCommand(f, cmd, "compare", &o.ResultsOptions, o, compareRun, runF, func() error {
		if o.failOn != "" {
			f, err := parseFailOn("--fail-on", o.failOn)
			if err != nil {
				return err
			}
			o.FailOn = &f
		}
		return oneOf("--format", o.Format, compare.Formats)
	})
}

// compareRun loads every directory, labels the columns and prints the
// comparison (compare.Build) in the asked format.
func compareRun(_ context.Context, o *CompareOptions) error {
	c, _, err := buildComparison(o.Dirs, o.Labels)
	if err != nil {
		return err
	}
	if o.Format == "csv" { // the other formats carry the notes themselves
		for _, n := range c.Notes {
			fmt.Fprintln(o.IO.ErrOut, "note: "+n)
		}
	}
	if err := compare.Write(o.IO.Out, o.Format, c); err != nil {
		return err
	}
	if o.FailOn != nil {
		return o.FailOn.check(c)
	}
	return nil
}

// buildComparison loads dirs and compares them, labelled by labels
// (NAME=DIR values).
func buildComparison(dirs, labels []string) (*compare.Comparison, []*results.Loaded, error) {
	given, err := parseLabels(labels, dirs)
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
	if !c.Shared() {
		return nil, nil, fmt.Errorf("%s have no cell in common (same target, workload, class, threads and phase in two or more of them)", strings.Join(dirs, ", "))
	}
	return c, loaded, nil
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
