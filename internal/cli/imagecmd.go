package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/image"
)

// newCmdImage builds `qoslab image`.
func newCmdImage(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "image", Short: "Build, fetch, create, provision and list guest images"},
		newCmdImageBuild(f, nil), newCmdImageList(f, nil), newCmdImageFetch(f, nil), newCmdImageFetchKernel(f, nil), newCmdImageCreate(f, nil), newCmdImageProvision(f, nil), newCmdImageImport(f, nil))
}

// imageOptions are what every image command has: where it prints, and the
// image store (the shared image-store setting).
type imageOptions struct {
	IO    *IOStreams
	Store string
	// Env reads the environment (the user's cache directories).
	Env func(string) string
	// Mirror is the Debian mirror the environment names.
	Mirror config.Value
	src    sources
}

// imageCommand finishes an image command: --image-store (alias --store)
// defaulting to the user's cache, and the image section of the settings.
func imageCommand[O any](f *Factory, cmd *cobra.Command, base *imageOptions, opts *O, run, runF func(context.Context, *O) error) *cobra.Command {
	base.IO, base.Env = f.IO, f.Env
	cmd.Flags().StringVar(&base.Store, "image-store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	aliasStore(cmd)
	_ = cmd.MarkFlagDirname("image-store")
	return command(f, cmd, "image", opts, &base.src, func([]string) error {
		base.Mirror = f.Settings.Variable(config.DebianMirrorEnv)
		if base.Store == "" {
			if base.Store = vmEnv(f, guestvm.Env{}).Store; base.Store == "" {
				return usageErrorf("no image store: neither XDG_CACHE_HOME nor HOME is set; give --image-store DIR")
			}
		}
		return nil
	}, run, runF)
}

func kindArg(args []string, want, cmd string) error {
	if len(args) != 1 || args[0] != want {
		return usageErrorf("%s takes the guest kind: %s", cmd, want)
	}
	return nil
}

// kernelFlags adds the flags that say which kernel: the recipe, the arch
// (default archDefault) and the kernel cache.
func kernelFlags(cmd *cobra.Command, bs *image.BuildSettings, archDefault, archHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&bs.RecipeFile, "recipe", "", "image recipe (YAML; default: the built-in linux-microvm recipe)")
	fl.StringVar(&bs.Arch, "arch", archDefault, archHelp)
	fl.StringVar(&bs.KernelCache, "kernel-cache", "", "where Debian kernels are kept (default $XDG_CACHE_HOME/qoslab/kernels)")
	fl.BoolVar(&bs.InsecureUnsignedIndex, strings.TrimPrefix(image.InsecureUnsignedIndexFlag, "--"), false,
		"take a Debian index (InRelease) whose signature is missing or cannot be verified against Debian's archive keys; printed, and recorded in the kernel's record and the image's manifest")
	_ = cmd.MarkFlagFilename("recipe", "yaml", "yml")
	complete(cmd, "arch", fixed("amd64", "arm64"))
}

// buildOptions resolves an image command's settings (resolve: the full
// build's, or the kernel's only); a bad recipe or arch is a usage error.
func buildOptions(o *imageOptions, bs image.BuildSettings, resolve func(image.BuildSettings, func(string) string) (image.BuildOptions, error)) (image.BuildOptions, error) {
	bs.Store, bs.Mirror = o.Store, o.Mirror
	bo, err := resolve(bs, o.Env)
	var bad *image.SettingError
	if errors.As(err, &bad) {
		return bo, wrapUsage(err)
	}
	bo.Progress = o.IO.ErrOut
	return bo, err
}
