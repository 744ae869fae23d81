package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/image/macos"
)

// imageImportOptions are the settings of `qoslab image import tart`.
type imageImportOptions struct {
	imageOptions
	Dir, Name string
}

func newCmdImageImport(f *Factory, runF func(context.Context, *imageImportOptions) error) *cobra.Command {
	o := &imageImportOptions{}
	cmd := &cobra.Command{
		Use: "import tart DIR", Short: "Make a VM bundle from an existing tart VM (which is left as it is)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 || args[0] != "tart" {
				return usageErrorf("image import takes: tart DIR")
			}
			o.Dir = args[1]
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Name, "name", "", "the image's name in the store (default: the tart VM's directory name)")
	return imageCommand(f, cmd, &o.imageOptions, o, imageImportRun, runF)
}

func imageImportRun(ctx context.Context, o *imageImportOptions) error {
	name := o.Name
	if name == "" {
		name = filepath.Base(filepath.Clean(o.Dir))
	}
	b, err := macos.ImportTart(ctx, macos.ImportTartOptions{Dir: o.Dir, Bundle: filepath.Join(o.Store, name), Progress: o.IO.ErrOut})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "imported %s into %s\n", o.Dir, b.Dir)
	return nil
}
