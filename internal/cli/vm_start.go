package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/namedvm"
)

func newCmdVMStart(f *Factory, runF func(context.Context, *vmOptions) error) *cobra.Command {
	o := &vmOptions{}
	var v vmFlags
	var src sources
	cmd := &cobra.Command{Use: "start NAME", Short: "Boot a named VM from an image and leave it running"}
	v.add(f, cmd, false)
	return vmCommand(f, cmd, o, &src, func() (err error) {
		o.VM, o.Env, err = v.parse(src)
		return err
	}, vmStartRun, runF)
}

func vmStartRun(ctx context.Context, o *vmOptions) error {
	m, info, err := namedvm.Start(ctx, namedvm.VM{Name: o.Name, VM: o.VM, Env: o.Env}, o.IO.ErrOut)
	if err != nil {
		return err
	}
	mi := m.Info()
	fmt.Fprintf(o.IO.Out, "vm %s running: pid %d, accel %s, agent answered %.2f s after start\n", o.Name, mi.PID, mi.Accel, float64(mi.BootNs)/1e9)
	fmt.Fprintf(o.IO.Out, "guest: %s\n", agent.Describe(info))
	fmt.Fprintf(o.IO.Out, "measure in it with: qoslab bench --target vm --vm %s\n", o.Name)
	return nil
}
