package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/namedvm"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
)

// vmEnv fills in where this machine keeps VMs and images.
func vmEnv(f *Factory, e guestvm.Env) guestvm.Env { return guestvm.DefaultEnv(f.Env, e) }

// vmFlags are the flags that describe a VM, as typed.
type vmFlags struct {
	name, image, store, memory, disk, accel, backend, model string
	cpus                                                    int
	bootTimeout                                             time.Duration
}

// bootTimeoutHelp is --boot-timeout's help, the same on every command: the
// defaults as hv decides them.
var bootTimeoutHelp = fmt.Sprintf("how long a VM may take to boot until its agent answers; past it the VM is stopped and the error names its console log (default: %s under TCG, %s for a macOS guest, whose first boot takes minutes, %s otherwise)",
	hv.DefaultBootTimeout(hv.MachineInfo{Accel: hv.AccelTCG}),
	hv.DefaultBootTimeout(hv.MachineInfo{Backend: registry.VZ, Accel: registry.VZ, Image: hv.Image{OS: hv.OSMacOS}}),
	hv.DefaultBootTimeout(hv.MachineInfo{Accel: "kvm"}))

// add adds the VM flags to cmd; named adds --vm NAME (measure in a named VM,
// completed from f's named VMs).
func (v *vmFlags) add(f *Factory, cmd *cobra.Command, named bool) {
	fl := cmd.Flags()
	memory, disk := "1 GiB, more when compression needs it", "what compression needs"
	if named {
		fl.StringVar(&v.name, "vm", "", "measure in the named VM `NAME` (started with qoslab vm start NAME) instead of booting one for the run")
		completeVMs(f, cmd, "vm")
		fl.StringVar(&v.model, "vm-model", "", vmModelHelp())
		complete(cmd, "vm-model", registry.Models)
	} else if s, err := spec.DefaultSpec(namedvm.SizedFor); err == nil {
		mem, d := spec.VMSize(s)
		memory = fmt.Sprintf("%d MiB, what the built-in %s spec needs", mem, namedvm.SizedFor)
		disk = fmt.Sprintf("%d MiB, what the built-in %s spec needs", d>>20, namedvm.SizedFor)
	}
	fl.StringVar(&v.image, "image", "", "image to boot, from the image store (default: the built-in recipe's for this arch, "+guestvm.DefaultImage()+"; "+guestvm.DefaultImageFor(hv.ModelVZ)+" with --vm-model vz)")
	fl.StringVar(&v.store, "image-store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	fl.IntVar(&v.cpus, "cpus", 2, "vCPUs of the VM")
	fl.StringVar(&v.memory, "memory", "", "memory of the VM, e.g. 2GiB (default: "+memory+")")
	fl.StringVar(&v.disk, "disk", "", "raw scratch disk of the VM, the compression sink (default: "+disk+")")
	fl.StringVar(&v.accel, "accel", "", "VM acceleration: "+strings.Join(registry.Accels(), ", ")+" (default: KVM when a probe boot works, else TCG)")
	fl.StringVar(&v.backend, "vm-backend", registry.Default(), "hypervisor: "+strings.Join(registry.Names(), ", "))
	fl.DurationVar(&v.bootTimeout, "boot-timeout", 0, bootTimeoutHelp)
	aliasStore(cmd)
	complete(cmd, "accel", registry.Accels)
	complete(cmd, "vm-backend", registry.Names)
	_ = cmd.MarkFlagDirname("image-store")
}

// vmModelHelp is --vm-model's help, the same on every command: each
// registered model with its backend's word on it.
func vmModelHelp() string {
	h := "the VM's device model: " + strings.Join(registry.Models(), ", ") + " (default: the spec's, else the backend's own)"
	for _, name := range registry.Models() {
		if m, _, ok := registry.Model(name); ok {
			h += "; " + m.Name + " " + m.Help
		}
	}
	return h
}

// checkVMModel refuses a device model that is not one, or that the
// backend named does not have (backend "" is decided later).
func checkVMModel(flag, model, backend string) error {
	if model == "" {
		return nil
	}
	if err := oneOf(flag, model, registry.Models()); err != nil {
		return err
	}
	if m, owner, ok := registry.Model(model); ok && backend != "" && backend != owner {
		return usageErrorf("%s %s: the %s model is %s; with --vm-backend %s leave it out, or use --vm-backend %s", flag, model, model, m.Is, backend, owner)
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

func (v *vmFlags) parse(src sources) (spec.VMSpec, guestvm.Env, error) {
	n := src.Name
	s := spec.VMSpec{Image: v.image, CPUs: v.cpus, Accel: v.accel, Backend: v.backend, Model: v.model}
	e := guestvm.Env{Name: v.name, Store: v.store, BootTimeout: v.bootTimeout}
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
		s.Image = guestvm.DefaultImageFor(s.Model)
	}
	if s.CPUs < 1 || s.CPUs > 256 {
		return s, e, usageErrorf("%s %d: allowed 1..256", n("cpus"), s.CPUs)
	}
	if s.Accel != "" {
		if err := oneOf(n("accel"), s.Accel, registry.Accels()); err != nil {
			return s, e, err
		}
	}
	if v.memory != "" {
		b, err := units.ParseSize(n("memory"), v.memory, 1<<40)
		if err != nil {
			return s, e, wrapUsage(err)
		}
		if b < 128<<20 {
			return s, e, usageErrorf("%s %s: allowed 128MiB and more", n("memory"), v.memory)
		}
		s.MemoryBytes = b
	}
	if v.disk != "" {
		b, err := units.ParseSize(n("disk"), v.disk, 1<<42)
		if err != nil {
			return s, e, wrapUsage(err)
		}
		s.DiskBytes = b
	}
	return s, e, nil
}

// newCmdVM builds `qoslab vm`: named VMs that outlive the command.
func newCmdVM(f *Factory) *cobra.Command {
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
	return args[0], wrapUsage(namedvm.CheckName(args[0]))
}

// vmOptions are the settings of the vm commands.
type vmOptions struct {
	IO   *IOStreams
	Name string
	// Env is where this machine keeps VMs and images.
	Env guestvm.Env
	// VM is what `vm start` boots.
	VM           spec.VMSpec
	JSON, Follow bool
}

// vmCommand finishes a `vm VERB [NAME]` command: the name checked, where VMs
// live filled in, the vm section of the settings.
func vmCommand(f *Factory, cmd *cobra.Command, o *vmOptions, src *sources, prepare func() error, run, runF func(context.Context, *vmOptions) error) *cobra.Command {
	o.IO = f.IO
	named := strings.HasSuffix(cmd.Use, " NAME")
	if named {
		completeArgs(cmd, func() []string { return namedvm.For(vmEnv(f, guestvm.Env{})).Names() })
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

// completeVMs completes a flag with the named VMs.
func completeVMs(f *Factory, cmd *cobra.Command, flag string) {
	complete(cmd, flag, func() []string {
		return namedvm.For(vmEnv(f, guestvm.Env{})).Names()
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
