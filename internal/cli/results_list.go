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

// listOptions are `qoslab results list`'s inputs.
type listOptions struct {
	resultsOptions
	// Format is --format, one of viewFormats; --json is --format json.
	Format string
}

func newCmdResultsList(f *Factory, runF func(context.Context, *listOptions) error) *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List results directories, oldest first, with each run's state and verdicts",
		Long: `list shows every results directory under --results, oldest first: its spec, when
it started, whether it was a --quick run, how it stands (complete, running, partial
with how many of its cell runs were measured, damaged, or unreadable), the timed
cell runs its samples hold (CELL RUNS, counted as the plan counts them; --json's
samples counts records, one per thread of a cell run) and the verdict of each workload it judged. Where nothing has run yet the list is
empty. The table fits the terminal (100 columns when it is no terminal); --format
md and csv give it with every column; --format json (or --json) prints the same
for scripts, each run's verdicts as summary.json has them.`,
		Args: noArgs,
	}
	formatFlags(cmd, &o.Format, &o.JSON, "print JSON: one object per run, verdicts as in summary.json")
	return resultsCommand(f, cmd, "results", &o.resultsOptions, o, resultsListRun, runF, func() error {
		return checkFormat(cmd, &o.Format, o.JSON)
	})
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

// verdictSpans are the verdicts, each workload with its answer in its
// outcome's tone, kept together so a line breaks between verdicts: "fp
// yes, compress no"; "-" for none.
func (r listedRun) verdictSpans() []render.Span {
	if len(r.Verdicts) == 0 {
		return []render.Span{render.Words("-")}
	}
	var spans []render.Span
	for i, v := range r.Verdicts {
		if i > 0 {
			spans = append(spans, render.Words(", "))
		}
		spans = append(spans, render.Span{Text: render.SensitivityName(v.Host) + " ", Keep: true},
			render.Toned(string(v.Outcome), summary.AnswerTone(v.Outcome)))
	}
	return spans
}

func resultsListRun(_ context.Context, o *listOptions) error {
	entries, err := results.ListPlanned(o.Results, experiment.PlannedOf)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	rows := []listedRun{}
	for _, e := range entries {
		rows = append(rows, describeRun(e))
	}
	switch {
	case o.Format == render.FormatJSON:
		return printJSON(o.IO.Out, rows)
	case o.Format == render.FormatCSV:
		return render.CSV(o.IO.Out, listTable(rows, o.Results, listLayout{quick: true}))
	case len(rows) == 0:
		fmt.Fprintf(o.IO.Out, "no results in %s yet; make some with `qoslab run`\n", o.Results)
		return nil
	case o.Format == render.FormatMarkdown:
		d := render.Document{Blocks: []render.Block{listTable(rows, o.Results, listLayout{quick: true})}}
		if problems := listProblems(rows); len(problems) > 0 {
			l := &render.List{}
			for _, p := range problems {
				l.Items = append(l.Items, render.Item{Spans: []render.Span{{Text: "warning:", Strong: true}, render.Words(" " + p)}})
			}
			d.Add(l)
		}
		return render.Markdown(o.IO.Out, d)
	}
	return listText(o, rows)
}

// listText writes the runs as a terminal shows them: the table fitted to
// its width (listFit), the results directory said above it where the
// table names each run under it, and under it each run's problem, a
// warning, its continuations indented.
func listText(o *listOptions, rows []listedRun) error {
	way := listFit(rows, o.Results, o.IO.width())
	if way.relative {
		fmt.Fprintf(o.IO.Out, "DIRECTORY under %s\n", o.Results)
	}
	d := render.Document{Blocks: []render.Block{listTable(rows, o.Results, way)}}
	if err := render.Text(o.IO.Out, d, o.IO.width(), o.IO.colored()); err != nil {
		return err
	}
	for _, p := range listProblems(rows) {
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

// listLayout is how the runs' table is laid out: QUICK a column of its
// own (else folded into STATE: "complete, quick"); each DIRECTORY named
// under the results directory (relative) or as it is; SPEC said with the
// verdicts ("contention: fp yes") rather than in a column.
type listLayout struct{ quick, relative, specLast bool }

// listFit is the layout of the runs' table at width: where the table is
// too wide for its verdicts to have a column beside the others
// (render.Fits), QUICK, the least read column, is folded into STATE; then
// each DIRECTORY is named under the results directory dir (said above the
// table); then SPEC is said with the verdicts; where even then they have
// no room, each row's verdicts go under it (render.Table's Trailing).
func listFit(rows []listedRun, dir string, width int) listLayout {
	for _, way := range []listLayout{{quick: true}, {}, {relative: true}} {
		if render.Fits(listTable(rows, dir, way), width) {
			return way
		}
	}
	return listLayout{relative: true, specLast: true}
}

// listTable is the table of runs rows laid out as way, its directories
// under the results directory dir where way is relative.
func listTable(rows []listedRun, dir string, way listLayout) *render.Table {
	t := &render.Table{Trailing: true}
	heads := []string{"DIRECTORY", "SPEC", "STARTED", "QUICK", "STATE", "CELL RUNS", "VERDICT"}
	for _, h := range heads {
		switch {
		case h == "QUICK" && !way.quick, h == "SPEC" && way.specLast:
		case h == "VERDICT" && way.specLast:
			t.Columns = append(t.Columns, render.Column{Head: "SPEC: VERDICT"})
		default:
			t.Columns = append(t.Columns, render.Column{Head: h})
		}
	}
	for _, r := range rows {
		started := "-"
		if !r.Started.IsZero() {
			started = r.Started.Format("2006-01-02 15:04:05Z")
		}
		quick, state := "-", r.stateText()
		if r.Quick {
			quick = "quick"
			if !way.quick {
				state += ", quick"
			}
		}
		path := r.Path
		if rel, err := filepath.Rel(dir, r.Path); err == nil && way.relative && filepath.IsLocal(rel) {
			path = rel
		}
		row := render.TextCells(path)
		if !way.specLast {
			row = append(row, render.Cell{Text: orDash(r.Spec)})
		}
		row = append(row, render.Cell{Text: started})
		if way.quick {
			row = append(row, render.Cell{Text: quick})
		}
		row = append(row, render.TextCells(state, r.cellRunsText())...)
		verdicts := r.verdictSpans()
		if way.specLast {
			verdicts = append([]render.Span{render.Words(orDash(r.Spec) + ": ")}, verdicts...)
		}
		t.Rows = append(t.Rows, append(row, render.SpanCell(verdicts...)))
	}
	return t
}

// listProblems are what to say under the table about the runs: a damaged
// or unreadable run's error, and how to finish a partial one.
func listProblems(rows []listedRun) []string {
	var problems []string
	for _, r := range rows {
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
	return problems
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
