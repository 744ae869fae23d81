package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/image/macos"
)

// imageFetchOptions are the settings of `qoslab image fetch macos`.
type imageFetchOptions struct {
	imageOptions
	IPSW, Dir string
}

func newCmdImageFetch(f *Factory, runF func(context.Context, *imageFetchOptions) error) *cobra.Command {
	o := &imageFetchOptions{}
	cmd := &cobra.Command{
		Use: "fetch macos", Short: "Download a macOS restore image (resumable), and check it is one", ValidArgs: []string{"macos"},
		Args: func(_ *cobra.Command, args []string) error { return kindArg(args, "macos", "image fetch") },
	}
	cmd.Flags().StringVar(&o.IPSW, "ipsw", macos.LatestIPSW, "latest (the newest this Mac supports; needs macOS) or the restore image's URL")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "where to put it (default $XDG_CACHE_HOME/qoslab/ipsw)")
	return imageCommand(f, cmd, &o.imageOptions, o, imageFetchRun, runF)
}

func imageFetchRun(ctx context.Context, o *imageFetchOptions) error {
	if here := runtime.GOOS + "/" + runtime.GOARCH; o.IPSW == macos.LatestIPSW && here != "darwin/arm64" {
		// Only Virtualization.framework knows which image "latest" is; a
		// URL downloads anywhere, for a Mac to use.
		return fmt.Errorf("--ipsw latest needs a Mac (macOS 13+ on Apple silicon) to ask which restore image it supports; on %s, download one by its URL with --ipsw URL", here)
	}
	dir := o.Dir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(o.Store), "ipsw")
	}
	res, err := macos.Fetch(ctx, macos.FetchOptions{IPSW: o.IPSW, Dir: dir, Progress: o.IO.ErrOut})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "restore image macOS %s (%s) from %s\n", res.Image.Version, res.Image.Build, res.URL)
	// The path alone on stdout, for scripts.
	fmt.Fprintln(o.IO.Out, res.Download.Path)
	return nil
}
