package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/image/macos"
	"github.com/qoslab/qoslab/internal/units"
)

// imageCreateOptions are the settings of `qoslab image create macos`.
type imageCreateOptions struct {
	imageOptions
	IPSW, Name, Disk, Memory string
	CPUs                     int
}

func newCmdImageCreate(f *Factory, runF func(context.Context, *imageCreateOptions) error) *cobra.Command {
	o := &imageCreateOptions{}
	cmd := &cobra.Command{
		Use: "create macos", Short: "Install macOS from a restore image into a new VM bundle (macOS 13+ on Apple silicon)", ValidArgs: []string{"macos"},
		Args: func(_ *cobra.Command, args []string) error { return kindArg(args, "macos", "image create") },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.IPSW, "ipsw", "", "the restore image (.ipsw)")
	fl.StringVar(&o.Name, "name", "macos", "the image's name in the store")
	fl.StringVar(&o.Disk, "disk", "64GiB", "the guest's disk (sparse)")
	fl.IntVar(&o.CPUs, "cpus", 0, "vCPUs (default: within what the image and the framework allow)")
	fl.StringVar(&o.Memory, "memory", "", "memory, e.g. 8GiB (default: within what the image and the framework allow)")
	_ = cmd.MarkFlagFilename("ipsw", "ipsw")
	return imageCommand(f, cmd, &o.imageOptions, o, imageCreateRun, runF)
}

func imageCreateRun(ctx context.Context, o *imageCreateOptions) error {
	if o.IPSW == "" {
		return usageErrorf("image create macos needs --ipsw FILE (get one with `qoslab image fetch macos`)")
	}
	diskBytes, err := units.ParseSize(o.src.Name("disk"), o.Disk, 1<<44)
	if err != nil {
		return wrapUsage(err)
	}
	var mem int64
	if o.Memory != "" {
		if mem, err = units.ParseSize(o.src.Name("memory"), o.Memory, 1<<40); err != nil {
			return wrapUsage(err)
		}
	}
	if o.CPUs < 0 {
		return usageErrorf("%s %d: give a positive count, or 0 for the default", o.src.Name("cpus"), o.CPUs)
	}
	b, err := macos.Create(ctx, macos.CreateOptions{
		IPSW: o.IPSW, Bundle: filepath.Join(o.Store, o.Name), DiskBytes: diskBytes, CPUs: o.CPUs, MemoryBytes: uint64(mem), Progress: o.IO.ErrOut,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "created %s in %s; install the agent with: sudo qoslab image provision %s\n", o.Name, b.Dir, o.Name)
	return nil
}
