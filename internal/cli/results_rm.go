package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/results"
)

// resultsRmOptions are the settings of `qoslab results rm`.
type resultsRmOptions struct {
	resultsOptions
}

func newCmdResultsRm(f *Factory, runF func(context.Context, *resultsRmOptions) error) *cobra.Command {
	o := &resultsRmOptions{}
	cmd := &cobra.Command{
		Use:   "rm DIR|latest...",
		Short: "Remove results directories (not one a run is writing)",
		Long: `rm removes the results directories named, whole. It checks them all first and
removes none when one is not a qoslab results directory (no run.json) or a run
or resume is writing it (it holds the directory's lock).`,
		Example: `  qoslab results rm qoslab-results/contention-20261124T224900Z
  qoslab results rm latest`,
		Args: dirArgs(0),
	}
	return resultsCommand(f, cmd, "results", &o.resultsOptions, o, resultsRmRun, runF)
}

func resultsRmRun(_ context.Context, o *resultsRmOptions) error {
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
