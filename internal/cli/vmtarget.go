package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/units"

	"github.com/spf13/pflag"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/qemu"
	"github.com/qoslab/qoslab/internal/hv/vz"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/workload"
)

// defaultImage is the image a VM boots unless told otherwise: the built-in
// recipe's, for this machine's arch.
func defaultImage() string { return image.DefaultRecipe().ImageName(runtime.GOARCH) }

// VMOptions say which VM a vm target measures in.
type VMOptions struct {
	// Name is a VM started earlier with `qoslab vm start`; empty boots one
	// for this run and stops it at the end.
	Name      string `json:"name,omitempty"`
	Image     string `json:"image"`
	Store     string `json:"store"`
	CPUs      int    `json:"cpus"`
	MemoryMiB int    `json:"memory_mib"` // 0: enough for the workloads asked for
	DiskBytes int64  `json:"disk_bytes"` // 0: enough for the workloads asked for
	Accel     string `json:"accel,omitempty"`
	Backend   string `json:"backend"` // qemu or vz
}

// vmNeeds is what the workloads of a run need of a VM.
type vmNeeds struct {
	memoryMiB int
	diskBytes int64
}

// vmNeeds sizes a VM for the compression workloads: their input is held in
// the guest's memory (the agent allows up to half of it) and their output
// goes to the raw scratch disk, one region per thread.
func (o *BenchOptions) vmNeeds() vmNeeds {
	n := vmNeeds{memoryMiB: 1024, diskBytes: 64 << 20}
	for _, w := range o.Workloads {
		if w != workload.Compress && w != workload.Decompress {
			continue
		}
		maxThreads := 1
		for _, t := range o.Threads {
			maxThreads = max(maxThreads, t)
		}
		n.memoryMiB = max(n.memoryMiB, int((2*o.Size)>>20)+512)
		n.diskBytes = max(n.diskBytes, o.Size+o.Size/64+int64(maxThreads)*(2<<20)+(64<<20))
	}
	return n
}

func addVMFlags(fl *pflag.FlagSet) {
	fl.String("vm", "", "measure in this named VM (`qoslab vm start NAME`) instead of booting one for the run")
	fl.String("image", "", "image to boot, from the image store (default: the built-in recipe's for this arch, "+defaultImage()+")")
	fl.String("image-store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	fl.Int("cpus", 2, "vCPUs of the VM")
	fl.String("memory", "", "memory of the VM, e.g. 2GiB (default: 1GiB, more when compression needs it)")
	fl.String("disk", "", "raw scratch disk of the VM, the compression sink (default: what compression needs)")
	fl.String("accel", "", "VM acceleration: kvm, tcg, hvf (default: KVM when a probe boot works, else TCG)")
	fl.String("vm-backend", defaultBackend(), "hypervisor: qemu (Linux guests; KVM, TCG or hvf) or vz (Virtualization.framework: macOS and Linux guests, macOS 13+ on Apple silicon)")
}

func vmOptionsFrom(f *Factory, section string) (VMOptions, error) {
	v := f.Config
	key := func(k string) string { return section + "." + k }
	o := VMOptions{
		Name:    v.GetString(key("vm")),
		Image:   v.GetString(key("image")),
		Store:   v.GetString(key("image-store")),
		CPUs:    v.GetInt(key("cpus")),
		Accel:   v.GetString(key("accel")),
		Backend: v.GetString(key("vm-backend")),
	}
	if err := oneOf("--vm-backend", o.Backend, []string{"qemu", "vz"}); err != nil {
		return o, err
	}
	if o.Image == "" {
		o.Image = defaultImage()
	}
	if o.Store == "" {
		var err error
		if o.Store, err = image.DefaultStoreDir(f.Env); err != nil {
			return o, err
		}
	}
	if o.CPUs < 1 || o.CPUs > 256 {
		return o, usageErrorf("--cpus %d: allowed 1..256", o.CPUs)
	}
	if o.Accel != "" {
		if err := oneOf("--accel", o.Accel, []string{"kvm", "tcg", "hvf"}); err != nil {
			return o, err
		}
	}
	if s := v.GetString(key("memory")); s != "" {
		b, err := units.ParseSize("--memory", s, 1<<40)
		if err != nil {
			return o, &UsageError{Err: err}
		}
		if b < 128<<20 {
			return o, usageErrorf("--memory %s: allowed 128MiB and more", s)
		}
		o.MemoryMiB = int(b >> 20)
	}
	if s := v.GetString(key("disk")); s != "" {
		b, err := units.ParseSize("--disk", s, 1<<42)
		if err != nil {
			return o, &UsageError{Err: err}
		}
		o.DiskBytes = b
	}
	return o, nil
}

// stateHome is where named VMs keep their state.
func stateHome(env func(string) string) string {
	dir := env("XDG_STATE_HOME")
	if dir == "" {
		dir = filepath.Join(env("HOME"), ".local", "state")
	}
	return filepath.Join(dir, "qoslab")
}

func cacheHome(env func(string) string) string {
	dir := env("XDG_CACHE_HOME")
	if dir == "" {
		dir = filepath.Join(env("HOME"), ".cache")
	}
	return filepath.Join(dir, "qoslab")
}

// vmStateDir is a named VM's state directory.
func vmStateDir(env func(string) string, name string) string {
	return filepath.Join(stateHome(env), "vms", name)
}

func newQEMU(env func(string) string) hv.Backend {
	return qemu.New(qemu.Options{CacheDir: cacheHome(env)})
}

// attachAny attaches to a VM whichever backend started it.
func attachAny(ctx context.Context, env func(string) string, dir string) (hv.Machine, error) {
	m, err := newQEMU(env).Attach(ctx, dir)
	if err == nil {
		return m, nil
	}
	if mv, verr := vz.New(vz.Options{}).Attach(ctx, dir); verr == nil {
		return mv, nil
	}
	return nil, err
}

// defaultBackend is vz on Apple silicon Macs, qemu elsewhere.
func defaultBackend() string {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		return "vz"
	}
	return "qemu"
}

