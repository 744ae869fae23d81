package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/image/macos"
	"github.com/qoslab/qoslab/internal/units"
)

// NewCmdImage builds `qoslab image`.
func NewCmdImage(f *Factory) *cobra.Command {
	return group(&cobra.Command{Use: "image", Short: "Build, fetch, create, provision and list guest images"},
		newCmdImageBuild(f, nil), newCmdImageList(f, nil), newCmdImageFetch(f, nil), newCmdImageFetchKernel(f, nil), newCmdImageCreate(f, nil), newCmdImageProvision(f, nil), newCmdImageImport(f, nil))
}

// ImageOptions are what every image command has: where it prints, and the
// image store (the shared image-store setting).
type ImageOptions struct {
	IO    *IOStreams
	Store string
	// Env reads the environment (the user's cache directories).
	Env func(string) string
	src sources
}

// imageCommand finishes an image command: --image-store (alias --store)
// defaulting to the user's cache, and the image section of the settings.
func imageCommand[O any](f *Factory, cmd *cobra.Command, base *ImageOptions, opts *O, run, runF func(context.Context, *O) error) *cobra.Command {
	base.IO, base.Env = f.IO, f.Env
	cmd.Flags().StringVar(&base.Store, "image-store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	aliasStore(cmd)
	_ = cmd.MarkFlagDirname("image-store")
	return command(f, cmd, "image", opts, &base.src, func([]string) error {
		if base.Store == "" {
			if base.Store = vmEnv(f, experiment.VMEnv{}).Store; base.Store == "" {
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

// ImageBuildOptions are the settings of `qoslab image build linux`.
type ImageBuildOptions struct {
	ImageOptions
	image.BuildSettings
}

func newCmdImageBuild(f *Factory, runF func(context.Context, *ImageBuildOptions) error) *cobra.Command {
	o := &ImageBuildOptions{}
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
	return imageCommand(f, cmd, &o.ImageOptions, o, imageBuildRun, runF)
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
func buildOptions(o *ImageOptions, bs image.BuildSettings, resolve func(image.BuildSettings, func(string) string) (image.BuildOptions, error)) (image.BuildOptions, error) {
	bs.Store = o.Store
	bo, err := resolve(bs, o.Env)
	var bad *image.SettingError
	if errors.As(err, &bad) {
		return bo, usageError(err)
	}
	bo.Progress = o.IO.ErrOut
	return bo, err
}

func imageBuildRun(ctx context.Context, o *ImageBuildOptions) error {
	bo, err := buildOptions(&o.ImageOptions, o.BuildSettings, image.BuildSettings.Options)
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

// ImageFetchKernelOptions are the settings of `qoslab image fetch-kernel`.
type ImageFetchKernelOptions struct {
	ImageOptions
	image.BuildSettings
}

func newCmdImageFetchKernel(f *Factory, runF func(context.Context, *ImageFetchKernelOptions) error) *cobra.Command {
	o := &ImageFetchKernelOptions{}
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
	return imageCommand(f, cmd, &o.ImageOptions, o, imageFetchKernelRun, runF)
}

func imageFetchKernelRun(ctx context.Context, o *ImageFetchKernelOptions) error {
	bo, err := buildOptions(&o.ImageOptions, o.BuildSettings, image.BuildSettings.KernelOptions)
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

// ImageListOptions are the settings of `qoslab image list`.
type ImageListOptions struct {
	ImageOptions
	JSON bool
}

func newCmdImageList(f *Factory, runF func(context.Context, *ImageListOptions) error) *cobra.Command {
	o := &ImageListOptions{}
	cmd := &cobra.Command{Use: "list", Short: "List the images in the store", Args: noArgs}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return imageCommand(f, cmd, &o.ImageOptions, o, imageListRun, runF)
}

func imageListRun(_ context.Context, o *ImageListOptions) error {
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

// ImageFetchOptions are the settings of `qoslab image fetch macos`.
type ImageFetchOptions struct {
	ImageOptions
	IPSW, Dir string
}

func newCmdImageFetch(f *Factory, runF func(context.Context, *ImageFetchOptions) error) *cobra.Command {
	o := &ImageFetchOptions{}
	cmd := &cobra.Command{
		Use: "fetch macos", Short: "Download a macOS restore image (resumable), and check it is one", ValidArgs: []string{"macos"},
		Args: func(_ *cobra.Command, args []string) error { return kindArg(args, "macos", "image fetch") },
	}
	cmd.Flags().StringVar(&o.IPSW, "ipsw", macos.LatestIPSW, "latest (the newest this Mac supports; needs macOS) or the restore image's URL")
	cmd.Flags().StringVar(&o.Dir, "dir", "", "where to put it (default $XDG_CACHE_HOME/qoslab/ipsw)")
	return imageCommand(f, cmd, &o.ImageOptions, o, imageFetchRun, runF)
}

func imageFetchRun(ctx context.Context, o *ImageFetchOptions) error {
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

// ImageCreateOptions are the settings of `qoslab image create macos`.
type ImageCreateOptions struct {
	ImageOptions
	IPSW, Name, Disk, Memory string
	CPUs                     int
}

func newCmdImageCreate(f *Factory, runF func(context.Context, *ImageCreateOptions) error) *cobra.Command {
	o := &ImageCreateOptions{}
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
	return imageCommand(f, cmd, &o.ImageOptions, o, imageCreateRun, runF)
}

func imageCreateRun(ctx context.Context, o *ImageCreateOptions) error {
	if o.IPSW == "" {
		return usageErrorf("image create macos needs --ipsw FILE (get one with `qoslab image fetch macos`)")
	}
	diskBytes, err := units.ParseSize(o.src.Name("disk"), o.Disk, 1<<44)
	if err != nil {
		return usageError(err)
	}
	var mem int64
	if o.Memory != "" {
		if mem, err = units.ParseSize(o.src.Name("memory"), o.Memory, 1<<40); err != nil {
			return usageError(err)
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

// ImageProvisionOptions are the settings of `qoslab image provision`.
type ImageProvisionOptions struct {
	ImageOptions
	Name, Via, SSH, GuestAgent string
}

func newCmdImageProvision(f *Factory, runF func(context.Context, *ImageProvisionOptions) error) *cobra.Command {
	o := &ImageProvisionOptions{}
	cmd := &cobra.Command{
		Use:   "provision NAME [--via ssh USER@ADDR]",
		Short: "Install the agent in a macOS image as a LaunchDaemon (offline as root, or --via ssh USER@ADDR)",
		Long: `Offline provisioning attaches the stopped guest's disk and writes the agent,
its LaunchDaemon plist and the setup-done marker, owned by root: run it with
sudo. --via ssh USER@ADDR installs into a running guest that has Remote Login,
key login and passwordless sudo.`,
		Args: func(_ *cobra.Command, args []string) error { return o.parseArgs(args) },
	}
	cmd.Flags().StringVar(&o.Via, "via", "offline", "offline (attach the stopped guest's disk; needs sudo) or ssh (then give USER@ADDR)")
	cmd.Flags().StringVar(&o.GuestAgent, "guest-agent", "", "the darwin/arm64 agent (default: bin/darwin-arm64/qoslab-agent beside qoslab)")
	completeArgs(cmd, func() []string { return image.Names(vmEnv(f, experiment.VMEnv{}).Store) })
	return imageCommand(f, cmd, &o.ImageOptions, o, imageProvisionRun, runF)
}

func (o *ImageProvisionOptions) parseArgs(args []string) error {
	if len(args) == 0 {
		return usageErrorf("image provision needs the image's NAME")
	}
	var err error
	if o.Name, err = vmName(args[:1]); err != nil {
		return err
	}
	addrs := args[1:]
	switch {
	case o.Via == "offline" && len(addrs) == 0:
	case o.Via == "ssh" && len(addrs) == 1:
		o.SSH = addrs[0]
	case o.Via == "ssh":
		return usageErrorf("--via ssh needs one USER@ADDR after the image name, got %d", len(addrs))
	case strings.HasPrefix(o.Via, "ssh ") && len(addrs) == 0:
		o.SSH = strings.TrimSpace(o.Via[4:])
	default:
		return usageErrorf("--via %q with %d extra arguments: allowed offline (the default), or ssh USER@ADDR", o.Via, len(addrs))
	}
	return nil
}

func imageProvisionRun(ctx context.Context, o *ImageProvisionOptions) error {
	po := macos.ProvisionOptions{Bundle: filepath.Join(o.Store, o.Name), Log: o.IO.ErrOut, SSH: o.SSH}
	var err error
	if po.Agent, err = agent.FindGuestAgent(o.GuestAgent, "darwin", "arm64"); err != nil {
		return err
	}
	res, err := macos.Provision(ctx, po)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "provisioned %s (%s): agent %s\n", o.Name, res.Via, res.Agent.Path)
	return nil
}

// ImageImportOptions are the settings of `qoslab image import tart`.
type ImageImportOptions struct {
	ImageOptions
	Dir, Name string
}

func newCmdImageImport(f *Factory, runF func(context.Context, *ImageImportOptions) error) *cobra.Command {
	o := &ImageImportOptions{}
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
	return imageCommand(f, cmd, &o.ImageOptions, o, imageImportRun, runF)
}

func imageImportRun(ctx context.Context, o *ImageImportOptions) error {
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
