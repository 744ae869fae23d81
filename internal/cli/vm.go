package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv"
)

// NewCmdVM builds `qoslab vm`: named VMs that outlive the command.
func NewCmdVM(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vm",
		Short: "Start, stop and look at named VMs",
		Long: `Named VMs keep running after the command that started them, so several
bench runs can measure in the same guest (qoslab bench --target vm --vm NAME).
Their state (sockets, console log, scratch disk) is in
$XDG_STATE_HOME/qoslab/vms/NAME.`,
	}
	cmd.AddCommand(newCmdVMStart(f), newCmdVMStop(f), newCmdVMStatus(f), newCmdVMConsole(f), newCmdVMList(f))
	return cmd
}

func vmName(args []string) (string, error) {
	if len(args) != 1 {
		return "", usageErrorf("give one VM name, got %d", len(args))
	}
	name := args[0]
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return "", usageErrorf("VM name %q: use letters, digits, '-' and '_' only", name)
	}
	for _, r := range name {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", usageErrorf("VM name %q: use letters, digits, '-' and '_' only", name)
		}
	}
	return name, nil
}

func newCmdVMStart(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "start NAME",
		Short: "Boot a named VM from an image and leave it running",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := vmName(args)
			if err != nil {
				return err
			}
			o, err := vmOptionsFrom(f, "vm")
			if err != nil {
				return err
			}
			return vmStart(cmd.Context(), f, name, o)
		},
	}
	addVMFlags(cmd.Flags())
	cmd.Flags().MarkHidden("vm")
	f.bindFlags("vm", cmd.Flags())
	return cmd
}

func vmStart(ctx context.Context, f *Factory, name string, o VMOptions) error {
	dir := vmStateDir(f.Env, name)
	backend := newBackend(f.Env, o.Backend)
	if m, err := backend.Attach(ctx, dir); err == nil {
		return fmt.Errorf("vm %s is already running (pid %d); stop it first with `qoslab vm stop %s`", name, m.Info().PID, name)
	}
	img, err := loadImage(o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Sized for the default subsumption experiment: 1 GiB compressed in the guest.
	spec := vmSpec(o, img, vmNeeds{memoryMiB: 3072, diskBytes: 4 << 30}, name, dir)
	spec.Detach = true
	fmt.Fprintf(f.IO.ErrOut, "vm %s: booting %s (kernel %s), %d vCPUs, %d MiB\n", name, o.Image, img.KernelVersion, spec.CPUs, spec.MemoryMiB)
	m, c, err := experiment.BootVM(ctx, backend, f.IO.ErrOut, spec)
	if err != nil {
		return fmt.Errorf("vm %s: %w", name, err)
	}
	defer c.Close()
	info, err := c.Info(ctx)
	if err != nil {
		_ = m.Stop(context.Background())
		return err
	}
	mi := m.Info()
	fmt.Fprintf(f.IO.Out, "vm %s running: pid %d, accel %s, agent answered %.2f s after start\n", name, mi.PID, mi.Accel, float64(mi.BootNs)/1e9)
	fmt.Fprintf(f.IO.Out, "guest: %s\n", describeInfo(info))
	fmt.Fprintf(f.IO.Out, "measure in it with: qoslab bench --target vm --vm %s\n", name)
	return nil
}

// attachVM finds a named VM, saying clearly whether it never existed or has stopped.
func attachVM(ctx context.Context, f *Factory, name string) (hv.Machine, error) {
	dir := vmStateDir(f.Env, name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no vm named %s (no %s); `qoslab vm list` shows the VMs", name, dir)
	}
	m, err := attachAny(ctx, f.Env, dir)
	if err != nil {
		return nil, fmt.Errorf("vm %s is not running: %w", name, err)
	}
	return m, nil
}

func newCmdVMStop(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "stop NAME",
		Short: "Power a named VM off (by force when it does not answer)",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := vmName(args)
			if err != nil {
				return err
			}
			m, err := attachVM(cmd.Context(), f, name)
			if err != nil {
				return err
			}
			a := &vmAgent{machine: m, owned: true}
			if a.Client, err = experiment.AgentOver(m); err != nil {
				return err
			}
			if err := a.Close(); err != nil {
				return fmt.Errorf("stop vm %s: %w", name, err)
			}
			fmt.Fprintf(f.IO.Out, "vm %s stopped\n", name)
			return nil
		},
	}
}

func newCmdVMStatus(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show a named VM as the host sees it, and its agent's Info",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := vmName(args)
			if err != nil {
				return err
			}
			m, err := attachVM(cmd.Context(), f, name)
			if err != nil {
				return err
			}
			c, err := experiment.AgentOver(m)
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			info, ierr := c.Info(ctx)
			mi := m.Info()
			if asJSON {
				out := map[string]any{"machine": mi}
				if ierr == nil {
					out["agent"] = infoJSON(info)
				} else {
					out["agent_error"] = ierr.Error()
				}
				enc := json.NewEncoder(f.IO.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			fmt.Fprintf(f.IO.Out, "vm %s: running, %s, pid %d, %d vCPUs (host threads %v), %d MiB\n", name, describeAccel(mi), mi.PID, mi.CPUs, mi.VCPUThreads, mi.MemoryMiB)
			fmt.Fprintf(f.IO.Out, "image: %s (kernel %s)\nconsole: %s\nscratch disk: %s (guest %s)\n", mi.Image.Name, mi.Image.KernelVersion, mi.ConsoleLog, mi.Disk, mi.GuestDisk)
			if ierr != nil {
				return fmt.Errorf("vm %s runs but its agent does not answer: %w", name, ierr)
			}
			return printInfo(f.IO, info)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newCmdVMConsole(f *Factory) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "console NAME",
		Short: "Print a named VM's console log",
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := vmName(args)
			if err != nil {
				return err
			}
			path := filepath.Join(vmStateDir(f.Env, name), "console.log")
			file, err := os.Open(path)
			if err != nil {
				return fmt.Errorf("vm %s console: %w", name, err)
			}
			defer file.Close()
			if _, err := io.Copy(f.IO.Out, file); err != nil {
				return err
			}
			for follow {
				select {
				case <-cmd.Context().Done():
					return nil
				case <-time.After(200 * time.Millisecond):
				}
				if _, err := io.Copy(f.IO.Out, file); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing what the console writes, until Ctrl-C")
	return cmd
}

func newCmdVMList(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List named VMs and whether they run",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := filepath.Join(stateHome(f.Env), "vms")
			entries, err := os.ReadDir(root)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			var names []string
			for _, e := range entries {
				if e.IsDir() {
					names = append(names, e.Name())
				}
			}
			sort.Strings(names)
			if len(names) == 0 {
				fmt.Fprintln(f.IO.Out, "no named VMs; start one with `qoslab vm start NAME`")
				return nil
			}
			for _, n := range names {
				state := "stopped"
				if m, err := attachAny(cmd.Context(), f.Env, filepath.Join(root, n)); err == nil {
					mi := m.Info()
					state = fmt.Sprintf("running (pid %d, %s, %d vCPUs)", mi.PID, describeAccel(mi), mi.CPUs)
				}
				fmt.Fprintf(f.IO.Out, "%-20s %s\n", n, state)
			}
			return nil
		},
	}
}