// newBackend returns the hypervisor backend by name; all backends are
// registered here.
func newBackend(env func(string) string, name string) hv.Backend {
	if name == "vz" {
		return vz.New(vz.Options{})
	}
	return newQEMU(env)
}

// vmAgent is the agent inside a VM, and the VM itself when this run booted it.
type vmAgent struct {
	*agent.Client
	machine hv.Machine
	owned   bool   // booted for this run: stopped with it
	dir     string // state directory to remove after an owned VM stopped
}

func (a *vmAgent) MachineInfo() any { return a.machine.Info() }

// Run maps the host's notion of a file sink onto the VM's raw scratch disk:
// in the guest, files live in RAM (tmpfs), and the point of the VM's sink is
// that its writes go through the virtual disk.
func (a *vmAgent) Run(ctx context.Context, req *agentpb.RunRequest, onProgress func(*agentpb.Progress)) (*agentpb.Result, error) {
	var note string
	if (req.Workload == workload.Compress || req.Workload == workload.Decompress) && req.Sink == "file" {
		info := a.machine.Info()
		switch {
		case info.GuestDisk != "":
			req.Sink, req.SinkPath = "block", info.GuestDisk
			note = fmt.Sprintf("vm: sink file applied as block %s, the VM's raw scratch disk (%s on the host)", info.GuestDisk, info.Disk)
		case info.Image.Kernel == "":
			// A macOS guest: its agent's scratch directory is on the guest's own disk.
			note = "vm: sink file on the guest's own disk (a macOS guest's boot volume)"
		default:
			return nil, fmt.Errorf("vm %s has no scratch disk for the file sink and its files live in RAM: give it one with --disk, or use --sink null", info.Name)
		}
	}
	res, err := a.Client.Run(ctx, req, onProgress)
	if res != nil && note != "" {
		res.Notes = append(res.Notes, note)
	}
	return res, err
}

// Close powers the guest off and stops the VM when this run booted it; a
// named VM keeps running.
func (a *vmAgent) Close() error {
	if !a.owned {
		return a.Client.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = a.Client.Shutdown(ctx)
	select {
	case <-a.machine.Done():
	case <-time.After(3 * time.Second):
	}
	err := a.machine.Stop(ctx)
	_ = a.Client.Close()
	if a.dir != "" {
		_ = os.RemoveAll(a.dir)
	}
	return err
}

// vmSpec builds the spec of a VM from options and what the workloads need.
func vmSpec(o VMOptions, img hv.Image, needs vmNeeds, name, stateDir string) hv.Spec {
	mem := o.MemoryMiB
	if mem == 0 {
		mem = needs.memoryMiB
	}
	disk := o.DiskBytes
	if disk == 0 {
		disk = needs.diskBytes
	}
	return hv.Spec{Name: name, Image: img, CPUs: o.CPUs, MemoryMiB: mem, DiskBytes: disk, Accel: o.Accel, StateDir: stateDir}
}

// loadImage finds the image to boot: a VM bundle (macOS, for vz) or a built
// Linux image, by name in the store.
func loadImage(o VMOptions) (hv.Image, error) {
	dir := image.ImageDir(o.Store, o.Image)
	if _, err := os.Stat(filepath.Join(dir, vz.BundleConfigFile)); err == nil {
		b, err := vz.OpenBundle(dir)
		if err != nil {
			return hv.Image{}, err
		}
		return b.Image(), nil
	}
	img, _, err := image.Load(o.Store, o.Image)
	if err != nil {
		return hv.Image{}, fmt.Errorf("%w\nbuild it with: qoslab image build linux", err)
	}
	return img, nil
}

// startVMAgent attaches to a named VM or boots one for the run.
func startVMAgent(ctx context.Context, f *Factory, io *IOStreams, o VMOptions, needs vmNeeds) (BenchAgent, error) {
	backend := newBackend(f.Env, o.Backend)
	if o.Name != "" {
		m, err := attachAny(ctx, f.Env, vmStateDir(f.Env, o.Name))
		if err != nil {
			return nil, fmt.Errorf("vm %s: %w (start it with `qoslab vm start %s`)", o.Name, err, o.Name)
		}
		c, err := experiment.AgentOver(m)
		if err != nil {
			return nil, err
		}
		return &vmAgent{Client: c, machine: m}, nil
	}
	img, err := loadImage(o)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "qoslab-vm-")
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("bench-%d", os.Getpid())
	fmt.Fprintf(io.ErrOut, "vm: booting %s (%s, kernel %s) with %d vCPUs\n", name, o.Image, img.KernelVersion, o.CPUs)
	m, c, err := experiment.BootVM(ctx, backend, io.ErrOut, vmSpec(o, img, needs, name, dir))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("boot vm: %w", err)
	}
	info := m.Info()
	fmt.Fprintf(io.ErrOut, "vm: agent answered %.2f s after start (accel %s, pid %d, vCPU threads %v)\n",
		float64(info.BootNs)/1e9, info.Accel, info.PID, info.VCPUThreads)
	return &vmAgent{Client: c, machine: m, owned: true, dir: dir}, nil
}

// describeAccel is a short label for tables.
func describeAccel(info hv.MachineInfo) string {
	return strings.TrimSpace(fmt.Sprintf("%s %s", info.Backend, info.Accel))
}
