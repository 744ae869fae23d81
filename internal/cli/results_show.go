package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/units"
)

// showOptions are `qoslab results show`'s inputs.
type showOptions struct {
	resultsOptions
	// Format is --format, one of render.Formats; --json is --format json.
	Format string
}

func newCmdResultsShow(f *Factory, runF func(context.Context, *showOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show DIR|latest",
		Short: "Print a run's summary: the answer first, fitted to the terminal (or as summary.md, JSON, CSV)",
		Long: `show prints a run's summary, computed from its samples: the verdicts first, each
with its next step when it is not yes, then the findings, the warnings and a
table per workload, fitted to the terminal's width (100 columns when it is no
terminal: the spread and CPU columns give way first, --format md has them all);
verdicts and warnings are coloured on a terminal.

--format md prints summary.md as the run wrote it (or computed, for a run that
has not written one yet: still running, or stopped); --format json the summary
as summary.json has it (computed from the samples, so always current), with the
directory and how the run stands (--json says the same); --format csv
summary.csv's rows, computed from the samples.

` + exitStatusDoc,
		Example: `  qoslab results show latest
  qoslab results show --format md latest > summary.md
  qoslab results show --format json latest | jq '.verdicts[].outcome'
  qoslab results show --exit-status qoslab-results/contention-20261124T224900Z`,
		Args: dirArgs(1),
	}
	o := &showOptions{}
	cmd.Flags().StringVar(&o.Format, "format", render.FormatText, "output format: "+strings.Join(render.Formats, ", ")+" (text fits the terminal; md is summary.md)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the summary as JSON (summary.json's shape, with path and state): --format json")
	cmd.Flags().BoolVar(&o.ExitStatus, "exit-status", false, exitStatusHelp)
	complete(cmd, "format", func() []string { return render.Formats })
	return resultsCommand(f, cmd, "results", &o.resultsOptions, o, resultsShowRun, runF, func() error {
		if o.JSON {
			if cmd.Flags().Changed("format") && o.Format != render.FormatJSON {
				return usageErrorf("--json is --format json: it cannot go with --format %s", o.Format)
			}
			o.Format = render.FormatJSON
		}
		return oneOf("--format", o.Format, render.Formats)
	})
}

func resultsShowRun(_ context.Context, o *showOptions) error {
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

// showSummary prints the run's summary in o's format: the terminal's view
// (showText); summary.md (showMarkdown); as JSON, summary.json's document
// computed now with the run's path and state; as CSV, summary.csv's rows
// computed now.
func showSummary(o *showOptions, l *results.Loaded, a summary.Summary, state string) error {
	switch o.Format {
	case render.FormatJSON:
		return printJSON(o.IO.Out, struct {
			Path  string `json:"path"`
			State string `json:"state"`
			summary.Document
		}{l.Path, state, summary.NewDocument(a)})
	case render.FormatCSV:
		return summary.WriteCSV(o.IO.Out, a)
	case render.FormatMarkdown:
		return showMarkdown(o, l, a, state)
	}
	return showText(o, l, a, state)
}

// showHead is the line that opens the summary: the run's path, name,
// start and how it stands.
func showHead(l *results.Loaded, state string) string {
	return fmt.Sprintf("%s: %s, started %s, %s", l.Path, l.Run.Name, l.Run.Started.Format("2006-01-02 15:04:05Z"), state)
}

// showText prints the run's summary as a terminal shows it (summary.View),
// fitted to Out's width and coloured where Out gets colour. It is always
// computed from the samples, and says so where summary.md is missing or
// stale, as showMarkdown does.
func showText(o *showOptions, l *results.Loaded, a summary.Summary, state string) error {
	noteComputed(o, l, a)
	d := summary.View(a)
	d.Blocks = append([]render.Block{render.Para(render.Words(showHead(l, state)))}, d.Blocks...)
	return render.Text(o.IO.Out, d, o.IO.width(), o.IO.colored())
}

// showMarkdown prints summary.md as the run wrote it, or computed when it
// wrote none or it is stale (the run's document, summary.View, as
// Markdown), under the line that names the run. Markdown is a file's
// format: it is never coloured, on a terminal either.
func showMarkdown(o *showOptions, l *results.Loaded, a summary.Summary, state string) error {
	fmt.Fprintf(o.IO.Out, "%s\n\n", showHead(l, state))
	if noteComputed(o, l, a) {
		return summary.WriteMarkdown(o.IO.Out, a)
	}
	md, err := os.ReadFile(filepath.Join(l.Path, results.SummaryMDFile))
	if err != nil {
		return err
	}
	_, err = o.IO.Out.Write(md)
	return err
}

// noteComputed says on stderr when the run's summary.md cannot be shown:
// it has none yet, or samples changed after it was written (a torn end, a
// cell run lost), so the summary is computed again from what the samples
// hold now; it reports whether it said so.
func noteComputed(o *showOptions, l *results.Loaded, a summary.Summary) bool {
	if stale := staleSummary(l, a); stale != "" {
		fmt.Fprintf(o.IO.ErrOut, "%s: %s is older than what its samples hold (%s): computed from its samples, %s\n", l.Path, results.SummaryMDFile, stale, heldText(l))
		return true
	}
	if !l.HasSummary() {
		fmt.Fprintf(o.IO.ErrOut, "%s has no %s yet: computed from its samples, %s\n", l.Path, results.SummaryMDFile, heldText(l))
		return true
	}
	return false
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
