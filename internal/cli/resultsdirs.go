package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/units"
)

func newCmdResultsList(f *Factory, runF func(context.Context, *ResultsOptions) error) *cobra.Command {
	o := &ResultsOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List results directories, oldest first, with each run's state and verdicts",
		Long: `list shows every results directory under --results, oldest first: its spec, when
it started, whether it was a --quick run, how it stands (complete, running, partial
with how many of its cell runs were measured, damaged, or unreadable), its samples
and the verdict of each workload it judged. Where nothing has run yet the list is
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
	Planned  int                `json:"planned"`
	Measured int                `json:"measured"`
	Verdicts []analysis.Verdict `json:"verdicts"`
}

// describeRun reads what list shows of an entry beyond results.List's.
func describeRun(e results.Entry) listedRun {
	r := listedRun{Listing: e.Listing(), Planned: e.Run.Planned, Verdicts: []analysis.Verdict{}}
	if r.Spec == "" {
		r.Spec = e.Run.Name // run.json's spec is unreadable or empty
	}
	var spec struct {
		Quick bool `json:"quick"`
	}
	_ = json.Unmarshal(e.Run.Spec, &spec)
	r.Quick = spec.Quick
	switch {
	case e.Err != nil && e.Run.Started.IsZero():
		r.State = "unreadable"
		return r
	case e.Err != nil:
		r.State = "damaged"
		return r
	}
	d, err := results.Open(e.Path)
	if err != nil {
		r.State, r.Error = "unreadable", err.Error()
		return r
	}
	recs, _, err := d.ReadSamples()
	if err != nil {
		r.State, r.Error = "damaged", err.Error()
		return r
	}
	for _, reps := range results.FinishedRepeats(recs) {
		r.Measured += len(reps)
	}
	switch {
	case e.Holder != nil:
		r.State = "running"
	case e.Run.Complete():
		r.State = "complete"
	default:
		r.State = "partial"
	}
	cells := analysis.SortCells(results.Cells(results.Samples(recs)))
	r.Verdicts = append(r.Verdicts, summary.Verdicts(cells, "host", "vm", summary.MarginsOf(e.Run))...)
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

// verdictText is one word per judged workload: "fp yes, compress no".
func (r listedRun) verdictText() string {
	if len(r.Verdicts) == 0 {
		return "-"
	}
	var parts []string
	for _, v := range r.Verdicts {
		parts = append(parts, analysis.WorkloadText(v.Host.Workload, v.Host.Phase)+" "+string(v.Outcome))
	}
	return strings.Join(parts, ", ")
}

func resultsListRun(_ context.Context, o *ResultsOptions) error {
	entries, err := results.List(o.Results)
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
	fmt.Fprintln(tw, "DIRECTORY\tSPEC\tSTARTED\tQUICK\tSTATE\tSAMPLES\tVERDICT")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Path, orDash(r.Spec), started, quick, r.stateText(), r.Samples, r.verdictText())
		switch r.State {
		case "damaged", "unreadable":
			problems = append(problems, fmt.Sprintf("%s: %s", r.Path, r.Error))
		case "partial":
			problems = append(problems, fmt.Sprintf("%s: finish it with qoslab run --resume %s", r.Path, r.Path))
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

// ResultsRmOptions are the settings of `qoslab results rm`.
type ResultsRmOptions struct {
	ResultsOptions
}

func newCmdResultsRm(f *Factory, runF func(context.Context, *ResultsRmOptions) error) *cobra.Command {
	o := &ResultsRmOptions{}
	cmd := &cobra.Command{
		Use:   "rm DIR|latest...",
		Short: "Remove results directories (not one a run is writing)",
		Long: `rm removes the results directories named, whole. It checks them all first and
removes none when one is not a qoslab results directory (no run.json) or a run
or resume is writing it (it holds the directory's lock).`,
		Example: `  qoslab results rm qoslab-results/contention-20261124T224900Z
  qoslab results rm latest`,
		Args: dirArgs(1, 0),
	}
	return resultsCommand(f, cmd, "results", &o.ResultsOptions, o, resultsRmRun, runF)
}

