package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/report"
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
	entries, err := results.List(o.Results)
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
	state := "complete"
	if h, ok := results.Running(l.Path); ok {
		state = fmt.Sprintf("running (%s)", h)
	} else if !l.Run.Complete() {
		state = "incomplete (finish it with qoslab run --resume " + l.Path + ")"
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
	return summary.WriteMarkdown(o.IO.Out, summary.Of(l))
}

// NewCmdCompare builds `qoslab compare`.
func NewCmdCompare(f *Factory, runF func(context.Context, *ResultsOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "compare OLD NEW",
		Short: "Compare two runs cell by cell, benchstat style (two machines, two macOS versions, ...)",
		Args:  cobra.ExactArgs(2),
	}
	o := &ResultsOptions{}
	return resultsCommand(f, cmd, "compare", o, o, compareRun, runF)
}

// compareRun prints each cell both runs have, in table order: the median
// total rate of each, the change, and a Mann-Whitney U test of the
// per-repeat rates; "~" where the difference is not significant.
func compareRun(_ context.Context, o *ResultsOptions) error {
	var cells [2][]analysis.Cell
	for i, d := range o.Dirs {
		l, err := results.Load(d)
		if err != nil {
			return err
		}
		cells[i] = l.Cells()
	}
	return report.WriteChanges(o.IO.Out, o.Dirs[0], o.Dirs[1], analysis.Changes(cells[0], cells[1]))
}
