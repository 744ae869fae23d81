package vz

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/hv"
)

// Defaults for a spec that leaves CPUs or memory at 0. A bundle's
// config.json gives a macOS guest's own.
const (
	defaultCPUs           = 2
	defaultLinuxMemoryMiB = 1024
)

// How long a guest has to power off when asked before it is stopped by
// force. macOS shuts down in seconds but may take longer after an update;
// qoslab's Linux init watches the power button (the input devices whose
// keys include KEY_POWER: the ACPI button or a gpio-keys one) and, when it
// is pressed, stops the agent and powers off, with nothing to save.
const (
	macOSStopTimeout = 30 * time.Second
	linuxStopTimeout = 5 * time.Second
)

// The disk caching modes a plan names (VZDiskImageCachingMode).
const (
	cachingAutomatic = "automatic"
	// cachingUncached bypasses the host's page cache, as QEMU's cache=none
	// does for its scratch disk: disk-bound results then measure the disk.
	cachingUncached = "uncached"
)

// Limits is the range of vCPUs and memory Virtualization.framework allows
// on this host (VZVirtualMachineConfiguration's minimumAllowedCPUCount,
// maximumAllowedCPUCount, minimumAllowedMemorySize and
// maximumAllowedMemorySize).
type Limits struct {
	MinCPUs, MaxCPUs               int
	MinMemoryBytes, MaxMemoryBytes uint64
}

// memoryMiB is the memory range in whole MiB, which is how the framework
// takes memory: the bounds rounded inwards.
func (l Limits) memoryMiB() (lo, hi int) {
	return int((l.MinMemoryBytes + mib - 1) / mib), int(l.MaxMemoryBytes / mib)
}

func (l Limits) check() error {
	lo, hi := l.memoryMiB()
	if l.MinCPUs < 1 || l.MaxCPUs < l.MinCPUs || lo < 1 || hi < lo {
		return fmt.Errorf("this Mac's Virtualization.framework reports an empty range: %d to %d vCPUs, %d to %d bytes of memory", l.MinCPUs, l.MaxCPUs, l.MinMemoryBytes, l.MaxMemoryBytes)
	}
	return nil
}

// plan is a VM as the framework will be asked to run it: a spec checked
// against the host's limits, with defaults filled in and paths resolved.
// It is plain data (the vz host process reads it from vm.json); the darwin
// code turns it into a VZVirtualMachineConfiguration and decides nothing.
type plan struct {
	Name     string    `json:"name"`
	Kind     GuestKind `json:"kind"`
	StateDir string    `json:"state_dir"`
	Image    hv.Image  `json:"image"`

	CPUs      int `json:"cpus"`
	MemoryMiB int `json:"memory_mib"`

	// Linux guests: the boot loader's kernel (an uncompressed arm64 Image,
	// which is all VZLinuxBootLoader boots), initramfs and command line.
	Kernel    string `json:"kernel,omitempty"`
	Initramfs string `json:"initramfs,omitempty"`
	Cmdline   string `json:"cmdline,omitempty"`
	// ConsoleLog gets the Linux guest's virtio console.
	ConsoleLog string `json:"console_log,omitempty"`

	// macOS guests: the bundle and its platform.
	Bundle            string `json:"bundle,omitempty"`
	BootDisk          string `json:"boot_disk,omitempty"`
	AuxStorage        string `json:"aux_storage,omitempty"`
	HardwareModel     []byte `json:"hardware_model,omitempty"`
	MachineIdentifier []byte `json:"machine_identifier,omitempty"`
	NAT               bool   `json:"nat"`
	// MACAddress is the network device's, the bundle's own (the vz host
	// writes one into a bundle that has none before it boots).
	MACAddress string `json:"mac_address,omitempty"`

	// ScratchDisk is a raw disk in the state directory for the compression
	// sink (/dev/vda in a Linux guest); "" for none.
	ScratchDisk    string `json:"scratch_disk,omitempty"`
	ScratchBytes   int64  `json:"scratch_bytes,omitempty"`
	ScratchCaching string `json:"scratch_caching,omitempty"`
	GuestDisk      string `json:"guest_disk,omitempty"`

	AgentPort uint32 `json:"agent_port"`
	// AgentSocket is the unix socket in the state directory that carries
	// connections to the agent.
	AgentSocket string `json:"agent_socket"`
	// BootTimeout is the user's --boot-timeout (hv.Spec.BootTimeout), 0
	// for hv's default for the guest: how long the host waits for the
	// agent to listen before it drops a connection it proxies.
	BootTimeout time.Duration `json:"boot_timeout,omitempty"`
	// StopTimeout is how long the guest has to power off when asked.
	StopTimeout time.Duration `json:"stop_timeout"`
	// Notes say what was changed from the spec (clamped defaults, an
	// ignored scratch disk), for the user.
	Notes []string `json:"notes,omitempty"`
}

// bootTimeout is how long p's guest may take to boot until its agent
// answers: the user's --boot-timeout, else hv's default for every backend.
func (p plan) bootTimeout() time.Duration {
	if p.BootTimeout > 0 {
		return p.BootTimeout
	}
	return hv.DefaultBootTimeout(hv.MachineInfo{Backend: backendName, Accel: backendName, Image: hv.Image{OS: string(p.Kind)}})
}

