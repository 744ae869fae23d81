package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/units"
)

// resultsPruneOptions are the settings of `qoslab results prune`.
type resultsPruneOptions struct {
	resultsOptions
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

func newCmdResultsPrune(f *Factory, runF func(context.Context, *resultsPruneOptions) error) *cobra.Command {
	o := &resultsPruneOptions{Now: time.Now}
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
	return resultsCommand(f, cmd, "results", &o.resultsOptions, o, resultsPruneRun, runF, func() error {
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

func resultsPruneRun(_ context.Context, o *resultsPruneOptions) error {
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
