package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/namedvm"
)

func newCmdVMStop(f *Factory, runF func(context.Context, *vmOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "stop NAME", Short: "Power a named VM off (by force when it does not answer)"}
	return vmCommand(f, cmd, &vmOptions{}, nil, nil, vmStopRun, runF)
}

func vmStopRun(ctx context.Context, o *vmOptions) error {
	m, err := namedvm.For(o.Env).Attach(ctx, o.Name)
	var gone *namedvm.NotRunningError
	if errors.As(err, &gone) {
		// Stopping what is already stopped is done: say so, and clear
		// what its hypervisor left behind.
		removed, cerr := namedvm.For(o.Env).CleanStopped(o.Name)
		if cerr != nil {
			return fmt.Errorf("vm %s had already stopped (%w), but cleaning up after it failed: %w", o.Name, gone.Err, cerr)
		}
		fmt.Fprintf(o.IO.Out, "vm %s had already stopped (%v)", o.Name, gone.Err)
		if len(removed) > 0 {
			fmt.Fprintf(o.IO.Out, "; removed its stale %s", strings.Join(removed, ", "))
		}
		fmt.Fprintln(o.IO.Out)
		return nil
	}
	if err != nil {
		return err
	}
	if err := namedvm.Stop(m); err != nil {
		return fmt.Errorf("stop vm %s: %w", o.Name, err)
	}
	fmt.Fprintf(o.IO.Out, "vm %s stopped\n", o.Name)
	return nil
}
