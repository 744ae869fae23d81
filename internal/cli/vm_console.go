package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/namedvm"
)

func newCmdVMConsole(f *Factory, runF func(context.Context, *vmOptions) error) *cobra.Command {
	o := &vmOptions{}
	cmd := &cobra.Command{Use: "console NAME", Short: "Print a named VM's console log"}
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "keep printing what the console writes, until Ctrl-C")
	return vmCommand(f, cmd, o, nil, nil, vmConsoleRun, runF)
}

func vmConsoleRun(ctx context.Context, o *vmOptions) error {
	file, err := namedvm.For(o.Env).OpenConsole(o.Name)
	if err != nil {
		return err
	}
	defer file.Close()
	for {
		if _, err := io.Copy(o.IO.Out, file); err != nil || !o.Follow {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}
