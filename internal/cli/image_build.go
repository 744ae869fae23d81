package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/image"
)

// imageBuildOptions are the settings of `qoslab image build linux`.
type imageBuildOptions struct {
	imageOptions
	image.BuildSettings
}

func newCmdImageBuild(f *Factory, runF func(context.Context, *imageBuildOptions) error) *cobra.Command {
	o := &imageBuildOptions{}
	cmd := &cobra.Command{
		Use:   "build linux",
		Short: "Build a Linux microVM image (kernel + initramfs with the agent as /init)",
		Long: `Builds vmlinuz, initramfs.cpio.gz and manifest.json into the image store from a
recipe (default: the built-in vmimages/linux-microvm.yaml). A build that fails
leaves the previous image intact. A Debian kernel the kernel cache lacks is
fetched first (see qoslab image fetch-kernel).`,
		ValidArgs: []string{"linux"},
		Args: func(_ *cobra.Command, args []string) error {
			if err := kindArg(args, "linux", "image build"); err != nil {
				return usageErrorf("%v (macOS images come with `image create macos`)", err)
			}
			return nil
		},
	}
	kernelFlags(cmd, &o.BuildSettings, "", "guest architecture: amd64, arm64 (default: the recipe's)")
	cmd.Flags().StringVar(&o.GuestAgent, "guest-agent", "", "the linux agent to install as /init (default: bin/linux-ARCH/qoslab-agent beside qoslab)")
	return imageCommand(f, cmd, &o.imageOptions, o, imageBuildRun, runF)
}

func imageBuildRun(ctx context.Context, o *imageBuildOptions) error {
	bo, err := buildOptions(&o.imageOptions, o.BuildSettings, image.BuildSettings.Options)
	if err != nil {
		return err
	}
	m, err := image.Build(ctx, bo)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "built %s: kernel %s, %d modules, in %s\n", m.Name, m.KernelVersion, len(m.Modules), image.ImageDir(bo.StoreDir, m.Name))
	return nil
}
