package cli

import "github.com/spf13/cobra"

// specsOptions are the settings of `qoslab specs list` and `specs show`.
type specsOptions struct {
	IO   *IOStreams
	Name string
	JSON bool
}

// newCmdSpecs builds `qoslab specs`: the built-in experiment specs, to list
// and to print as the start of one's own.
func newCmdSpecs(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "specs", Short: "List and print the built-in experiment specs"},
		newCmdSpecsList(f, nil), newCmdSpecsShow(f, nil))
}
