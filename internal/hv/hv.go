// Package hv boots lightweight VMs that run the qoslab agent: small
// interfaces here, one package per backend (hv/qemu, hv/vz).
package hv

import (
	"context"
	"io"
	"net"
	"time"
)

// Image is a bootable guest: a kernel and an initramfs whose /init is the agent.
type Image struct {
	Name   string `json:"name"`
	Dir    string `json:"dir"`
	Kernel string `json:"kernel"` // path on the host
	// UncompressedKernel is the kernel uncompressed, for boot loaders that
	// take no compressed kernel (Virtualization.framework's); empty when
	// the image has none (amd64 images, and images built before it).
	UncompressedKernel string `json:"uncompressed_kernel,omitempty"`
	Initramfs          string `json:"initramfs"` // path on the host
	Cmdline            string `json:"cmdline"`
	Arch               string `json:"arch"` // amd64, arm64
	KernelVersion      string `json:"kernel_version"`
	AgentVersion       string `json:"agent_version"`
	// OS is the guest's operating system, OSLinux or OSMacOS; "" is
	// OSLinux (see GuestOS).
	OS string `json:"os,omitempty"`
}

// The device models a VM may be laid out as.
const (
	// ModelDefault is the backend's own layout (qemu: a UART console and a
	// virtio-serial port for the agent, beside vsock where the host has
	// it). "" means it too.
	ModelDefault = "default"
	// ModelVZ is a Linux guest laid out as Virtualization.framework lays
	// it out (the vz backend's Plan): the virtio console as the only
	// console, no UART named, no virtio-serial port, the agent over vsock.
	// The qemu backend emulates it to test, where there is no Mac, the
	// guest a Mac boots; what it measures is QEMU's, never
	// Virtualization.framework's.
	ModelVZ = "vz"
)

// Spec is what to boot.
type Spec struct {
	Name  string // the VM's name; its state lives in StateDir
	Image Image
	// Model is the device model ("" or ModelDefault for the backend's own).
	Model     string
	CPUs      int
	MemoryMiB int
	DiskBytes int64  // raw scratch disk (the guest's compression sink); 0 for none
	Accel     string // "" to probe the best, or one of the backend's Driver's Accels to force it
	StateDir  string // sockets, console log, disk, pid; created if missing
	// Detach lets the VM outlive the controller (named VMs: `qoslab vm start`):
	// its own session, no parent-death signal. Otherwise the VM dies with the
	// controller.
	Detach bool
	// BootTimeout is --boot-timeout when the user gave one (0: the
	// machine's DefaultBootTimeout). The controller bounds the boot with
	// it (guestvm.Boot); a backend whose own host process waits for the
	// agent (vz's, for every connection it proxies while the guest boots)
	// waits as long, or it would drop a connection the controller still
	// waits on.
	BootTimeout time.Duration
	// Ready tells whether a boot succeeded: it returns nil once the agent in
	// m answers. With Accel "" the backend uses it to probe KVM within
	// ProbeTimeout before falling back to TCG. Start returns only after Ready
	// (when set) has returned nil.
	Ready func(ctx context.Context, m Machine) error
	// Log gets what a user should see while booting (a KVM probe that failed
	// and the fallback to TCG, for example); nil discards it.
	Log io.Writer
	// KeepConsole, when set, is where the console log is kept once the VM
	// stops (a run keeps it with its results, and its state directory
	// goes): the errors that name the console name it there.
	KeepConsole string
}

// ConsoleLogName is the file in a VM's state directory its console is
// written to, by every backend.
const ConsoleLogName = "console.log"

// ConsoleError is a VM's error that names its console log, for a look at
// where the guest stopped: Err, then "; console: " Path, then More (what
// a helper said, "; ..."). A caller that keeps the console elsewhere finds
// it with errors.As: an error without one gets the console named.
type ConsoleError struct {
	Err  error
	Path string
	More string
}

func (e *ConsoleError) Error() string { return e.Err.Error() + "; console: " + e.Path + e.More }

func (e *ConsoleError) Unwrap() error { return e.Err }

