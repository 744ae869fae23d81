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
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/units"
)

// NewCmdResults builds `qoslab results`.
func NewCmdResults(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "results", Short: "List and show the results of qoslab run"}, newCmdResultsList(f), newCmdResultsShow(f))
}

func newCmdResultsList(f *Factory) *cobra.Command {
	var parent string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List results directories, oldest first",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			entries, err := results.List(parent)
			if err != nil {
				return err
			}
			if len(entries) == 0 {
				fmt.Fprintf(f.IO.Out, "no results in %s; make some with `qoslab run`\n", parent)
				return nil
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
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
		},
	}
	cmd.Flags().StringVar(&parent, "results", "qoslab-results", "where results directories are")
	return cmd
}

func newCmdResultsShow(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show DIR",
		Short: "Print a run's summary (summary.md)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := results.Open(args[0])
			if err != nil {
				return err
			}
			state := "complete"
			if !d.Run.Complete() {
				state = "incomplete (finish it with qoslab run --resume " + d.Path + ")"
			}
			fmt.Fprintf(f.IO.Out, "%s: %s, started %s, %s\n\n", d.Path, d.Run.Name, d.Run.Started.Format("2006-01-02 15:04:05Z"), state)
			file, err := os.Open(filepath.Join(d.Path, results.SummaryMDFile))
			if err != nil {
				return fmt.Errorf("%w (summaries are written when a run ends)", err)
			}
			defer file.Close()
			_, err = io.Copy(f.IO.Out, file)
			return err
		},
	}
}

// NewCmdCompare builds `qoslab compare`.
func NewCmdCompare(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "compare OLD NEW",
		Short: "Compare two runs cell by cell, benchstat style (two machines, two macOS versions, ...)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return compareRuns(cmd.Context(), f.IO.Out, args[0], args[1])
		},
	}
}

func runCells(path string) ([]analysis.Cell, error) {
	d, err := results.Open(path)
	if err != nil {
		return nil, err
	}
	recs, _, err := d.ReadSamples()
	if err != nil {
		return nil, err
	}
	return results.Cells(results.Samples(recs)), nil
}

// compareRuns prints each cell both runs have: the median total rate of
// each, the change, and a Mann-Whitney U test of the per-repeat rates; "~"
// where the difference is not significant at 0.05.
func compareRuns(_ context.Context, w io.Writer, oldPath, newPath string) error {
	oldCells, err := runCells(oldPath)
	if err != nil {
		return err
	}
	newCells, err := runCells(newPath)
	if err != nil {
		return err
	}
	byKey := map[analysis.CellKey]analysis.Cell{}
	for _, c := range oldCells {
		byKey[c.CellKey] = c
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TARGET\tWORKLOAD\tQOS\tTHREADS\tPHASE\tOLD (%s)\tNEW (%s)\tDELTA\tP\n", oldPath, newPath)
	matched := 0
	for _, n := range newCells {
		o, ok := byKey[n.CellKey]
		if !ok {
			continue
		}
		matched++
		unit, scale := units.RateUnit(n.Unit)
		t := analysis.MannWhitney(o.TotalRates, n.TotalRates)
		delta := "~"
		if analysis.Significant(t.P, analysis.Alpha) && o.TotalRate.Median != 0 {
			delta = fmt.Sprintf("%+.1f%%", 100*(n.TotalRate.Median/o.TotalRate.Median-1))
		}
		phase := n.Phase
		if phase == "" {
			phase = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d %s\t%d\t%s\t%s %s (n=%d)\t%s %s (n=%d)\t%s\t%s\n", n.Target, n.Workload, n.QoS, qos.Class(n.QoS), n.Threads, phase,
			units.SI(float64(o.TotalRate.Median)/scale), unit, o.TotalRate.N, units.SI(float64(n.TotalRate.Median)/scale), unit, n.TotalRate.N, delta, analysis.FormatP(t.P))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if matched == 0 {
		return fmt.Errorf("%s and %s have no cell in common (same target, workload, class, threads and phase)", oldPath, newPath)
	}
	fmt.Fprintf(w, "%d cells in common; ~ means no significant difference (Mann-Whitney U, two-sided, alpha %.2f)\n", matched, analysis.Alpha)
	return nil
}
