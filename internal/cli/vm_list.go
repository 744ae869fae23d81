package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/namedvm"
)

func newCmdVMList(f *Factory, runF func(context.Context, *vmOptions) error) *cobra.Command {
	o := &vmOptions{}
	cmd := &cobra.Command{Use: "list", Short: "List named VMs and whether they run", Args: noArgs}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return vmCommand(f, cmd, o, nil, nil, vmListRun, runF)
}

func vmListRun(ctx context.Context, o *vmOptions) error {
	vms := namedvm.For(o.Env).List(ctx)
	if o.JSON {
		return printJSON(o.IO.Out, vms)
	}
	if len(vms) == 0 {
		fmt.Fprintln(o.IO.Out, "no named VMs; start one with `qoslab vm start NAME`")
	}
	for _, v := range vms {
		state := "stopped (remove it with `qoslab vm delete " + v.Name + "`)"
		if v.Running {
			state = fmt.Sprintf("running (pid %d, %s, %d vCPUs)", v.Machine.PID, describeAccel(*v.Machine), v.Machine.CPUs)
		}
		fmt.Fprintf(o.IO.Out, "%-20s %s\n", v.Name, state)
	}
	return nil
}