// MemoryBytes is the plan's memory as the framework takes it.
func (p plan) MemoryBytes() uint64 { return uint64(p.MemoryMiB) * mib }

// The files in a VM's state directory.
const (
	lockFile        = "vz.lock"
	agentSocketFile = "agent.sock"
	consoleLogFile  = "console.log"
	hostLogFile     = "vz.log"
	scratchDiskFile = "scratch.raw"
)

// planVM checks spec against the limits and turns it into a plan. It only
// reads: a bundle (spec.Image with a Dir and no Kernel) is opened and
// checked, a Linux image's files are looked at, and nothing is written, so
// a bad spec fails here before anything long starts.
//
// An explicit CPU count or memory size outside what the framework (and a
// bundle's macOS) allows is an error naming the range; a default (the
// bundle's own, or defaultCPUs and defaultLinuxMemoryMiB) is clamped into
// the range with a note, since the user did not choose it.
func planVM(spec hv.Spec, lim Limits) (plan, error) {
	p := plan{Name: spec.Name, Image: spec.Image, AgentPort: guestchan.VsockPort, BootTimeout: spec.BootTimeout}
	if spec.StateDir == "" {
		return p, errors.New("no state directory for the VM's socket, logs and disk")
	}
	dir, err := filepath.Abs(spec.StateDir)
	if err != nil {
		return p, fmt.Errorf("state directory %s: %w", spec.StateDir, err)
	}
	p.StateDir = dir
	if p.Name == "" {
		p.Name = filepath.Base(dir)
	}
	p.AgentSocket = filepath.Join(dir, agentSocketFile)
	if err := checkSocketPath(p.AgentSocket); err != nil {
		return p, err
	}
	if err := lim.check(); err != nil {
		return p, err
	}
	if spec.Accel != "" && spec.Accel != "vz" {
		return p, fmt.Errorf("accelerator %q: the vz backend has only vz (Virtualization.framework); use the qemu backend for %s", spec.Accel, spec.Accel)
	}
	if spec.BootTimeout < 0 {
		return p, fmt.Errorf("boot timeout %v: want 0 (the default) or more", spec.BootTimeout)
	}
	if spec.DiskBytes < 0 {
		return p, fmt.Errorf("scratch disk of %d bytes: want 0 (none) or more", spec.DiskBytes)
	}

	sz := sizing{cpus: defaultCPUs, memoryMiB: defaultLinuxMemoryMiB, minCPUs: lim.MinCPUs}
	switch {
	case spec.Image.Kernel != "":
		if err := p.planLinux(spec); err != nil {
			return p, err
		}
	case spec.Image.Dir != "":
		b, err := OpenBundle(spec.Image.Dir)
		if err != nil {
			return p, err
		}
		p.planMacOS(b)
		sz = bundleSizing(b, lim)
	default:
		return p, fmt.Errorf("image %q has neither a kernel (a Linux image) nor a directory (a macOS bundle)", spec.Image.Name)
	}
	if err := p.size(spec, lim, sz); err != nil {
		return p, err
	}
	p.planScratch(spec.DiskBytes)
	return p, nil
}

// sizing is what the guest has to say about its vCPUs and memory: its
// defaults, and the least its OS needs (with why, for errors and notes).
type sizing struct {
	cpus, memoryMiB int
	minCPUs, minMiB int
	cpuWhy, memWhy  string
}

// bundleSizing is a macOS bundle's sizing: its config's sizes and the
// minimums of the macOS installed in it.
func bundleSizing(b Bundle, lim Limits) sizing {
	sz := sizing{cpus: b.Config.CPUs, memoryMiB: b.Config.MemoryMiB, minCPUs: lim.MinCPUs}
	if b.Config.MinCPUs > sz.minCPUs {
		sz.minCPUs, sz.cpuWhy = b.Config.MinCPUs, " (the bundle's macOS needs "+fmt.Sprint(b.Config.MinCPUs)+")"
	}
	if b.Config.MinMemoryMiB > 0 {
		sz.minMiB, sz.memWhy = b.Config.MinMemoryMiB, fmt.Sprintf(" (the bundle's macOS needs %d MiB)", b.Config.MinMemoryMiB)
	}
	return sz
}

// size sets the plan's vCPUs and memory: spec's, checked against the
// framework's range and what the guest needs, or the guest's defaults
// clamped into that range.
func (p *plan) size(spec hv.Spec, lim Limits, sz sizing) error {
	fwMin, fwMax := lim.memoryMiB()
	loMiB := max(fwMin, sz.minMiB)
	if sz.minCPUs > lim.MaxCPUs {
		return fmt.Errorf("the bundle's macOS needs %d vCPUs, but Virtualization.framework allows at most %d on this Mac", sz.minCPUs, lim.MaxCPUs)
	}
	if loMiB > fwMax {
		return fmt.Errorf("the bundle's macOS needs %d MiB of memory, but Virtualization.framework allows at most %d MiB on this Mac", loMiB, fwMax)
	}
	if sz.memWhy == "" || sz.minMiB <= fwMin {
		sz.memWhy = " (Virtualization.framework's range on this Mac)"
	}
	if sz.cpuWhy == "" {
		sz.cpuWhy = " (Virtualization.framework's range on this Mac)"
	}
	var err error
	if p.CPUs, err = pick("vCPUs", spec.CPUs, sz.cpus, sz.minCPUs, lim.MaxCPUs, sz.cpuWhy, &p.Notes); err != nil {
		return err
	}
	if p.MemoryMiB, err = pick("MiB of memory", spec.MemoryMiB, sz.memoryMiB, loMiB, fwMax, sz.memWhy, &p.Notes); err != nil {
		return err
	}
	return nil
}

