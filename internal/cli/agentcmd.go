package cli

import "github.com/spf13/cobra"

// NewCmdAgent builds `qoslab agent`.
func NewCmdAgent(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "agent", Short: "Talk to the qoslab agent"}, NewCmdAgentInfo(f, nil))
}
