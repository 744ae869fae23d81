package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/version"
)

// NewCmdRoot builds the qoslab command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	var configPath string
	root := &cobra.Command{
		Use:   "qoslab",
		Short: "Measure whether thread QoS survives virtualization",
		Long: `qoslab runs the same agent and workloads on the host and in VMs, at each QoS
class with 1..N threads, and contrasts the results.

Configuration: flags win over QOSLAB_* environment variables (QOSLAB_AGENT,
QOSLAB_BENCH_LOOPS, ...), which win over the config file: --config FILE, else
./qoslab.yaml, else $XDG_CONFIG_HOME/qoslab/config.yaml. Keys are the flag
names, under the command's section (bench.loops); agent is top level.`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			_, err := loadConfig(f.Config, configPath, f.Env, f.keys)
			return err
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &UsageError{Err: err} })
	root.PersistentFlags().StringVar(&configPath, "config", "", "configuration file (YAML)")
	root.PersistentFlags().String("agent", "", "the qoslab-agent binary to run on this machine (default: next to qoslab; env QOSLAB_AGENT)")
	f.bindFlags("", root.PersistentFlags())

	root.AddCommand(NewCmdRun(f, nil))
	root.AddCommand(NewCmdResults(f))
	root.AddCommand(NewCmdCompare(f))
	root.AddCommand(NewCmdPlot(f, nil))
	root.AddCommand(NewCmdReport(f, nil))
	root.AddCommand(NewCmdBench(f, nil))
	root.AddCommand(NewCmdAgent(f))
	root.AddCommand(newCmdContention(f))
	root.AddCommand(NewCmdImage(f))
	root.AddCommand(NewCmdVM(f))
	root.AddCommand(NewCmdDoctor(f))
	root.AddCommand(newCmdVZHost(f))
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	return root
}

// Execute runs qoslab with args and returns the process exit status:
// 0 success, 1 failure, 2 usage error, 130 interrupted.
func Execute(ctx context.Context, f *Factory, args []string) int {
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		fmt.Fprintln(f.IO.ErrOut, "qoslab: interrupted")
		return 130
	case IsUsageError(err):
		fmt.Fprintf(f.IO.ErrOut, "qoslab: %v\nRun 'qoslab --help' for usage.\n", err)
		return 2
	default:
		fmt.Fprintf(f.IO.ErrOut, "qoslab: %v\n", err)
		return 1
	}
}

// agentPath is the agent binary from --agent, QOSLAB_AGENT or the config file.
func (f *Factory) agentPath() string { return f.Config.GetString("agent") }