// planScratch gives a Linux guest its scratch disk of size bytes (0 for
// none); a macOS guest's file sink writes to its own disk, with a note.
func (p *plan) planScratch(size int64) {
	if size <= 0 {
		return
	}
	if p.Kind == GuestMacOS {
		p.Notes = append(p.Notes, fmt.Sprintf("no scratch disk: a macOS guest's file sink writes to its own disk, %s", p.BootDisk))
		return
	}
	p.ScratchDisk = filepath.Join(p.StateDir, scratchDiskFile)
	p.ScratchBytes = roundUpMiB(size)
	p.ScratchCaching = cachingUncached
	p.GuestDisk = guestchan.ScratchDisk
}

// pick is an explicit value checked against [lo, hi], or the default
// clamped into it with a note.
func pick(unit string, asked, def, lo, hi int, why string, notes *[]string) (int, error) {
	if asked < 0 {
		return 0, fmt.Errorf("%d %s: want %d to %d%s, or 0 for the default", asked, unit, lo, hi, why)
	}
	if asked > 0 {
		if asked < lo || asked > hi {
			return 0, fmt.Errorf("%d %s is outside the allowed range: want %d to %d%s", asked, unit, lo, hi, why)
		}
		return asked, nil
	}
	v := min(max(def, lo), hi)
	if v != def {
		*notes = append(*notes, fmt.Sprintf("%d %s instead of the default %d: the allowed range is %d to %d%s", v, unit, def, lo, hi, why))
	}
	return v, nil
}

// planLinux checks a Linux image: arm64, with its kernel uncompressed (the
// framework's Linux boot loader takes no compressed kernel; the image build
// writes it) and an initramfs.
func (p *plan) planLinux(spec hv.Spec) error {
	img := spec.Image
	p.Kind = guestLinux
	if img.Arch != "" && img.Arch != "arm64" {
		return fmt.Errorf("image %q is for %s: Virtualization.framework on Apple silicon boots arm64 guests; build one with `qoslab image build linux --arch arm64`", img.Name, img.Arch)
	}
	if img.Initramfs == "" {
		return fmt.Errorf("image %q has no initramfs: rebuild the image", img.Name)
	}
	if img.UncompressedKernel == "" {
		return fmt.Errorf("image %q has no uncompressed kernel, which Virtualization.framework needs to boot Linux (it was built before qoslab wrote one): rebuild it with `qoslab image build linux --arch arm64`", img.Name)
	}
	for _, f := range []struct{ what, path string }{{"kernel", img.UncompressedKernel}, {"initramfs", img.Initramfs}} {
		st, err := os.Stat(f.path)
		if err != nil {
			return fmt.Errorf("image %q: %s: %w: rebuild the image", img.Name, f.what, err)
		}
		if !st.Mode().IsRegular() || st.Size() == 0 {
			return fmt.Errorf("image %q: %s %s is not a non-empty file: rebuild the image", img.Name, f.what, f.path)
		}
	}
	p.Kernel, p.Initramfs = img.UncompressedKernel, img.Initramfs
	// The same code builds the command line of the qemu backend's vz
	// model, which boots this layout under emulation.
	p.Cmdline = guestchan.VZLinuxCmdline(img.Cmdline)
	p.ConsoleLog = filepath.Join(p.StateDir, consoleLogFile)
	p.StopTimeout = linuxStopTimeout
	return nil
}

// planMacOS takes a macOS guest's platform from its bundle.
func (p *plan) planMacOS(b Bundle) {
	p.Kind = GuestMacOS
	p.Bundle = b.Dir
	p.BootDisk = b.Path(DiskFile)
	p.AuxStorage = b.Path(AuxFile)
	p.HardwareModel = b.HardwareModel
	p.MachineIdentifier = b.MachineIdentifier
	p.NAT = true
	p.MACAddress = b.Config.MACAddress
	p.StopTimeout = macOSStopTimeout
	if p.Image.Name == "" {
		p.Image = b.Image()
	}
}

// maxSocketPath is the longest unix socket path macOS takes (sun_path less
// its terminating NUL); Linux takes 107, so this holds on both.
const maxSocketPath = 103

// checkSocketPath fails when a unix socket path does not fit in sockaddr_un.
func checkSocketPath(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("socket path %s is %d bytes; unix sockets allow at most %d: use a shorter state directory (for example under /tmp)", path, len(path), maxSocketPath)
	}
	return nil
}