// MachineInfo is what the host knows about a running VM.
type MachineInfo struct {
	Backend string `json:"backend"`
	Name    string `json:"name"`
	PID     int    `json:"pid"`   // the hypervisor process on the host
	Accel   string `json:"accel"` // kvm, tcg, hvf, vz
	// Model is the device model when it is not the backend's own
	// (ModelVZ under qemu), "" otherwise.
	Model       string `json:"model,omitempty"`
	CPUs        int    `json:"cpus"`
	MemoryMiB   int    `json:"memory_mib"`
	VCPUThreads []int  `json:"vcpu_threads,omitempty"` // host thread id of each vCPU, by index
	StateDir    string `json:"state_dir"`
	// ServicePID is the process that runs the guest's vCPUs when PID does
	// not: on a Mac, Virtualization.framework's XPC service
	// (com.apple.Virtualization.VirtualMachine), found when the VM
	// started. 0 for the other backends, or when it was not found, which
	// ServiceError then says why.
	ServicePID   int    `json:"service_pid,omitempty"`
	ServiceError string `json:"service_error,omitempty"`
	ConsoleLog   string `json:"console_log,omitempty"`
	Disk         string `json:"disk,omitempty"`       // the scratch disk on the host
	GuestDisk    string `json:"guest_disk,omitempty"` // the scratch disk in the guest, e.g. /dev/vda
	// StartClass is the class the hypervisor process was started at on the
	// host: its threads, the vCPU threads among them, inherit it unless
	// given another. Nil when the backend starts no process of its own.
	StartClass *ProcessClass `json:"start_class,omitempty"`
	// BootNs is from starting the hypervisor process to the agent answering,
	// when this controller booted it.
	BootNs int64 `json:"boot_ns,omitempty"`
	Image  Image `json:"image"`
}

// ProcessClass is the QoS class a process was started at, as asked and as
// read back (the names of qos.Class; this package stays free of qos so that
// hv/vz stays thin).
type ProcessClass struct {
	Asked   string `json:"asked"`
	Applied string `json:"applied"`
	// Detail is the OS-level read-back, e.g. "SCHED_OTHER nice=0".
	Detail string `json:"detail,omitempty"`
	// Reason says why Applied is not Asked, or what part did not apply.
	Reason string `json:"reason,omitempty"`
}

// OK reports whether the process started at the class asked for.
func (c ProcessClass) OK() bool { return c.Asked == c.Applied }

// Text is "default (SCHED_OTHER nice=0 uclamp=unsupported)", with what was
// asked and why it was not applied when it was not.
func (c ProcessClass) Text() string {
	s := c.Applied
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	if !c.OK() {
		s += ", " + c.Asked + " asked"
		if c.Reason != "" {
			s += ": " + c.Reason
		}
	}
	return s
}

// Machine is a running VM.
type Machine interface {
	// DialAgent connects to the agent in the guest. A channel may take one
	// connection at a time.
	DialAgent(ctx context.Context) (net.Conn, error)
	Info() MachineInfo
	// Done is closed when the VM has ended, whoever ended it; a VM killed
	// from outside is noticed within 2 s.
	Done() <-chan struct{}
	// Err says why the VM ended, once Done is closed (nil for a clean stop).
	Err() error
	// Stop shuts the VM down: politely, then by force after a timeout.
	Stop(ctx context.Context) error
}

// Check is one thing a backend needs, for `qoslab doctor`.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"` // the command that fixes it
	// Warn marks a thing that is there but does not work as it should
	// here, while runs go on without it (KVM present but failing its probe
	// boot: TCG is used). OK stays true: it fails nothing, but it is not
	// "ok" either.
	Warn bool `json:"warn,omitempty"`
	// Absent marks an optional thing that is not installed: OK stays true
	// (no run needs it) and Detail says what would.
	Absent bool `json:"absent,omitempty"`
}

// Backend boots VMs of one kind.
type Backend interface {
	Name() string
	Check(ctx context.Context) []Check
	Start(ctx context.Context, spec Spec) (Machine, error)
	// Attach returns a Machine for a VM started earlier with Detach, from its
	// state directory.
	Attach(ctx context.Context, stateDir string) (Machine, error)
}
