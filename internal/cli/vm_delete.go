package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/namedvm"
)

func newCmdVMDelete(f *Factory, runF func(context.Context, *vmOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "delete NAME", Short: "Remove a stopped named VM, its scratch disk and console log"}
	return vmCommand(f, cmd, &vmOptions{}, nil, nil, vmDeleteRun, runF)
}

func vmDeleteRun(ctx context.Context, o *vmOptions) error {
	if err := namedvm.For(o.Env).Delete(ctx, o.Name); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "vm %s deleted\n", o.Name)
	return nil
}
