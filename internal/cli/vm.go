package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/namedvm"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
)

// vmEnv fills in where this machine keeps VMs and images.
func vmEnv(f *Factory, e experiment.VMEnv) experiment.VMEnv { return experiment.DefaultVMEnv(f.Env, e) }

// vmFlags are the flags that describe a VM, as typed.
type vmFlags struct {
	name, image, store, memory, disk, accel, backend, model string
	cpus                                                    int
	bootTimeout                                             time.Duration
}

// bootTimeoutHelp is --boot-timeout's help, the same on every command.
var bootTimeoutHelp = fmt.Sprintf("how long a VM may take to boot until its agent answers; past it the VM is stopped and the error names its console log (default: %s under TCG, %s otherwise)",
	experiment.DefaultBootTimeout("tcg"), experiment.DefaultBootTimeout("kvm"))

// add adds the VM flags to cmd; named adds --vm NAME (measure in a named VM).
func (v *vmFlags) add(cmd *cobra.Command, named bool) {
	fl := cmd.Flags()
	memory, disk := "1 GiB, more when compression needs it", "what compression needs"
	if named {
		fl.StringVar(&v.name, "vm", "", "measure in the named VM `NAME` (started with qoslab vm start NAME) instead of booting one for the run")
		completeVMs(cmd, "vm")
		fl.StringVar(&v.model, "vm-model", "", vmModelHelp)
		complete(cmd, "vm-model", hv.Models)
	} else if s, err := spec.DefaultSpec(experiment.NamedVMSpec); err == nil {
		mem, d := spec.VMSize(s)
		memory = fmt.Sprintf("%d MiB, what the built-in %s spec needs", mem, experiment.NamedVMSpec)
		disk = fmt.Sprintf("%d MiB, what the built-in %s spec needs", d>>20, experiment.NamedVMSpec)
	}
	fl.StringVar(&v.image, "image", "", "image to boot, from the image store (default: the built-in recipe's for this arch, "+experiment.DefaultImage()+"; "+experiment.DefaultImageFor(hv.ModelVZ)+" with --vm-model vz)")
	fl.StringVar(&v.store, "image-store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	fl.IntVar(&v.cpus, "cpus", 2, "vCPUs of the VM")
	fl.StringVar(&v.memory, "memory", "", "memory of the VM, e.g. 2GiB (default: "+memory+")")
	fl.StringVar(&v.disk, "disk", "", "raw scratch disk of the VM, the compression sink (default: "+disk+")")
	fl.StringVar(&v.accel, "accel", "", "VM acceleration: kvm, tcg, hvf (default: KVM when a probe boot works, else TCG)")
	fl.StringVar(&v.backend, "vm-backend", registry.Default(), "hypervisor: "+strings.Join(registry.Names(), ", "))
	fl.DurationVar(&v.bootTimeout, "boot-timeout", 0, bootTimeoutHelp)
	aliasStore(cmd)
	complete(cmd, "accel", fixed(accels...))
	complete(cmd, "vm-backend", registry.Names)
	_ = cmd.MarkFlagDirname("image-store")
}

// vmModelHelp is --vm-model's help, the same on every command.
var vmModelHelp = "the VM's device model: " + strings.Join(hv.Models(), ", ") + " (default: the spec's, else the backend's own); " +
	hv.ModelVZ + " boots an arm64 image on qemu laid out as Virtualization.framework lays it out (virtio console, no UART, no virtio-serial, the agent over vsock through vhost-device-vsock): a test of the guest a Mac boots, not a Mac"

// checkVMModel refuses a device model that is not one, or that the
// backend named does not have (backend "" is decided later).
func checkVMModel(flag, model, backend string) error {
	if model == "" {
		return nil
	}
	if err := oneOf(flag, model, hv.Models()); err != nil {
		return err
	}
	if model == hv.ModelVZ && backend != "" && backend != registry.QEMU {
		return usageErrorf("%s %s: the vz model is the qemu backend's emulation of Virtualization.framework's devices; with --vm-backend %s leave it out, or use --vm-backend qemu", flag, model, backend)
	}
	return nil
}

// aliasStore lets --store name the image store too, as it always did on
// the image commands.
func aliasStore(cmd *cobra.Command) {
	cmd.Flags().SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "store" {
			name = "image-store"
		}
		return pflag.NormalizedName(name)
	})
}

