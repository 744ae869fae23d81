package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv/vz"
	"github.com/qoslab/qoslab/internal/suggest"
	"github.com/qoslab/qoslab/internal/version"
)

// NewCmdRoot builds the qoslab command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "qoslab",
		Short: "Measure whether thread QoS survives virtualization",
		Long: `qoslab runs the same agent and workloads on the host and in VMs, at each QoS
class with 1..N threads, and contrasts the results.

Flags win over QOSLAB_* variables, which win over the config file (--config,
./qoslab.yaml, $XDG_CONFIG_HOME/qoslab/config.yaml). Keys are flag names under
their command (bench.loops, QOSLAB_BENCH_LOOPS); agent, results and image-store
are top level, shared by every command (QOSLAB_RESULTS).`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return usageError(f.Settings.CheckKeys())
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.PersistentFlags().StringVar(&f.Settings.Path, "config", "", "configuration file (YAML)")
	_ = root.MarkPersistentFlagFilename("config", "yaml", "yml")

	root.AddCommand(
		NewCmdRun(f, nil),
		NewCmdBench(f, nil),
		NewCmdResults(f),
		NewCmdSpecs(f),
		NewCmdCompare(f, nil),
		NewCmdPlot(f, nil),
		NewCmdReport(f, nil),
		NewCmdAgent(f),
		NewCmdImage(f),
		NewCmdVM(f),
		NewCmdDoctor(f, nil),
		hidden(experiment.SpinnerCommand+" N", func(cmd *cobra.Command, args []string) error {
			return experiment.SpinnerMain(cmd.Context(), args, f.IO.In, f.IO.Out)
		}),
		hidden(vz.HostCommand+" STATE_DIR", func(cmd *cobra.Command, args []string) error {
			return vz.HostMain(cmd.Context(), args[0], agent.ShutdownOver)
		}),
	)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	return root
}

// hidden is a command qoslab runs of itself (a helper process), not users.
func hidden(use string, run func(*cobra.Command, []string) error) *cobra.Command {
	return &cobra.Command{Use: use, Hidden: true, Args: cobra.ExactArgs(1), RunE: run}
}

// group makes cmd a command of subcommands: alone it prints its help; a
// word that is not one of them is a usage error with a did-you-mean.
func group(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.AddCommand(subs...)
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		msg := fmt.Sprintf("unknown command %q for %q: allowed %s", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		if g := suggest.Closest(args[0], names); g != "" {
			msg += fmt.Sprintf("; did you mean %s?", g)
		}
		return usageErrorf("%s", msg)
	}
	return cmd
}

// Execute runs qoslab with args and returns the process exit status:
// 0 success, 1 failure, 2 usage error, 128 + the signal's number when a
// signal stopped it (130 for Ctrl-C's SIGINT, 143 for SIGTERM).
func Execute(ctx context.Context, f *Factory, args []string) int {
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return 0
	case experiment.IsInterrupted(ctx, err):
		code, why := 130, "interrupted"
		if i := experiment.InterruptOf(ctx); i != nil {
			code, why = i.ExitCode(), i.Error()
		}
		fmt.Fprintf(f.IO.ErrOut, "qoslab: %s\n", why)
		var u *experiment.UnfinishedError
		if errors.As(err, &u) {
			fmt.Fprintln(f.IO.ErrOut, u.Hint())
		}
		return code
	case IsUsageError(err):
		fmt.Fprintf(f.IO.ErrOut, "qoslab: %v\nRun 'qoslab --help' for usage.\n", err)
		return 2
	default:
		fmt.Fprintf(f.IO.ErrOut, "qoslab: %v\n", err)
		return 1
	}
}
