package cli

import "github.com/spf13/cobra"

// newCmdAgent builds `qoslab agent`.
func newCmdAgent(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "agent", Short: "Talk to the qoslab agent"}, newCmdAgentInfo(f, nil))
}