func (v *vmFlags) parse(src sources) (spec.VMSpec, experiment.VMEnv, error) {
	n := src.Name
	s := spec.VMSpec{Image: v.image, CPUs: v.cpus, Accel: v.accel, Backend: v.backend, Model: v.model}
	e := experiment.VMEnv{Name: v.name, Store: v.store, BootTimeout: v.bootTimeout}
	if v.bootTimeout < 0 {
		return s, e, usageErrorf("%s %s: allowed a positive duration such as 5m, or 0 for the default", n("boot-timeout"), v.bootTimeout)
	}
	if err := registry.Check(v.backend); err != nil {
		return s, e, usageErrorf("%s: %w", n("vm-backend"), err)
	}
	if err := checkVMModel(n("vm-model"), v.model, v.backend); err != nil {
		return s, e, err
	}
	if s.Model == hv.ModelDefault {
		s.Model = ""
	}
	if s.Image == "" {
		s.Image = experiment.DefaultImageFor(s.Model)
	}
	if s.CPUs < 1 || s.CPUs > 256 {
		return s, e, usageErrorf("%s %d: allowed 1..256", n("cpus"), s.CPUs)
	}
	if s.Accel != "" {
		if err := oneOf(n("accel"), s.Accel, accels); err != nil {
			return s, e, err
		}
	}
	if v.memory != "" {
		b, err := units.ParseSize(n("memory"), v.memory, 1<<40)
		if err != nil {
			return s, e, usageError(err)
		}
		if b < 128<<20 {
			return s, e, usageErrorf("%s %s: allowed 128MiB and more", n("memory"), v.memory)
		}
		s.MemoryBytes = b
	}
	if v.disk != "" {
		b, err := units.ParseSize(n("disk"), v.disk, 1<<42)
		if err != nil {
			return s, e, usageError(err)
		}
		s.DiskBytes = b
	}
	return s, e, nil
}

// NewCmdVM builds `qoslab vm`: named VMs that outlive the command.
func NewCmdVM(f *Factory) *cobra.Command {
	return group(&cobra.Command{
		Use:   "vm",
		Short: "Start, stop, look at and delete named VMs",
		Long: `Named VMs keep running after the command that started them, so several
bench runs can measure in the same guest (qoslab bench --target vm --vm NAME).
Their state (sockets, console log, scratch disk) is in
$XDG_STATE_HOME/qoslab/vms/NAME.`,
	}, newCmdVMStart(f, nil), newCmdVMStop(f, nil), newCmdVMStatus(f, nil), newCmdVMConsole(f, nil), newCmdVMList(f, nil), newCmdVMDelete(f, nil))
}

func vmName(args []string) (string, error) {
	if len(args) != 1 {
		return "", usageErrorf("give one VM name, got %d", len(args))
	}
	return args[0], usageError(namedvm.CheckName(args[0]))
}

// VMOptions are the settings of the vm commands.
type VMOptions struct {
	IO   *IOStreams
	Name string
	// Env is where this machine keeps VMs and images.
	Env experiment.VMEnv
	// VM is what `vm start` boots.
	VM           spec.VMSpec
	JSON, Follow bool
}

