package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/termcolor"
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
	CellRuns int                  `json:"cell_runs"`
	Verdicts []render.VerdictJSON `json:"verdicts"`
}

// describeRun reads what list shows of an entry beyond results.List's.
func describeRun(e results.Entry) listedRun {
	r := listedRun{Listing: e.Listing(), Planned: e.Run.Planned, Verdicts: []render.VerdictJSON{}}
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
	r.Verdicts = append(r.Verdicts, render.VerdictDocuments(summary.RunVerdicts(cells, e.Run))...)
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

// verdictWords are the verdicts, each workload with its answer in style s,
// kept together as one word so a line breaks between verdicts: "fp yes,
// compress no".
func (r listedRun) verdictWords(s summary.Style) []word {
	if len(r.Verdicts) == 0 {
		return []word{{text: "-"}}
	}
	var ws []word
	for i, v := range r.Verdicts {
		comma := ""
		if i < len(r.Verdicts)-1 {
			comma = ","
		}
		name := render.SensitivityName(v.Host) + " "
		ws = append(ws, word{text: name + string(v.Outcome) + comma, shown: name + s.Answer(v.Outcome) + comma})
	}
	return ws
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
	table, problems, relative := listTable(rows, o.Results, o.IO)
	if relative {
		fmt.Fprintf(o.IO.Out, "DIRECTORY under %s\n", o.Results)
	}
	if err := fitTable(o.IO.Out, table, o.IO.width()); err != nil {
		return err
	}
	// A problem's line says what to do about a run: a warning, wrapped
	// under the table with its continuations indented.
	for _, p := range problems {
		lines := wrapWords(textWords(p), o.IO.width()-4)
		for i := range lines {
			lines[i] = "    " + lines[i]
		}
		lines[0] = "  " + strings.TrimPrefix(lines[0], "    ")
		if err := termcolor.Warn(o.IO.Out, strings.Join(lines, "\n"), p); err != nil {
			return err
		}
	}
	return nil
}

// listTable is the table of runs rows, to fit io's width, and the problems
// to say under it. Where the table is too wide for its verdicts to have a
// column, QUICK, the least read column, is folded into STATE ("complete,
// quick"); then each DIRECTORY is named under the results directory dir
// (relative, said above the table); then SPEC is said with the verdicts
// ("contention: fp yes"); where even then they have none, each
// row's verdicts go under it (fitTable). Each verdict's answer is in io's
// style.
func listTable(rows []listedRun, dir string, io *IOStreams) ([]tableRow, []string, bool) {
	build := func(quickColumn, relative, specLast bool) ([]tableRow, []string) {
		head := []string{"DIRECTORY", "SPEC", "STARTED", "QUICK", "STATE", "CELL RUNS"}
		if !quickColumn {
			head = append(head[:3], head[4:]...)
		}
		if specLast {
			head = append(head[:1], head[2:]...)
		}
		var hw []word
		for _, h := range head {
			hw = append(hw, word{text: h})
		}
		last := []word{{text: "VERDICT"}}
		if specLast {
			last = []word{{text: "SPEC:"}, {text: "VERDICT"}}
		}
		table := []tableRow{{cells: hw, last: last}}
		var problems []string
		for _, r := range rows {
			started := "-"
			if !r.Started.IsZero() {
				started = r.Started.Format("2006-01-02 15:04:05Z")
			}
			quick, state := "-", r.stateText()
			if r.Quick {
				quick = "quick"
				if !quickColumn {
					state += ", quick"
				}
			}
			path := r.Path
			if rel, err := filepath.Rel(dir, r.Path); err == nil && relative && filepath.IsLocal(rel) {
				path = rel
			}
			cells := []string{path, orDash(r.Spec), started, quick, state, r.cellRunsText()}
			if !quickColumn {
				cells = append(cells[:3], cells[4:]...)
			}
			last := r.verdictWords(io.Verdicts)
			if specLast {
				cells = append(cells[:1], cells[2:]...)
				last = append([]word{{text: orDash(r.Spec) + ":"}}, last...)
			}
			var cw []word
			for _, c := range cells {
				cw = append(cw, word{text: c})
			}
			table = append(table, tableRow{cells: cw, last: last})
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
		return table, problems
	}
	for _, way := range []struct{ quick, relative, specLast bool }{{true, false, false}, {false, false, false}, {false, true, false}} {
		if table, problems := build(way.quick, way.relative, way.specLast); io.width()-tableOffset(table) >= minLast {
			return table, problems, way.relative
		}
	}
	table, problems := build(false, true, true)
	return table, problems, true
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
