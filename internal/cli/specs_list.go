package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/spec"
)

func newCmdSpecsList(f *Factory, runF func(context.Context, *specsOptions) error) *cobra.Command {
	o := &specsOptions{IO: f.IO}
	cmd := &cobra.Command{Use: "list", Short: "Name and describe each built-in spec (run one with qoslab run --default NAME)", Args: noArgs}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print each spec as JSON, every default filled in, as run.json records it (with --quick's too)")
	return command(f, cmd, "specs", o, nil, nil, specsListRun, runF)
}

// listedSpec is a built-in spec as `specs list --json` prints it: the spec
// as run.json's "spec" holds it, and as --quick shrinks it.
type listedSpec struct {
	spec.Spec
	Quick spec.Spec `json:"quick_spec"`
}

func specsListRun(_ context.Context, o *specsOptions) error {
	if o.JSON {
		out := []listedSpec{}
		for _, name := range spec.DefaultSpecNames() {
			s, err := spec.DefaultSpec(name)
			if err != nil {
				return err
			}
			out = append(out, listedSpec{Spec: s, Quick: spec.Shrink(s)})
		}
		return printJSON(o.IO.Out, out)
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDESCRIPTION")
	for _, name := range spec.DefaultSpecNames() {
		s, err := spec.DefaultSpec(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, s.Description)
	}
	return tw.Flush()
}
