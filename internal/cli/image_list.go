package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/image"
)

// imageListOptions are the settings of `qoslab image list`.
type imageListOptions struct {
	imageOptions
	JSON bool
}

func newCmdImageList(f *Factory, runF func(context.Context, *imageListOptions) error) *cobra.Command {
	o := &imageListOptions{}
	cmd := &cobra.Command{Use: "list", Short: "List the images in the store", Args: noArgs}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return imageCommand(f, cmd, &o.imageOptions, o, imageListRun, runF)
}

func imageListRun(_ context.Context, o *imageListOptions) error {
	entries, err := image.List(o.Store)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(o.IO.Out, append([]image.Entry{}, entries...))
	}
	if len(entries) == 0 {
		fmt.Fprintf(o.IO.Out, "no images in %s; build one with `qoslab image build linux`\n", o.Store)
	}
	for _, e := range entries {
		if m := e.Manifest; m != nil {
			fmt.Fprintf(o.IO.Out, "%-20s %s kernel %s, agent %s, built %s\n", e.Name, m.Arch, m.KernelVersion, m.Agent.Version, m.BuiltAt.Format("2006-01-02 15:04"))
		} else {
			fmt.Fprintf(o.IO.Out, "%-20s unreadable: %s\n", e.Name, e.Err)
		}
	}
	return nil
}
