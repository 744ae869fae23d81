package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/namedvm"
)

func newCmdVMStatus(f *Factory, runF func(context.Context, *vmOptions) error) *cobra.Command {
	o := &vmOptions{}
	cmd := &cobra.Command{Use: "status NAME", Short: "Show a named VM as the host sees it, and its agent's Info"}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return vmCommand(f, cmd, o, nil, nil, vmStatusRun, runF)
}

func vmStatusRun(ctx context.Context, o *vmOptions) error {
	mi, info, ierr, err := namedvm.For(o.Env).Status(ctx, o.Name)
	if err != nil {
		return err
	}
	if o.JSON {
		out := map[string]any{"machine": mi}
		if ierr == nil {
			out["agent"] = agent.InfoJSON(info)
		} else {
			out["agent_error"] = ierr.Error()
		}
		return printJSON(o.IO.Out, out)
	}
	fmt.Fprintf(o.IO.Out, "vm %s: running, %s, pid %d, %d vCPUs (host threads %v), %d MiB\n", o.Name, describeAccel(mi), mi.PID, mi.CPUs, mi.VCPUThreads, mi.MemoryMiB)
	fmt.Fprintf(o.IO.Out, "image: %s (kernel %s)\nconsole: %s\nscratch disk: %s (guest %s)\n", mi.Image.Name, mi.Image.KernelVersion, mi.ConsoleLog, mi.Disk, mi.GuestDisk)
	if ierr != nil {
		return fmt.Errorf("vm %s runs but its agent does not answer: %w", o.Name, ierr)
	}
	return printInfo(o.IO.Out, info)
}