func resultsRmRun(_ context.Context, o *ResultsRmOptions) error {
	dirs := slices.Compact(slices.Clone(o.Dirs))
	var locked []*results.Dir
	defer func() {
		for _, d := range locked {
			d.Unlock()
		}
	}()
	var refused []string
	for _, p := range dirs {
		d, err := removable(p)
		if err != nil {
			refused = append(refused, err.Error())
			continue
		}
		locked = append(locked, d)
	}
	if len(refused) > 0 {
		return fmt.Errorf("removed nothing: %s", strings.Join(refused, "; "))
	}
	return removeDirs(o.IO.Out, locked, "removed")
}

// removable opens the results directory at path and takes its lock, so
// that no run or resume starts in it while it is removed; it refuses what
// is not a results directory and one in use.
func removable(path string) (*results.Dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", path)
	}
	if _, err := os.Stat(filepath.Join(path, results.RunFile)); err != nil {
		return nil, fmt.Errorf("%s has no %s: not a qoslab results directory, left alone", path, results.RunFile)
	}
	d := &results.Dir{Path: path}
	if _, err := d.Lock(); err != nil {
		var inUse *results.InUseError
		if errors.As(err, &inUse) {
			return nil, fmt.Errorf("%s is being written by qoslab (pid %d): stop that run first", path, inUse.Holder.PID)
		}
		return nil, err
	}
	return d, nil
}

// removeDirs removes each locked results directory and says so, then the
// space freed.
func removeDirs(w io.Writer, dirs []*results.Dir, verb string) error {
	var freed int64
	for _, d := range dirs {
		size := dirSize(d.Path)
		if err := os.RemoveAll(d.Path); err != nil {
			return fmt.Errorf("remove %s: %w", d.Path, err)
		}
		freed += size
		fmt.Fprintf(w, "%s %s\n", verb, d.Path)
	}
	if len(dirs) > 1 {
		fmt.Fprintf(w, "%s %s, %s\n", verb, dirCount(len(dirs)), mib(freed))
	}
	return nil
}