// vmCommand finishes a `vm VERB [NAME]` command: the name checked, where VMs
// live filled in, the vm section of the settings.
func vmCommand(f *Factory, cmd *cobra.Command, o *VMOptions, src *sources, prepare func() error, run, runF func(context.Context, *VMOptions) error) *cobra.Command {
	o.IO = f.IO
	named := strings.HasSuffix(cmd.Use, " NAME")
	if named {
		completeArgs(cmd, func() []string { return vmEnv(f, experiment.VMEnv{}).NamedVMs().Names() })
	}
	return command(f, cmd, "vm", o, src, func(args []string) error {
		if named {
			var err error
			if o.Name, err = vmName(args); err != nil {
				return err
			}
		}
		if prepare != nil {
			if err := prepare(); err != nil {
				return err
			}
		}
		o.Env = vmEnv(f, o.Env)
		return nil
	}, run, runF)
}

func newCmdVMStart(f *Factory, runF func(context.Context, *VMOptions) error) *cobra.Command {
	o := &VMOptions{}
	var v vmFlags
	var src sources
	cmd := &cobra.Command{Use: "start NAME", Short: "Boot a named VM from an image and leave it running"}
	v.add(cmd, false)
	return vmCommand(f, cmd, o, &src, func() (err error) {
		o.VM, o.Env, err = v.parse(src)
		return err
	}, vmStartRun, runF)
}

func vmStartRun(ctx context.Context, o *VMOptions) error {
	m, info, err := experiment.StartNamedVM(ctx, experiment.NamedVM{Name: o.Name, VM: o.VM, Env: o.Env}, o.IO.ErrOut)
	if err != nil {
		return err
	}
	mi := m.Info()
	fmt.Fprintf(o.IO.Out, "vm %s running: pid %d, accel %s, agent answered %.2f s after start\n", o.Name, mi.PID, mi.Accel, float64(mi.BootNs)/1e9)
	fmt.Fprintf(o.IO.Out, "guest: %s\n", agent.Describe(info))
	fmt.Fprintf(o.IO.Out, "measure in it with: qoslab bench --target vm --vm %s\n", o.Name)
	return nil
}

func newCmdVMStop(f *Factory, runF func(context.Context, *VMOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "stop NAME", Short: "Power a named VM off (by force when it does not answer)"}
	return vmCommand(f, cmd, &VMOptions{}, nil, nil, vmStopRun, runF)
}

func vmStopRun(ctx context.Context, o *VMOptions) error {
	m, err := o.Env.NamedVMs().Attach(ctx, o.Name)
	var gone *namedvm.NotRunningError
	if errors.As(err, &gone) {
		// Stopping what is already stopped is done: say so, and clear
		// what its hypervisor left behind.
		removed, cerr := o.Env.NamedVMs().CleanStopped(o.Name)
		if cerr != nil {
			return fmt.Errorf("vm %s had already stopped (%v), but cleaning up after it failed: %w", o.Name, gone.Err, cerr)
		}
		fmt.Fprintf(o.IO.Out, "vm %s had already stopped (%v)", o.Name, gone.Err)
		if len(removed) > 0 {
			fmt.Fprintf(o.IO.Out, "; removed its stale %s", strings.Join(removed, ", "))
		}
		fmt.Fprintln(o.IO.Out)
		return nil
	}
	if err != nil {
		return err
	}
	if err := experiment.StopVM(m); err != nil {
		return fmt.Errorf("stop vm %s: %w", o.Name, err)
	}
	fmt.Fprintf(o.IO.Out, "vm %s stopped\n", o.Name)
	return nil
}

func newCmdVMDelete(f *Factory, runF func(context.Context, *VMOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "delete NAME", Short: "Remove a stopped named VM, its scratch disk and console log"}
	return vmCommand(f, cmd, &VMOptions{}, nil, nil, vmDeleteRun, runF)
}

func vmDeleteRun(ctx context.Context, o *VMOptions) error {
	if err := o.Env.NamedVMs().Delete(ctx, o.Name); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "vm %s deleted\n", o.Name)
	return nil
}

func newCmdVMStatus(f *Factory, runF func(context.Context, *VMOptions) error) *cobra.Command {
	o := &VMOptions{}
	cmd := &cobra.Command{Use: "status NAME", Short: "Show a named VM as the host sees it, and its agent's Info"}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return vmCommand(f, cmd, o, nil, nil, vmStatusRun, runF)
}

