package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/results"
)

// resultsOptions are the settings of `qoslab results list|show` and
// `qoslab compare`.
type resultsOptions struct {
	IO *IOStreams
	// Results is where results directories are (the shared results
	// setting); Dirs are the ones named, "latest" for the newest there.
	Results string
	Dirs    []string
	JSON    bool
	// ExitStatus makes results show exit by the run's verdicts
	// (verdictStatus).
	ExitStatus bool
}

// newCmdResults builds `qoslab results`.
func newCmdResults(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "results", Short: "List, show and remove the results of qoslab run and bench --save"},
		newCmdResultsList(f, nil), newCmdResultsShow(f, nil), newCmdResultsRm(f, nil), newCmdResultsPrune(f, nil))
}

// resultsCommand finishes a command that reads results directories: the
// results location, and DIR arguments where "latest" is the newest run and
// a bare run name is that run in the results location (results.Named).
func resultsCommand[O any](f *Factory, cmd *cobra.Command, section string, o *resultsOptions, opts *O, run, runF func(context.Context, *O) error, checks ...func() error) *cobra.Command {
	o.IO = f.IO
	cmd.Flags().StringVar(&o.Results, "results", "qoslab-results", "where results directories are")
	_ = cmd.MarkFlagDirname("results")
	cmd.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append([]string{"latest"}, results.Paths(o.Results)...), cobra.ShellCompDirectiveFilterDirs
	}
	return command(f, cmd, section, opts, nil, func(args []string) error {
		o.Dirs = args
		for i, d := range o.Dirs {
			if d != "latest" {
				o.Dirs[i] = results.Named(o.Results, d)
				continue
			}
			latest, err := results.Latest(o.Results)
			if err != nil {
				return err
			}
			o.Dirs[i] = latest
		}
		for _, check := range checks {
			if err := check(); err != nil {
				return err
			}
		}
		return nil
	}, run, runF)
}
