package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/spec"
)

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

func newCmdSpecsList(f *Factory, runF func(context.Context, *SpecsOptions) error) *cobra.Command {
	o := &SpecsOptions{IO: f.IO}
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

func specsListRun(_ context.Context, o *SpecsOptions) error {
	if o.JSON {
		out := []listedSpec{}
		for _, name := range spec.DefaultSpecNames() {
			s, err := spec.DefaultSpec(name)
			if err != nil {
				return err
			}
			out = append(out, listedSpec{Spec: s, Quick: spec.Quick(s)})
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

func newCmdSpecsShow(f *Factory, runF func(context.Context, *SpecsOptions) error) *cobra.Command {
	o := &SpecsOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a built-in spec's YAML exactly as built in, ready to edit and run with qoslab run --spec",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("give one built-in spec: %s", strings.Join(spec.DefaultSpecNames(), ", "))
			}
			o.Name = args[0]
			return nil
		},
		ValidArgs: spec.DefaultSpecNames(),
	}
	return command(f, cmd, "specs", o, nil, nil, specsShowRun, runF)
}

func specsShowRun(_ context.Context, o *SpecsOptions) error {
	if err := oneOf("spec", o.Name, spec.DefaultSpecNames()); err != nil {
		return err
	}
	b, err := spec.DefaultSpecSource(o.Name)
	if err != nil {
		return err
	}
	_, err = o.IO.Out.Write(b)
	return err
}