func vmStatusRun(ctx context.Context, o *VMOptions) error {
	mi, info, ierr, err := experiment.VMStatus(ctx, o.Env, o.Name)
	if err != nil {
		return err
	}
	if o.JSON {
		out := map[string]any{"machine": mi}
		if ierr == nil {
			out["agent"] = agent.InfoJSON(info)
		} else {
			out["agent_error"] = ierr.Error()
		}
		return printJSON(o.IO.Out, out)
	}
	fmt.Fprintf(o.IO.Out, "vm %s: running, %s, pid %d, %d vCPUs (host threads %v), %d MiB\n", o.Name, describeAccel(mi), mi.PID, mi.CPUs, mi.VCPUThreads, mi.MemoryMiB)
	fmt.Fprintf(o.IO.Out, "image: %s (kernel %s)\nconsole: %s\nscratch disk: %s (guest %s)\n", mi.Image.Name, mi.Image.KernelVersion, mi.ConsoleLog, mi.Disk, mi.GuestDisk)
	if ierr != nil {
		return fmt.Errorf("vm %s runs but its agent does not answer: %w", o.Name, ierr)
	}
	return printInfo(o.IO.Out, info)
}

func newCmdVMConsole(f *Factory, runF func(context.Context, *VMOptions) error) *cobra.Command {
	o := &VMOptions{}
	cmd := &cobra.Command{Use: "console NAME", Short: "Print a named VM's console log"}
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "keep printing what the console writes, until Ctrl-C")
	return vmCommand(f, cmd, o, nil, nil, vmConsoleRun, runF)
}

func vmConsoleRun(ctx context.Context, o *VMOptions) error {
	file, err := o.Env.NamedVMs().OpenConsole(o.Name)
	if err != nil {
		return err
	}
	defer file.Close()
	for {
		if _, err := io.Copy(o.IO.Out, file); err != nil || !o.Follow {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func newCmdVMList(f *Factory, runF func(context.Context, *VMOptions) error) *cobra.Command {
	o := &VMOptions{}
	cmd := &cobra.Command{Use: "list", Short: "List named VMs and whether they run", Args: noArgs}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return vmCommand(f, cmd, o, nil, nil, vmListRun, runF)
}

func vmListRun(ctx context.Context, o *VMOptions) error {
	vms := o.Env.NamedVMs().List(ctx)
	if o.JSON {
		return printJSON(o.IO.Out, vms)
	}
	if len(vms) == 0 {
		fmt.Fprintln(o.IO.Out, "no named VMs; start one with `qoslab vm start NAME`")
	}
	for _, v := range vms {
		state := "stopped (remove it with `qoslab vm delete " + v.Name + "`)"
		if v.Running {
			state = fmt.Sprintf("running (pid %d, %s, %d vCPUs)", v.Machine.PID, describeAccel(*v.Machine), v.Machine.CPUs)
		}
		fmt.Fprintf(o.IO.Out, "%-20s %s\n", v.Name, state)
	}
	return nil
}

// completeVMs completes a flag with the named VMs.
func completeVMs(cmd *cobra.Command, flag string) {
	complete(cmd, flag, func() []string {
		return experiment.DefaultVMEnv(os.Getenv, experiment.VMEnv{}).NamedVMs().Names()
	})
}

// describeAccel is a short label for tables.
func describeAccel(info hv.MachineInfo) string {
	return strings.TrimSpace(fmt.Sprintf("%s %s", info.Backend, info.Accel))
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printInfo(w io.Writer, info *agentpb.InfoReply) error {
	for _, r := range agent.InfoRows(info) {
		if _, err := fmt.Fprintf(w, "%-13s %s\n", r[0]+":", r[1]); err != nil {
			return err
		}
	}
	return nil
}
