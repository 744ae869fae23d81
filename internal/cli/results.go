package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
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
func resultsCommand(f *Factory, cmd *cobra.Command, section string, o *ResultsOptions, run, runF func(context.Context, *ResultsOptions) error) *cobra.Command {
	o.IO = f.IO
	cmd.Flags().StringVar(&o.Results, "results", "qoslab-results", "where results directories are")
	_ = cmd.MarkFlagDirname("results")
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append([]string{"latest"}, resultDirs(o.Results)...), cobra.ShellCompDirectiveFilterDirs
	}
	return command(f, cmd, section, o, nil, func(args []string) error {
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
		return nil
	}, run, runF)
}

func resultDirs(parent string) []string {
	entries, _ := results.List(parent)
	var out []string
	for _, e := range entries {
		out = append(out, e.Path)
	}
	return out
}

func newCmdResultsList(f *Factory, runF func(context.Context, *ResultsOptions) error) *cobra.Command {
	o := &ResultsOptions{}
	cmd := &cobra.Command{Use: "list", Short: "List results directories, oldest first", Args: noArgs}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return resultsCommand(f, cmd, "results", o, resultsListRun, runF)
}

func resultsListRun(_ context.Context, o *ResultsOptions) error {
	entries, err := results.List(o.Results)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if o.JSON {
		type row struct {
			Path     string     `json:"path"`
			Spec     string     `json:"spec"`
			Started  time.Time  `json:"started"`
			Finished *time.Time `json:"finished"`
			Complete bool       `json:"complete"`
			Samples  int        `json:"samples"`
			Error    string     `json:"error,omitempty"`
		}
		rows := []row{}
		for _, e := range entries {
			r := row{Path: e.Path, Spec: e.SpecName, Started: e.Run.Started, Finished: e.Run.Finished, Complete: e.Run.Complete(), Samples: e.Samples, Error: e.Run.Error}
			if e.Err != nil {
				r.Error = e.Err.Error()
			}
			rows = append(rows, r)
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
		state := "incomplete: resume with qoslab run --resume " + e.Path
		switch {
		case e.Err != nil:
			state = "unreadable: " + e.Err.Error()
		case e.Run.Complete():
			state = "complete"
		}
		started := "-"
		if !e.Run.Started.IsZero() {
			started = e.Run.Started.Format("2006-01-02 15:04:05Z")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", e.Path, e.SpecName, started, state, e.Samples)
	}
	return tw.Flush()
}

func newCmdResultsShow(f *Factory, runF func(context.Context, *ResultsOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "show DIR|latest", Short: "Print a run's summary (summary.md, or computed when the run wrote none yet)", Args: cobra.ExactArgs(1)}
	return resultsCommand(f, cmd, "results", &ResultsOptions{}, resultsShowRun, runF)
}

func resultsShowRun(_ context.Context, o *ResultsOptions) error {
	l, err := results.Load(o.Dirs[0])
	if err != nil {
		return err
	}
	state := "complete"
	if !l.Run.Complete() {
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
	return resultsCommand(f, cmd, "compare", &ResultsOptions{}, compareRun, runF)
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
	oldPath, newPath := o.Dirs[0], o.Dirs[1]
	changes := analysis.Changes(cells[0], cells[1])
	if len(changes) == 0 {
		return fmt.Errorf("%s and %s have no cell in common (same target, workload, class, threads and phase)", oldPath, newPath)
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TARGET\tWORKLOAD\tQOS\tTHREADS\tPHASE\tOLD (%s)\tNEW (%s)\tDELTA\tP\n", oldPath, newPath)
	for _, ch := range changes {
		n := ch.New
		unit, scale := units.RateUnit(n.Unit)
		rate := func(c analysis.Cell) string {
			return fmt.Sprintf("%s %s (n=%d)", units.SI(float64(c.TotalRate.Median)/scale), unit, c.TotalRate.N)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d %s\t%d\t%s\t%s\t%s\t%s\t%s\n", n.Target, n.Workload, n.QoS, qos.Class(n.QoS), n.Threads, orDash(n.Phase),
			rate(ch.Old), rate(n), analysis.FormatChange(ch, analysis.Alpha), analysis.FormatP(ch.Test.P))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "%s in common; ~ means no significant difference (Mann-Whitney U, two-sided, alpha %.2f)\n", units.Plural(len(changes), "cell"), analysis.Alpha)
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
