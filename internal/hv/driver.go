package hv

import "context"

// Driver is a backend as it registers itself (hv/registry.Register): what
// the rest of qoslab knows of it, so that naming, validating, listing and
// completing backends, accelerators and device models reads the registry
// and no list elsewhere. A backend's package says it in one function (its
// Driver); the registry has one Register call for it.
type Driver struct {
	// Name is the backend's name: vm.backend, --vm-backend, MachineInfo's
	// Backend, doctor's checks.
	Name string
	// Platform is where the backend runs at all (GOOS/GOARCH, "" for
	// anywhere): elsewhere it is not applicable, rather than missing.
	Platform string
	// DefaultOn is the platform (GOOS/GOARCH) on which the backend is the
	// default one; "" makes it the default where no other one is.
	DefaultOn string
	// Accels are the accelerators a spec or --accel may force on it, in
	// the order help lists them; none when it takes none.
	Accels []string
	// Models are its device models besides every backend's own
	// (ModelDefault).
	Models []Model
	// Validate is the backend's own check of a VM asked of it, beyond the
	// names the registry checks (backend, accelerator, model): each problem
	// a sentence that names the bad value and what is allowed. Nil for none.
	Validate func(VMConfig) []string
	// New makes the backend.
	New func(DriverOptions) Backend
	// OpenBundle opens the image the backend keeps itself in dir (a VM
	// bundle); ok is false when dir holds none of its. Nil for a backend
	// whose images are all qoslab's built Linux images.
	OpenBundle func(dir string) (img Image, ok bool, err error)
	// Helpers are the commands qoslab runs of itself for the backend.
	Helpers []Helper
}

// Model is a device model a backend has besides its own layout.
type Model struct {
	// Name is vm.model's and --vm-model's value.
	Name string
	// Is says what the model is, in a sentence's middle ("the qemu
	// backend's emulation of Virtualization.framework's devices"), for the
	// error that refuses it on another backend.
	Is string
	// Help is --vm-model's word on it, after its name.
	Help string
}

// VMConfig is what a backend's Validate sees of the VM asked of it.
type VMConfig struct {
	Accel string
	// Model is "" for the backend's own.
	Model string
	CPUs  int
	// MemoryBytes and DiskBytes are 0 when not given.
	MemoryBytes, DiskBytes int64
}

// DriverOptions are what backends need from the machine they run on.
type DriverOptions struct {
	// CacheDir is qoslab's cache directory (failed KVM probes are remembered there).
	CacheDir string
	// VhostVsockDirs are where the qemu backend looks for the vz model's
	// vsock device when PATH lacks it (qemu.Options.VhostVsockDirs).
	VhostVsockDirs []string
}

// Helper is a hidden command a backend runs qoslab as, a process of its
// own: vz's host, which keeps a detached VM running after the command
// that started it has ended.
type Helper struct {
	// Name is the command's name; Arg names its one argument, for its
	// usage line.
	Name, Arg string
	// Main is the process's work, with the command's argument.
	Main func(ctx context.Context, arg string) error
}
