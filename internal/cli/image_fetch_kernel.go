package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/image"
)

// imageFetchKernelOptions are the settings of `qoslab image fetch-kernel`.
type imageFetchKernelOptions struct {
	imageOptions
	image.BuildSettings
}

func newCmdImageFetchKernel(f *Factory, runF func(context.Context, *imageFetchKernelOptions) error) *cobra.Command {
	o := &imageFetchKernelOptions{}
	cmd := &cobra.Command{
		Use:   "fetch-kernel",
		Short: "Fetch the recipe's Debian kernel into the kernel cache, in Go, from a Debian mirror (no apt needed)",
		Long: `Reads the suite's InRelease and verifies its signature against Debian's archive
keys (they ship with qoslab; this machine's Debian keyring is used too where
there is one): an index with no good signature by a valid key is refused
unless --insecure-unsigned-index. Then the Packages index it lists (checked
against its SHA256), resolves linux-image-ARCH to the kernel package it
depends on, downloads the .deb (checked against its SHA256; a stalled
download is resumed) and extracts it into the kernel cache, with a record of
where it came from (qoslab-fetch.json). Every request is bounded: 30 s to
connect, 1 min for the response's header, 1 min without data. The mirror is
the recipe's kernel.mirror, else $QOSLAB_DEBIAN_MIRROR (in kernel.suite,
default stable: Debian's current release), else every suite of this
machine's apt sources. A kernel already in the cache is not fetched again.`,
		Args: noArgs,
	}
	kernelFlags(cmd, &o.BuildSettings, runtime.GOARCH, "kernel architecture: amd64, arm64")
	return imageCommand(f, cmd, &o.imageOptions, o, imageFetchKernelRun, runF)
}

func imageFetchKernelRun(ctx context.Context, o *imageFetchKernelOptions) error {
	bo, err := buildOptions(&o.imageOptions, o.BuildSettings, image.BuildSettings.KernelOptions)
	if err != nil {
		return err
	}
	dir, err := image.FetchKernel(ctx, bo)
	if err != nil {
		return err
	}
	// The extract's directory alone on stdout, for scripts.
	fmt.Fprintln(o.IO.Out, dir)
	return nil
}
