package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/qoslab/qoslab/internal/units"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/hv/vz"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/image/macos"
)

// storeFrom returns the image store from a flag value or the default.
func storeFrom(f *Factory, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return image.DefaultStoreDir(f.Env)
}

func kindArg(args []string, want, cmd string) error {
	if len(args) != 1 || args[0] != want {
		return usageErrorf("%s takes the guest kind: %s", cmd, want)
	}
	return nil
}

func newCmdImageFetch(f *Factory) *cobra.Command {
	var ipsw, dir string
	cmd := &cobra.Command{
		Use:   "fetch macos",
		Short: "Download a macOS restore image (resumable), and check it is one",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kindArg(args, "macos", "image fetch"); err != nil {
				return err
			}
			if dir == "" {
				store, err := image.DefaultStoreDir(f.Env)
				if err != nil {
					return err
				}
				dir = filepath.Join(filepath.Dir(store), "ipsw")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			res, err := macos.Fetch(cmd.Context(), macos.FetchOptions{IPSW: ipsw, Dir: dir, Progress: f.IO.ErrOut})
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "restore image macOS %s (%s) from %s\n", res.Image.Version, res.Image.Build, res.URL)
			// The path alone on stdout, for scripts.
			fmt.Fprintln(f.IO.Out, res.Download.Path)
			return nil
		},
	}
	cmd.Flags().StringVar(&ipsw, "ipsw", macos.LatestIPSW, "latest (the newest this Mac supports; needs macOS) or the restore image's URL")
	cmd.Flags().StringVar(&dir, "dir", "", "where to put it (default $XDG_CACHE_HOME/qoslab/ipsw)")
	return cmd
}

func newCmdImageCreate(f *Factory) *cobra.Command {
	var ipsw, name, store, disk, memory string
	var cpus int
	cmd := &cobra.Command{
		Use:   "create macos",
		Short: "Install macOS from a restore image into a new VM bundle (macOS 13+ on Apple silicon)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kindArg(args, "macos", "image create"); err != nil {
				return err
			}
			if ipsw == "" {
				return usageErrorf("image create macos needs --ipsw FILE (get one with `qoslab image fetch macos`)")
			}
			diskBytes, err := units.ParseSize("--disk", disk, 1<<44)
			if err != nil {
				return &UsageError{Err: err}
			}
			var mem int64
			if memory != "" {
				if mem, err = units.ParseSize("--memory", memory, 1<<40); err != nil {
					return &UsageError{Err: err}
				}
			}
			if cpus < 0 {
				return usageErrorf("--cpus %d: give a positive count, or 0 for the default", cpus)
			}
			dir, err := storeFrom(f, store)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			b, err := macos.Create(cmd.Context(), macos.CreateOptions{
				IPSW: ipsw, Bundle: filepath.Join(dir, name), DiskBytes: diskBytes, CPUs: cpus, MemoryBytes: uint64(mem), Progress: f.IO.ErrOut,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "created %s in %s; install the agent with: sudo qoslab image provision %s\n", name, b.Dir, name)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&ipsw, "ipsw", "", "the restore image (.ipsw)")
	fl.StringVar(&name, "name", "macos", "the image's name in the store")
	fl.StringVar(&store, "store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	fl.StringVar(&disk, "disk", "64GiB", "the guest's disk (sparse)")
	fl.IntVar(&cpus, "cpus", 0, "vCPUs (default: within what the image and the framework allow)")
	fl.StringVar(&memory, "memory", "", "memory, e.g. 8GiB (default: within what the image and the framework allow)")
	return cmd
}

func newCmdImageProvision(f *Factory) *cobra.Command {
	var via, store, agentPath string
	cmd := &cobra.Command{
		Use:   "provision NAME [--via ssh USER@ADDR]",
		Short: "Install the agent in a macOS image as a LaunchDaemon (offline as root, or --via ssh USER@ADDR)",
		Long: `Offline provisioning attaches the stopped guest's disk and writes the agent,
its LaunchDaemon plist and the setup-done marker, owned by root: run it with
sudo. --via ssh USER@ADDR installs into a running guest that has Remote Login,
key login and passwordless sudo.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("image provision needs the image's NAME")
			}
			name, err := vmName(args[:1])
			if err != nil {
				return err
			}
			addrs := args[1:]
			dir, err := storeFrom(f, store)
			if err != nil {
				return err
			}
			o := macos.ProvisionOptions{Bundle: filepath.Join(dir, name), Log: f.IO.ErrOut}
			switch {
			case via == "offline" && len(addrs) == 0:
			case via == "ssh" && len(addrs) == 1:
				o.SSH = addrs[0]
			case via == "ssh":
				return usageErrorf("--via ssh needs one USER@ADDR after the image name, got %d", len(addrs))
			case strings.HasPrefix(via, "ssh ") && len(addrs) == 0:
				o.SSH = strings.TrimSpace(via[4:])
			default:
				return usageErrorf("--via %q with %d extra arguments: allowed offline (the default), or ssh USER@ADDR", via, len(addrs))
			}
			if o.Agent, err = guestAgentPath(agentPath, "darwin", "arm64"); err != nil {
				return err
			}
			res, err := macos.Provision(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "provisioned %s (%s): agent %s\n", name, res.Via, res.Agent.Path)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&via, "via", "offline", "offline (attach the stopped guest's disk; needs sudo) or ssh (then give USER@ADDR)")
	fl.StringVar(&store, "store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	fl.StringVar(&agentPath, "guest-agent", "", "the darwin/arm64 agent (default: bin/darwin-arm64/qoslab-agent beside qoslab)")
	return cmd
}

func newCmdImageImport(f *Factory) *cobra.Command {
	var name, store string
	cmd := &cobra.Command{
		Use:   "import tart DIR",
		Short: "Make a VM bundle from an existing tart VM (which is left as it is)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 || args[0] != "tart" {
				return usageErrorf("image import takes: tart DIR")
			}
			dir, err := storeFrom(f, store)
			if err != nil {
				return err
			}
			if name == "" {
				name = filepath.Base(filepath.Clean(args[1]))
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			b, err := macos.ImportTart(cmd.Context(), macos.ImportTartOptions{Dir: args[1], Bundle: filepath.Join(dir, name), Progress: f.IO.ErrOut})
			if err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "imported %s into %s\n", args[1], b.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the image's name in the store (default: the tart VM's directory name)")
	cmd.Flags().StringVar(&store, "store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	return cmd
}

// newCmdVZHost is the process that keeps a detached vz VM alive (hidden).
func newCmdVZHost(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    vz.HostCommand + " STATE_DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return vz.HostMain(cmd.Context(), args[0])
		},
	}
}
