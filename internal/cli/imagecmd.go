package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/version"
)

// NewCmdImage builds `qoslab image`.
func NewCmdImage(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "image", Short: "Build, fetch, create, provision and list guest images"}
	cmd.AddCommand(newCmdImageBuild(f), newCmdImageList(f), newCmdImageFetch(f), newCmdImageCreate(f), newCmdImageProvision(f), newCmdImageImport(f))
	return cmd
}

// guestAgentPath is the agent built for a guest's OS and arch, as `make
// build` lays it out: bin/linux-amd64/qoslab-agent beside bin/qoslab.
func guestAgentPath(explicit, goos, arch string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	p := filepath.Join(filepath.Dir(self), goos+"-"+arch, "qoslab-agent")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no %s/%s agent at %s: build it with `make build` (cross-builds every agent) or pass --guest-agent PATH", goos, arch, p)
	}
	return p, nil
}

func newCmdImageBuild(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "build linux",
		Short: "Build a Linux microVM image (kernel + initramfs with the agent as /init)",
		Long: `Builds vmlinuz, initramfs.cpio.gz and manifest.json into the image store from a
recipe (default: the built-in vmimages/linux-microvm.yaml). A build that fails
leaves the previous image intact. The Debian kernel comes from
scripts/fetch-kernel.sh.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] != "linux" {
				return usageErrorf("image build takes the guest kind: linux (macOS images come with `image create macos`)")
			}
			v := f.Config
			r := image.DefaultRecipe()
			if p := v.GetString("image.recipe"); p != "" {
				var err error
				if r, err = image.LoadRecipe(p); err != nil {
					return &UsageError{Err: err}
				}
			}
			arch := v.GetString("image.arch")
			if arch == "" {
				arch = r.Arch
			}
			if err := image.CheckArch(arch); err != nil {
				return &UsageError{Err: err}
			}
			store := v.GetString("image.store")
			if store == "" {
				var err error
				if store, err = image.DefaultStoreDir(f.Env); err != nil {
					return err
				}
			}
			defKernels, err := image.DefaultKernelCacheDir(f.Env)
			if err != nil {
				return err
			}
			kernels := v.GetString("image.kernel-cache")
			if kernels == "" {
				kernels = defKernels
			}
			agentPath, err := guestAgentPath(v.GetString("image.guest-agent"), "linux", arch)
			if err != nil {
				return err
			}
			m, err := image.Build(cmd.Context(), image.BuildOptions{
				Recipe: r, Arch: arch, AgentPath: agentPath, AgentVersion: version.String(),
				StoreDir: store, KernelCacheDir: kernels, DefaultKernelCacheDir: defKernels, Progress: f.IO.ErrOut,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "built %s: kernel %s, %d modules, in %s\n", m.Name, m.KernelVersion, len(m.Modules), image.ImageDir(store, m.Name))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.String("recipe", "", "image recipe (YAML; default: the built-in linux-microvm recipe)")
	fl.String("arch", "", "guest architecture: amd64, arm64 (default: the recipe's)")
	fl.String("store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	fl.String("kernel-cache", "", "where scripts/fetch-kernel.sh put Debian kernels (default $XDG_CACHE_HOME/qoslab/kernels)")
	fl.String("guest-agent", "", "the linux agent to install as /init (default: bin/linux-ARCH/qoslab-agent beside qoslab)")
	f.bindFlags("image", fl)
	return cmd
}

func newCmdImageList(f *Factory) *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the images in the store",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if store == "" {
				var err error
				if store, err = image.DefaultStoreDir(f.Env); err != nil {
					return err
				}
			}
			entries, err := image.List(store)
			if err != nil {
				return err
			}
			if len(entries) == 0 {
				fmt.Fprintf(f.IO.Out, "no images in %s; build one with `qoslab image build linux`\n", store)
				return nil
			}
			for _, e := range entries {
				if e.Manifest == nil {
					fmt.Fprintf(f.IO.Out, "%-20s unreadable: %s\n", e.Name, e.Err)
					continue
				}
				m := e.Manifest
				fmt.Fprintf(f.IO.Out, "%-20s %s kernel %s, agent %s, built %s\n", e.Name, m.Arch, m.KernelVersion, m.Agent.Version, m.BuiltAt.Format("2006-01-02 15:04"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&store, "store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	return cmd
}
