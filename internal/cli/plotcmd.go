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

// PlotOptions are `qoslab plot`'s and `qoslab report`'s inputs: one
// results directory (Dirs[0]).
type PlotOptions struct {
	ResultsOptions
	Format string
	Only   string
}

// NewCmdPlot builds `qoslab plot DIR [--format png|svg|pdf] [--only NAME]`.
func NewCmdPlot(f *Factory, runF func(context.Context, *PlotOptions) error) *cobra.Command {
	o := &PlotOptions{}
	cmd := &cobra.Command{
		Use:   "plot DIR|latest",
		Short: "Draw a run's charts into DIR/plots",
		Long: `plot draws the charts of a results directory into DIR/plots/<name>.<format>:
throughput against threads with a regression line per target and QoS, per-thread
and per-process completion times, compression times host vs VM, elapsed time
against threads, and telemetry timelines when the run recorded telemetry. A chart
the run has no data for is skipped with a note.`,
		Args: dirArgs(1, 1),
	}
	cmd.Flags().StringVar(&o.Format, "format", "png", "image format: "+strings.Join(plot.Formats(), ", "))
	cmd.Flags().StringVar(&o.Only, "only", "", "draw only this chart or family: "+strings.Join(plot.Families(), ", "))
	complete(cmd, "only", plot.Families)
	complete(cmd, "format", plot.Formats)
	return resultsCommand(f, cmd, "plot", &o.ResultsOptions, o, plotRun, runF, func() error { return oneOf("--format", o.Format, plot.Formats()) })
}

func plotRun(_ context.Context, o *PlotOptions) error {
	r, err := report.Load(o.Dirs[0])
	if err != nil {
		return err
	}
	charts := r.Charts
	if o.Only != "" {
		if charts, err = plot.Select(charts, o.Only); err != nil {
			return usageError(err)
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

// ReportOptions are `qoslab report`'s inputs: one results directory, or
// with Compare two or more and the directory to write the comparison in.
type ReportOptions struct {
	ResultsOptions
	Compare bool
	Out     string
	Labels  []string
}

// NewCmdReport builds `qoslab report DIR` and `qoslab report --compare DIR
// DIR [DIR...] --out DIR`.
func NewCmdReport(f *Factory, runF func(context.Context, *ReportOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report DIR|latest | report --compare DIR DIR [DIR...] --out DIR",
		Short: "Write DIR/report.html (one self-contained file) and DIR/report.md, or one report across runs",
		Long: `report writes a run's report: report.html, one file with the charts inline as
SVG, the summary tables, the verdict, both machines' Info and the spec, with no
external URL, so it can be opened offline or mailed; and report.md, the same text
linking the charts as PNGs in DIR/plots.

With --compare it writes one report across two or more runs (the first the
baseline) into --out: report.html with the subsumption index per machine with its
interval, the host and VM rates per class per machine, and the table of qoslab
compare; the charts as PNGs in plots/; and the table as compare.md, compare.csv
and compare.json.`,
		Example: `  qoslab report latest
  qoslab report --compare fleet-results/mini/* fleet-results/studio/* --out fleet-results/report`,
		Args: dirArgs(1, 0),
	}
	o := &ReportOptions{}
	cmd.Flags().BoolVar(&o.Compare, "compare", false, "one report across the runs named (two or more, the first the baseline); needs --out")
	cmd.Flags().StringVar(&o.Out, "out", "", "with --compare: the directory to write the report in")
	cmd.Flags().StringArrayVar(&o.Labels, "label", nil, "with --compare: NAME=DIR heads DIR's column with NAME (repeatable)")
	_ = cmd.MarkFlagDirname("out")
	return resultsCommand(f, cmd, "report", &o.ResultsOptions, o, reportRun, runF, func() error {
		switch {
		case o.Compare && o.Out == "":
			return usageError(fmt.Errorf("--compare needs --out DIR, the directory to write the report in"))
		case o.Compare && len(o.Dirs) < 2:
			return usageError(fmt.Errorf("--compare needs two or more results directories, got %d", len(o.Dirs)))
		case !o.Compare && (o.Out != "" || len(o.Labels) > 0):
			return usageError(fmt.Errorf("--out and --label go with --compare; a single run's report is written into its own directory"))
		case !o.Compare && len(o.Dirs) != 1:
			return usageError(fmt.Errorf("report takes one results directory (%d given); to report across runs, add --compare and --out DIR", len(o.Dirs)))
		}
		return nil
	})
}

func reportRun(_ context.Context, o *ReportOptions) error {
	if o.Compare {
		return compareReportRun(o)
	}
	r, err := report.Load(o.Dirs[0])
	if err != nil {
		return err
	}
	paths, err := r.Write()
	for _, p := range paths {
		if filepath.Ext(p) != ".png" {
			fmt.Fprintln(o.IO.Out, p)
		}
	}
	return err
}

// compareReportRun writes the report across o.Dirs into o.Out.
func compareReportRun(o *ReportOptions) error {
	c, loaded, err := buildComparison(o.Dirs, o.Labels)
	if err != nil {
		return err
	}
	r := report.NewComparison(c, loaded)
	for _, s := range r.Skipped {
		fmt.Fprintf(o.IO.ErrOut, "skipped %s: %s\n", s.Name, s.Reason)
	}
	paths, err := r.Write(o.Out)
	for _, p := range paths {
		if filepath.Ext(p) != ".png" {
			fmt.Fprintln(o.IO.Out, p)
		}
	}
	return err
}
