package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/units"
)

func newCmdResultsShow(f *Factory, runF func(context.Context, *resultsOptions) error) *cobra.Command {
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
		Args: dirArgs(1),
	}
	o := &resultsOptions{}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the summary as JSON (summary.json's shape, with path and state)")
	cmd.Flags().BoolVar(&o.ExitStatus, "exit-status", false, exitStatusHelp)
	return resultsCommand(f, cmd, "results", o, o, resultsShowRun, runF)
}

func resultsShowRun(_ context.Context, o *resultsOptions) error {
	l, err := results.Load(o.Dirs[0])
	if err != nil {
		return err
	}
	held := results.Assess(experiment.PlannedOf(l.Dir), l.Run.Planned, l.Records, l.Torn, nil)
	state := results.StateComplete
	if h, ok := results.Running(l.Path); ok {
		state = fmt.Sprintf("running (%s)", h)
	} else if !l.Run.Complete() || held.State != results.StateComplete {
		state = held.Text() + " (finish it with qoslab run --resume " + l.Path + ")"
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
func showSummary(o *resultsOptions, l *results.Loaded, a summary.Summary, state string) error {
	if o.JSON {
		return printJSON(o.IO.Out, struct {
			Path  string `json:"path"`
			State string `json:"state"`
			summary.Document
		}{l.Path, state, summary.NewDocument(a)})
	}
	fmt.Fprintf(o.IO.Out, "%s: %s, started %s, %s\n\n", l.Path, l.Run.Name, l.Run.Started.Format("2006-01-02 15:04:05Z"), state)
	// summary.md is what the run wrote when it ended; samples that
	// changed since (a torn end, a cell run lost) make it stale, and the
	// summary is computed again from what the samples hold now.
	if stale := staleSummary(l, a); stale != "" {
		fmt.Fprintf(o.IO.ErrOut, "%s: %s is older than what its samples hold (%s): computed from its samples, %s\n", l.Path, results.SummaryMDFile, stale, heldText(l))
		return o.IO.Verdicts.WriteMarkdown(o.IO.Out, a)
	}
	if l.HasSummary() {
		md, err := os.ReadFile(filepath.Join(l.Path, results.SummaryMDFile))
		if err != nil {
			return err
		}
		_, err = io.WriteString(o.IO.Out, o.IO.Verdicts.Written(string(md), a))
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "%s has no %s yet: computed from its samples, %s\n", l.Path, results.SummaryMDFile, heldText(l))
	return o.IO.Verdicts.WriteMarkdown(o.IO.Out, a)
}

// heldText is what a run's samples hold, counted as its plan counts (cell
// runs) and as samples.jsonl does (records, one per thread of a cell run):
// "40 cell runs, 60 records".
func heldText(l *results.Loaded) string {
	return units.Plural(len(results.FinishedRuns(l.Records)), "cell run") + ", " + units.Plural(len(l.Records), "record")
}

// staleSummary says why the run's summary.md no longer matches its samples
// (it was written, then samples.jsonl changed), or "" when it does or the
// run has none. It compares what summary.json, written beside summary.md,
// counted with what the samples hold now (every cell run's total rate),
// never the files' modification times, which a copy (cp -r, a download)
// changes.
func staleSummary(l *results.Loaded, a summary.Summary) string {
	if !l.HasSummary() {
		return ""
	}
	if l.Torn != nil {
		return "a torn end"
	}
	b, err := os.ReadFile(filepath.Join(l.Path, results.SummaryJSONFile))
	if err != nil {
		return ""
	}
	var written struct {
		Cells []struct {
			TotalRates []float64 `json:"total_rates"`
		} `json:"cells"`
	}
	if json.Unmarshal(b, &written) != nil {
		return ""
	}
	var was, now []float64
	for _, c := range written.Cells {
		was = append(was, c.TotalRates...)
	}
	for _, c := range a.Cells {
		now = append(now, c.TotalRates...)
	}
	if len(was) != len(now) {
		return fmt.Sprintf("%s counted %s, %s holds %d", results.SummaryJSONFile, units.Plural(len(was), "cell run"), results.SamplesFile, len(now))
	}
	sort.Float64s(was)
	sort.Float64s(now)
	if !slices.Equal(was, now) {
		return results.SamplesFile + " changed after it"
	}
	return ""
}
