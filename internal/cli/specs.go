package cli

import "github.com/spf13/cobra"

// SpecsOptions are the settings of `qoslab specs list` and `specs show`.
type SpecsOptions struct {
	IO   *IOStreams
	Name string
	JSON bool
}

// NewCmdSpecs builds `qoslab specs`: the built-in experiment specs, to list
// and to print as the start of one's own.
func NewCmdSpecs(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "specs", Short: "List and print the built-in experiment specs"},
		newCmdSpecsList(f, nil), newCmdSpecsShow(f, nil))
}