func dirSize(path string) int64 {
	var n int64
	_ = filepath.WalkDir(path, func(_ string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() {
			if info, err := de.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }

// ResultsPruneOptions are the settings of `qoslab results prune`.
type ResultsPruneOptions struct {
	ResultsOptions
	// Keep is how many of the newest runs stay (-1: not given); OlderThan
	// removes runs started longer ago (0: not given). With both, a run
	// goes when it is outside the newest Keep and older.
	Keep      int
	OlderThan time.Duration
	DryRun    bool
	// Now is the time OlderThan counts from.
	Now func() time.Time

	olderThan string
}

func newCmdResultsPrune(f *Factory, runF func(context.Context, *ResultsPruneOptions) error) *cobra.Command {
	o := &ResultsPruneOptions{Now: time.Now}
	cmd := &cobra.Command{
		Use:   "prune --keep N | --older-than DURATION [--dry-run]",
		Short: "Remove old results directories: all but the newest N, or those older than a duration",
		Long: `prune removes results directories under --results: with --keep N all but the N
newest (by start time), with --older-than DURATION those started longer ago than
DURATION (30d, 2w, 36h; d is a day, w a week), with both those that are both.
A run that is being written is never removed, nor a directory without run.json.
--dry-run lists what would go and removes nothing.`,
		Example: `  qoslab results prune --keep 10
  qoslab results prune --older-than 30d --dry-run`,
		Args: noArgs,
	}
	cmd.Flags().IntVar(&o.Keep, "keep", -1, "keep the `N` newest runs, remove the others")
	cmd.Flags().StringVar(&o.olderThan, "older-than", "", "remove runs started longer ago than `DURATION` (30d, 2w, 36h)")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "list what would be removed, and remove nothing")
	return resultsCommand(f, cmd, "results", &o.ResultsOptions, o, resultsPruneRun, runF, func() error {
		if o.olderThan != "" {
			d, err := parseAge(o.olderThan)
			if err != nil {
				return usageErrorf("--older-than %q: %v", o.olderThan, err)
			}
			o.OlderThan = d
		}
		switch {
		case o.Keep < -1 || o.Keep == -1 && cmd.Flags().Changed("keep"):
			return usageErrorf("--keep %d: allowed 0 or more runs to keep", o.Keep)
		case o.Keep < 0 && o.OlderThan == 0:
			return usageErrorf("prune needs --keep N (keep the N newest runs) or --older-than DURATION (remove runs older than that), or both")
		}
		return nil
	})
}

// parseAge reads a duration as Go does (36h, 90m), and in days and weeks
// (30d, 2w, 1w3d).
func parseAge(s string) (time.Duration, error) {
	var total time.Duration
	rest := s
	for rest != "" {
		i := strings.IndexAny(rest, "dw")
		if i < 0 {
			break
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("want a duration such as 30d, 2w or 36h")
		}
		unit := 24 * time.Hour
		if rest[i] == 'w' {
			unit *= 7
		}
		total += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	if rest != "" {
		d, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("want a duration such as 30d, 2w or 36h")
		}
		total += d
	}
	if total <= 0 {
		return 0, fmt.Errorf("want a duration longer than 0, such as 30d")
	}
	return total, nil
}

func resultsPruneRun(_ context.Context, o *ResultsPruneOptions) error {
	entries, err := results.List(o.Results)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(o.IO.Out, "no results in %s: nothing to prune\n", o.Results)
		return nil
	}
	if err != nil {
		return err
	}
	// Newest first; only directories whose run.json reads take part.
	var runs []results.Entry
	for _, e := range entries {
		if !e.Run.Started.IsZero() {
			runs = append(runs, e)
		}
	}
	slices.Reverse(runs)
	cutoff := o.Now().Add(-o.OlderThan)
	var doomed []results.Entry
	for i, e := range runs {
		if o.Keep >= 0 && i < o.Keep {
			continue
		}
		if o.OlderThan > 0 && !e.Run.Started.Before(cutoff) {
			continue
		}
		if e.Holder != nil {
			fmt.Fprintf(o.IO.ErrOut, "kept %s: a run is writing it (pid %d)\n", e.Path, e.Holder.PID)
			continue
		}
		doomed = append(doomed, e)
	}
	if len(doomed) == 0 {
		fmt.Fprintf(o.IO.Out, "nothing to prune in %s (%s)\n", o.Results, units.Plural(len(runs), "run"))
		return nil
	}
	if o.DryRun {
		var size int64
		for _, e := range doomed {
			size += dirSize(e.Path)
			fmt.Fprintf(o.IO.Out, "would remove %s (started %s)\n", e.Path, e.Run.Started.UTC().Format("2006-01-02 15:04Z"))
		}
		fmt.Fprintf(o.IO.Out, "would remove %s of %d, %s; nothing was removed (--dry-run)\n", dirCount(len(doomed)), len(runs), mib(size))
		return nil
	}
	var locked []*results.Dir
	defer func() {
		for _, d := range locked {
			d.Unlock()
		}
	}()
	for _, e := range doomed {
		d, err := removable(e.Path)
		if err != nil {
			// Started since it was listed: leave it.
			fmt.Fprintf(o.IO.ErrOut, "kept %s\n", err)
			continue
		}
		locked = append(locked, d)
	}
	return removeDirs(o.IO.Out, locked, "removed")
}

// dirCount is "1 results directory", "3 results directories".
func dirCount(n int) string {
	if n == 1 {
		return "1 results directory"
	}
	return strconv.Itoa(n) + " results directories"
}
