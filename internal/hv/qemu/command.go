package qemu

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/hv"
)

// The accelerators QEMU can run a guest with.
const (
	accelKVM = "kvm"
	AccelTCG = hv.AccelTCG
	accelHVF = "hvf"
)

// The machine types the backend boots.
const (
	// machineQ35 is x86's: PCI virtio devices (the guest needs virtio_pci),
	// and HPET and ACPI PM timers the kernel calibrates its clock against.
	// microvm starts its firmware faster, but under TCG on a busy host its
	// kernel often fails to calibrate the TSC against the PIT and, having
	// no HPET or PM timer to fall back on, hangs; q35 always boots.
	machineQ35 = "q35"
	// machineVirt is arm64's.
	machineVirt = "virt"
)

// scratchSerial names the scratch disk to QEMU; the guest finds it at
// guestchan.ScratchDisk.
const scratchSerial = "qoslab-scratch"

// launch is one QEMU invocation with every choice made: the pure input of
// commandLine.
type launch struct {
	Arch      string // the image's: amd64 or arm64
	Accel     string // kvm, tcg or hvf
	Machine   string // q35 or virt
	CPUs      int
	MemoryMiB int
	Name      string

	// Kernel is what -kernel boots. On amd64 it is a bzImage, or an ELF
	// vmlinux with a PVH entry note, which QEMU's x86 loader starts at
	// that entry (through its pvh.bin option ROM): the guest then has no
	// kernel to decompress, which under TCG saves seconds. On arm64 it is
	// an Image, gzip'd or not.
	Kernel    string
	Initramfs string
	Cmdline   string // the image's; commandLine adds the console and panic=-1

	ConsoleLog  string
	QMPSocket   string
	AgentSocket string
	PIDFile     string

	Disk      string // the scratch disk file; "" for none
	DiskCache string // none (O_DIRECT) or writeback
	VsockCID  uint32 // 0 for no vsock device

	// Model is the device model: "" or hv.ModelDefault for QEMU's own,
	// hv.ModelVZ for Virtualization.framework's (see vzmodel.go), whose
	// vsock device is served on VhostUserSocket.
	Model           string
	VhostUserSocket string
}

// commandLine returns QEMU's arguments for l, without the binary.
func commandLine(l launch) ([]string, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	if l.Model == hv.ModelVZ {
		return vzModelArgs(l), nil
	}
	args := []string{
		"-name", optValue(l.Name) + ",debug-threads=on",
		"-machine", machineOption(l),
		"-accel", accelOption(l.Accel),
		"-cpu", cpuModel(l.Arch, l.Accel),
		"-smp", strconv.Itoa(l.CPUs),
		"-m", strconv.Itoa(l.MemoryMiB) + "M",
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-chardev", "file,id=console,path=" + optValue(l.ConsoleLog),
		"-serial", "chardev:console",
		"-chardev", "socket,id=qmp,path=" + optValue(l.QMPSocket) + ",server=on,wait=off",
		"-mon", "chardev=qmp,mode=control",
		"-chardev", "socket,id=agent,path=" + optValue(l.AgentSocket) + ",server=on,wait=off",
		"-device", "virtio-serial-pci,id=vser0",
		"-device", "virtserialport,bus=vser0.0,chardev=agent,name=" + guestchan.PortName,
	}
	if l.Disk != "" {
		args = append(args,
			"-drive", "file="+optValue(l.Disk)+",format=raw,if=none,id=scratch,cache="+l.DiskCache,
			"-device", "virtio-blk-pci,drive=scratch,serial="+scratchSerial,
		)
	}
	if l.VsockCID != 0 {
		args = append(args, "-device", fmt.Sprintf("vhost-vsock-pci,guest-cid=%d", l.VsockCID))
	}
	args = append(args,
		"-kernel", l.Kernel,
		"-initrd", l.Initramfs,
		"-append", kernelCmdline(l.Cmdline, l.Arch),
		"-pidfile", l.PIDFile,
	)
	return args, nil
}

func (l launch) check() error {
	switch {
	case l.Arch == "amd64" && l.Machine == machineQ35:
	case l.Arch == "arm64" && l.Machine == machineVirt:
	default:
		return fmt.Errorf("machine %q for a %s image: want q35 for amd64, virt for arm64", l.Machine, l.Arch)
	}
	switch l.Accel {
	case accelKVM, AccelTCG, accelHVF:
	default:
		return fmt.Errorf("accelerator %q: want kvm, tcg or hvf", l.Accel)
	}
	switch l.DiskCache {
	case "none", "writeback":
	default:
		if l.Disk != "" {
			return fmt.Errorf("disk cache mode %q: want none or writeback", l.DiskCache)
		}
	}
	switch l.Model {
	case "", hv.ModelDefault:
	case hv.ModelVZ:
		switch {
		case l.Arch != "arm64":
			return fmt.Errorf("the vz model for a %s image: want arm64", l.Arch)
		case l.VhostUserSocket == "":
			return errors.New("the vz model without its vsock daemon's socket")
		case l.VsockCID != 0:
			return errors.New("the vz model's vsock is vhost-user, not the kernel's vhost-vsock")
		}
	default:
		return fmt.Errorf("device model %q: want %s", l.Model, strings.Join(models, " or "))
	}
	return nil
}

// machineOption: arm64's virt takes the newest interrupt controller the
// accelerator offers (KVM on a GICv3-only host cannot give the default
// GICv2), except under hvf, whose QEMU versions differ in what they support
// and whose default works.
func machineOption(l launch) string {
	if l.Machine == machineVirt && l.Accel != accelHVF {
		return "virt,gic-version=max"
	}
	return l.Machine
}

// accelOption: TCG gets one host thread per vCPU (multi-threaded TCG), so
// each vCPU has its own thread id and its own host scheduling, as under KVM.
func accelOption(accel string) string {
	if accel == AccelTCG {
		return "tcg,thread=multi"
	}
	return accel
}

// cpuModel: under hardware acceleration the guest sees the host's CPU.
// Under TCG, "max" is every feature TCG emulates; on x86 that includes the
// hypervisor CPUID bit, so the guest knows it is virtualized. On arm64,
// pauth-impdef swaps QARMA pointer authentication, which TCG computes
// slowly, for QEMU's cheaper implementation-defined algorithm.
func cpuModel(arch, accel string) string {
	if accel != AccelTCG {
		return "host"
	}
	if arch == "arm64" {
		return "max,pauth-impdef=on"
	}
	return "max"
}

// kernelCmdline adds what the backend's devices need to the image's command
// line, unless the image says otherwise: the console on the serial port
// QEMU logs to, and panic=-1 so that a panicking guest reboots at once,
// which -no-reboot turns into QEMU exiting, so the controller notices.
func kernelCmdline(image, arch string) string {
	fields := strings.Fields(image)
	has := func(prefix string) bool {
		for _, f := range fields {
			if strings.HasPrefix(f, prefix) {
				return true
			}
		}
		return false
	}
	if !has("console=") {
		fields = append(fields, "console="+consoleDevice(arch))
	}
	if !has("panic=") {
		fields = append(fields, "panic=-1")
	}
	return strings.Join(fields, " ")
}

// consoleDevice is the guest's name for the serial port: the 8250 UART on
// x86's q35, the PL011 on arm64's virt.
func consoleDevice(arch string) string {
	if arch == "arm64" {
		return "ttyAMA0"
	}
	return "ttyS0"
}

// optValue escapes a value inside a QEMU option list, where a comma ends
// the value unless doubled.
func optValue(s string) string {
	return strings.ReplaceAll(s, ",", ",,")
}
