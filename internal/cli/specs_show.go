package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/spec"
)

func newCmdSpecsShow(f *Factory, runF func(context.Context, *specsOptions) error) *cobra.Command {
	o := &specsOptions{IO: f.IO}
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

func specsShowRun(_ context.Context, o *specsOptions) error {
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
