package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
)

func newCmdResultsList(f *Factory, runF func(context.Context, *resultsOptions) error) *cobra.Command {
	o := &resultsOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List results directories, oldest first, with each run's state and verdicts",
		Long: `list shows every results directory under --results, oldest first: its spec, when
it started, whether it was a --quick run, how it stands (complete, running, partial
with how many of its cell runs were measured, damaged, or unreadable), the timed
cell runs its samples hold (CELL RUNS, counted as the plan counts them; --json's
samples counts records, one per thread of a cell run) and the verdict of each workload it judged. Where nothing has run yet the list is
empty. --json prints the same for scripts, each run's verdicts as summary.json
has them.`,
		Args: noArgs,
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: one object per run, verdicts as in summary.json")
	return resultsCommand(f, cmd, "results", o, o, resultsListRun, runF)
}

// listedRun is one results directory as `results list --json` prints it:
// results.Listing with what the samples say (verdicts in summary.json's
// shape).
type listedRun struct {
	results.Listing
	Quick bool `json:"quick"`
	// State is complete, running, partial, damaged or unreadable.
	State string `json:"state"`
	// Planned and Measured count the run's timed cell runs, planned and
	// measured (0 planned: run.json does not say).
	Planned  int `json:"planned"`
	Measured int `json:"measured"`
	// CellRuns counts the timed cell runs the samples hold, planned or not:
	// the table's CELL RUNS, of one kind with Planned. samples counts
	// records, several to a cell run (one per thread).
	CellRuns int                `json:"cell_runs"`
	Verdicts []analysis.Verdict `json:"verdicts"`
}

// describeRun reads what list shows of an entry beyond results.List's.
func describeRun(e results.Entry) listedRun {
	r := listedRun{Listing: e.Listing(), Planned: e.Run.Planned, Verdicts: []analysis.Verdict{}}
	if r.Spec == "" {
		r.Spec = e.Run.Name // run.json's spec is unreadable or empty
	}
	r.Quick = e.Run.Spec.Value().Quick
	switch {
	case e.Err != nil && e.Run.Started.IsZero():
		r.State = "unreadable"
		return r
	case e.Err != nil:
		r.State = "damaged"
		return r
	case e.Dir == nil:
		r.State = "unreadable" // not from results.List
		return r
	}
	recs, _, err := e.Dir.ReadSamples()
	if err != nil {
		r.State, r.Error = "damaged", err.Error()
		return r
	}
	// How the run stands comes from its samples against its plan
	// (results.Assess), not from run.json alone.
	held := e.Completeness
	r.Planned, r.Measured = held.Planned, held.Measured
	r.CellRuns = held.Measured + held.Unplanned
	switch {
	case e.Holder != nil:
		r.State = "running"
	case held.State == results.StateDamaged:
		r.State, r.Error = "damaged", held.Problem
	case e.Run.Complete() && held.State == results.StateComplete:
		r.State = "complete"
	default:
		r.State = "partial"
		if held.Torn != nil {
			r.Error = fmt.Sprintf("its samples end torn at line %d", held.Torn.Line)
		}
	}
	cells := analysis.SortCells(results.Cells(results.Samples(recs)))
	r.Verdicts = append(r.Verdicts, summary.RunVerdicts(cells, e.Run)...)
	return r
}

// stateText is a run's state for the table: "partial 20/32", "running
// (pid 12)".
func (r listedRun) stateText() string {
	switch r.State {
	case "running":
		return fmt.Sprintf("running (pid %d)", r.PID)
	case "partial":
		if r.Planned > 0 {
			return fmt.Sprintf("partial %d/%d", r.Measured, r.Planned)
		}
		return fmt.Sprintf("partial %d", r.Measured)
	}
	return r.State
}

// cellRunsText is the CELL RUNS column: "-" where the samples could not be
// counted (an unreadable directory, samples that do not read).
func (r listedRun) cellRunsText() string {
	if r.State == "unreadable" || (r.State == "damaged" && r.CellRuns == 0) {
		return "-"
	}
	return strconv.Itoa(r.CellRuns)
}

// verdictText is one word per judged workload: "fp yes, compress no".
func (r listedRun) verdictText() string {
	if len(r.Verdicts) == 0 {
		return "-"
	}
	var parts []string
	for _, v := range r.Verdicts {
		parts = append(parts, v.Host.Name()+" "+string(v.Outcome))
	}
	return strings.Join(parts, ", ")
}

func resultsListRun(_ context.Context, o *resultsOptions) error {
	entries, err := results.ListPlanned(o.Results, experiment.PlannedOf)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	rows := []listedRun{}
	for _, e := range entries {
		rows = append(rows, describeRun(e))
	}
	if o.JSON {
		return printJSON(o.IO.Out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(o.IO.Out, "no results in %s yet; make some with `qoslab run`\n", o.Results)
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DIRECTORY\tSPEC\tSTARTED\tQUICK\tSTATE\tCELL RUNS\tVERDICT")
	var problems []string
	for _, r := range rows {
		started := "-"
		if !r.Started.IsZero() {
			started = r.Started.Format("2006-01-02 15:04:05Z")
		}
		quick := "-"
		if r.Quick {
			quick = "quick"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Path, orDash(r.Spec), started, quick, r.stateText(), r.cellRunsText(), r.verdictText())
		switch r.State {
		case "damaged", "unreadable":
			problems = append(problems, fmt.Sprintf("%s: %s", r.Path, r.Error))
		case "partial":
			why := ""
			if r.Error != "" {
				why = r.Error + "; "
			}
			problems = append(problems, fmt.Sprintf("%s: %sfinish it with qoslab run --resume %s", r.Path, why, r.Path))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(o.IO.Out, "  "+p)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
