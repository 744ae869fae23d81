package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
)

// AgentInfoOptions are the settings of `qoslab agent info`.
type AgentInfoOptions struct {
	IO        *IOStreams
	AgentPath string
	JSON      bool
	// Start starts the agent to ask; tests replace it.
	Start func(ctx context.Context, path string) (infoAgent, error)
}

type infoAgent interface {
	Info(ctx context.Context) (*agentpb.InfoReply, error)
	Close() error
}

// NewCmdAgent builds `qoslab agent`.
func NewCmdAgent(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "Talk to the qoslab agent"}
	cmd.AddCommand(NewCmdAgentInfo(f, nil))
	return cmd
}

// NewCmdAgentInfo builds `qoslab agent info`.
func NewCmdAgentInfo(f *Factory, runF func(context.Context, *AgentInfoOptions) error) *cobra.Command {
	opts := &AgentInfoOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Print what the local agent reports about this machine",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.AgentPath = f.agentPath()
			opts.Start = func(ctx context.Context, path string) (infoAgent, error) {
				p, err := agent.FindAgent(path)
				if err != nil {
					return nil, err
				}
				return agent.StartLocal(ctx, agent.LocalOptions{Path: p, Stderr: f.IO.ErrOut})
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return agentInfoRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the Info message as JSON")
	return cmd
}

func agentInfoRun(ctx context.Context, o *AgentInfoOptions) (err error) {
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
		_, err = fmt.Fprintf(o.IO.Out, "%s\n", infoJSON(info))
		return err
	}
	return printInfo(o.IO, info)
}

func printInfo(io *IOStreams, i *agentpb.InfoReply) error {
	virt := "no"
	if i.GetVirtualized() {
		virt = "yes"
	}
	var levels []string
	for _, l := range i.GetPerfLevels() {
		levels = append(levels, fmt.Sprintf("%s: %d CPUs", l.GetName(), l.GetLogicalCpus()))
	}
	rows := [][2]string{
		{"agent", fmt.Sprintf("%s (protocol %d.%d, pid %d)", i.GetAgentVersion(), i.GetProtocol().GetMajor(), i.GetProtocol().GetMinor(), i.GetPid())},
		{"host", i.GetHostname()},
		{"os", fmt.Sprintf("%s %s/%s", i.GetOsVersion(), i.GetOs(), i.GetArch())},
		{"cpu", i.GetCpuModel()},
		{"logical cpus", fmt.Sprint(i.GetLogicalCpus())},
		{"core types", strings.Join(levels, "; ")},
		{"memory", fmt.Sprintf("%.1f GiB", float64(i.GetMemoryBytes())/(1<<30))},
		{"virtualized", fmt.Sprintf("%s (%s)", virt, i.GetVirtualization())},
		{"qos", i.GetQosSupport()},
		{"workloads", strings.Join(i.GetWorkloads(), ", ")},
		{"codecs", strings.Join(i.GetCodecs(), ", ")},
		{"mmul", i.GetMmulImpl()},
	}
	for _, r := range rows {
		if _, err := fmt.Fprintf(io.Out, "%-13s %s\n", r[0]+":", r[1]); err != nil {
			return err
		}
	}
	return nil
}
