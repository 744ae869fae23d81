package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/plot"
	"github.com/qoslab/qoslab/internal/report"
	"github.com/qoslab/qoslab/internal/results"
)

// plotOptions are `qoslab plot`'s and `qoslab report`'s inputs: one
// results directory (Dirs[0]).
type plotOptions struct {
	resultsOptions
	Format string
	Only   string
}

// newCmdPlot builds `qoslab plot DIR [--format png|svg|pdf] [--only NAME]`.
func newCmdPlot(f *Factory, runF func(context.Context, *plotOptions) error) *cobra.Command {
	o := &plotOptions{}
	cmd := &cobra.Command{
		Use:   "plot DIR|latest",
		Short: "Draw a run's charts into DIR/plots",
		Long: `plot draws the charts of a results directory into DIR/plots/<name>.<format>:
throughput against threads with a regression line per target and QoS, CPU share
against speed per CPU-second (when the records carry CPU time), per-thread and
per-process completion times, compression times host vs VM, elapsed time
against threads, and telemetry timelines when the run recorded telemetry. A chart
the run has no data for is skipped with a note.`,
		Args: dirArgs(1),
	}
	cmd.Flags().StringVar(&o.Format, "format", "png", "image format: "+strings.Join(plot.Formats(), ", "))
	cmd.Flags().StringVar(&o.Only, "only", "", "draw only this chart or family: "+strings.Join(plot.Families(), ", "))
	complete(cmd, "only", plot.Families)
	complete(cmd, "format", plot.Formats)
	return resultsCommand(f, cmd, "plot", &o.resultsOptions, o, plotRun, runF, func() error { return oneOf("--format", o.Format, plot.Formats()) })
}

func plotRun(_ context.Context, o *plotOptions) error {
	r, err := report.Load(o.Dirs[0])
	if err != nil {
		return err
	}
	charts := r.Charts
	if o.Only != "" {
		if charts, err = plot.Select(charts, o.Only); err != nil {
			return wrapUsage(err)
		}
	}
	for _, s := range r.Skipped {
		if o.Only == "" || plot.InFamily(s.Name, o.Only) {
			fmt.Fprintf(o.IO.ErrOut, "skipped %s: %s\n", s.Name, s.Reason)
		}
	}
	paths, err := plot.WriteAll(filepath.Join(r.Path, results.PlotsDir), charts, o.Format)
	for _, p := range paths {
		fmt.Fprintln(o.IO.Out, p)
	}
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("no chart drawn for %s: the run has no data for any chart asked for", r.Path)
	}
	return nil
}
