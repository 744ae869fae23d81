package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/report"
)

// reportOptions are `qoslab report`'s inputs: one results directory, or
// with Compare two or more and the directory to write the comparison in.
type reportOptions struct {
	resultsOptions
	Compare bool
	Out     string
	Labels  []string
	// Missing are --missing NAME=REASON values (see compareOptions).
	Missing []string
	// Layout is --layout (see compareOptions); a single run's report has
	// no use for it, and takes it from a config file without complaint.
	Layout string
}

// newCmdReport builds `qoslab report DIR` and `qoslab report --compare DIR
// DIR [DIR...] --out DIR`.
func newCmdReport(f *Factory, runF func(context.Context, *reportOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "report DIR|latest | report --compare DIR DIR [DIR...] --out DIR",
		Short: "Write DIR/report.html (one self-contained file) and DIR/report.md, or one report across runs",
		Long: `report writes a run's report: report.html, one file with the charts inline as
SVG, the summary tables, the verdict, both machines' Info and the spec, with no
external URL, so it can be opened offline or mailed; and report.md, the same text
linking the charts as PNGs in DIR/plots.

With --compare it writes one report across two or more runs (the first the
baseline) into --out: report.html led by the verdict per machine (as qoslab
compare prints it), the fleet chart (per machine its VM ratio with its interval
against the band, and the host's ratio beside it), the subsumption index per
machine with its interval, the host and VM rates per class per machine, and the
tables of qoslab compare, in the layout --layout asks; the charts as PNGs in
plots/; and the tables as compare.md, compare.csv and compare.json.`,
		Example: `  qoslab report latest
  qoslab report --compare fleet-results/mini/* fleet-results/studio/* --out fleet-results/report`,
		Args: dirArgs(0),
	}
	o := &reportOptions{}
	cmd.Flags().BoolVar(&o.Compare, "compare", false, "one report across the runs named (two or more, the first the baseline); needs --out")
	cmd.Flags().StringVar(&o.Out, "out", "", "with --compare: the directory to write the report in")
	cmd.Flags().StringArrayVar(&o.Labels, "label", nil, "with --compare: NAME=DIR heads DIR's column with NAME (repeatable)")
	cmd.Flags().StringArrayVar(&o.Missing, "missing", nil, "with --compare: NAME=REASON, a run meant to be compared that is not there, named with why (repeatable)")
	layoutFlag(cmd, &o.Layout)
	_ = cmd.MarkFlagDirname("out")
	return resultsCommand(f, cmd, "report", &o.resultsOptions, o, reportRun, runF, func() error {
		switch {
		case o.Compare && o.Out == "":
			return wrapUsage(fmt.Errorf("--compare needs --out DIR, the directory to write the report in"))
		case o.Compare && len(o.Dirs) < 2:
			return wrapUsage(fmt.Errorf("--compare needs two or more results directories, got %d", len(o.Dirs)))
		case !o.Compare && (o.Out != "" || len(o.Labels) > 0 || len(o.Missing) > 0):
			return wrapUsage(fmt.Errorf("--out, --label and --missing go with --compare; a single run's report is written into its own directory"))
		case !o.Compare && len(o.Dirs) != 1:
			return wrapUsage(fmt.Errorf("report takes one results directory (%d given); to report across runs, add --compare and --out DIR", len(o.Dirs)))
		}
		return checkLayout(o.Layout)
	})
}

func reportRun(_ context.Context, o *reportOptions) error {
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
func compareReportRun(o *reportOptions) error {
	c, loaded, err := buildComparison(o.Dirs, o.Labels, o.Missing)
	if err != nil {
		return err
	}
	c.Layout = o.Layout
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
