package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/spec"
)

// agentInfoOptions are the settings of `qoslab agent info`.
type agentInfoOptions struct {
	IO        *IOStreams
	AgentPath string
	JSON      bool
	// Start starts the agent to ask; tests replace it.
	Start func(ctx context.Context, path string) (experiment.Target, error)
}

// newCmdAgentInfo builds `qoslab agent info`.
func newCmdAgentInfo(f *Factory, runF func(context.Context, *agentInfoOptions) error) *cobra.Command {
	o := &agentInfoOptions{IO: f.IO, Start: func(ctx context.Context, path string) (experiment.Target, error) {
		return experiment.StartHostAgent(ctx, path, spec.Spec{}, f.IO.ErrOut)
	}}
	cmd := &cobra.Command{Use: "info", Short: "Print what the local agent reports about this machine", Args: noArgs}
	cmd.Flags().StringVar(&o.AgentPath, "agent", "", "the qoslab-agent binary to run on this machine (default: next to qoslab)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the Info message as JSON")
	return command(f, cmd, "agent", o, nil, nil, agentInfoRun, runF)
}

func agentInfoRun(ctx context.Context, o *agentInfoOptions) (err error) {
	ag, err := o.Start(ctx, o.AgentPath)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := ag.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	info, err := ag.Info(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		_, err = fmt.Fprintf(o.IO.Out, "%s\n", agent.InfoJSON(info))
		return err
	}
	return printInfo(o.IO.Out, info)
}
