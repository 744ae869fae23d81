//go:build darwin && arm64 && cgo

package vz

// The only file that touches Virtualization.framework: it turns a plan
// into vz objects and a running vz.VirtualMachine into an instance, and
// decides nothing the plan has not. vz runs the calls made here on the VM's
// own dispatch queue (VirtualMachine.Start, Stop, RequestStop, CanStop,
// CanRequestStop and VirtioSocketDevice.Connect pass it to the framework),
// as the framework requires, so no call here needs the main thread; all
// but one: vz v3.7.1's VirtualMachine.SocketDevices reads the VM's
// socketDevices property from the calling goroutine, off the queue. It is
// called once, right after the VM has started, for an array the
// configuration fixed when the VM was made (one socket device); vz gives
// no way to make the call on the queue, and other vz clients make it the
// same way. Running it on the queue would take a change to vz's
// Objective-C (VZVirtualMachine_socketDevices with dispatch_sync), which
// nothing here could compile or test: so it is said, not changed.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"sync"

	"github.com/Code-Hex/vz/v3"
	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/signing"
)

// macDisplay is the macOS guest's one display, which nobody looks at:
// macOS expects a display (tart and vz's own example always give one).
const (
	macDisplayWidth  = 1920
	macDisplayHeight = 1200
	macDisplayPPI    = 80
)

func hostPlatform() platform {
	return platform{limits: frameworkLimits, boot: bootVZ, check: checkHost}
}

// frameworkLimits is the framework's range on this Mac, once macOS is new
// enough for the vz calls this package makes.
func frameworkLimits() (Limits, error) {
	version, err := unix.Sysctl("kern.osproductversion")
	if c := signing.MacOSCheck(version, err); !c.OK {
		return Limits{}, fmt.Errorf("%s: %s", c.Detail, c.Fix)
	}
	return Limits{
		MinCPUs:        int(vz.VirtualMachineConfigurationMinimumAllowedCPUCount()),
		MaxCPUs:        int(vz.VirtualMachineConfigurationMaximumAllowedCPUCount()),
		MinMemoryBytes: vz.VirtualMachineConfigurationMinimumAllowedMemorySize(),
		MaxMemoryBytes: vz.VirtualMachineConfigurationMaximumAllowedMemorySize(),
	}, nil
}

// checkHost is signing's checks of this Mac and of the running binary's
// entitlement (read from its code signature with codesign), and the
// framework's limits when the framework can be asked.
func checkHost(ctx context.Context) []hv.Check {
	var checks []hv.Check
	ready := true
	for _, c := range signing.CheckHost(ctx) {
		checks = append(checks, hv.Check{Name: c.Name, OK: c.OK, Detail: c.Detail, Fix: c.Fix})
		ready = ready && (c.OK || c.Name == signing.CheckNameEntitlement)
	}
	if !ready {
		return checks
	}
	lim, err := frameworkLimits()
	c := hv.Check{Name: "Virtualization.framework limits", OK: err == nil}
	if err != nil {
		c.Detail = err.Error()
	} else {
		lo, hi := lim.memoryMiB()
		c.Detail = fmt.Sprintf("%d to %d vCPUs, %d to %d MiB of memory per VM", lim.MinCPUs, lim.MaxCPUs, lo, hi)
	}
	return append(checks, c)
}

// bootVZ configures, validates and starts p's VM.
func bootVZ(ctx context.Context, p plan, logger *log.Logger) (instance, error) {
	config, err := configure(p)
	if err != nil {
		return nil, err
	}
	if ok, err := config.Validate(); err != nil || !ok {
		return nil, invalidConfig(ctx, err)
	}
	// The service processes before the VM is made, to tell its own (the
	// framework launches it for the new VM) from other VMs'.
	before, listErr := serviceProcesses()
	vm, err := vz.NewVirtualMachine(config)
	if err != nil {
		return nil, refused("create the VM", err, signing.CheckHost(ctx))
	}
	// Taken before Start so that no change is missed.
	states := vm.StateChangedNotify()
	started := make(chan error, 1)
	go func() { started <- vm.Start() }()
	select {
	case err := <-started:
		if err != nil {
			return nil, refused("start the VM", err, signing.CheckHost(ctx))
		}
	case <-ctx.Done():
		go func() {
			if <-started == nil {
				_ = vm.Stop()
			}
		}()
		return nil, fmt.Errorf("start the VM: %w", ctx.Err())
	}
	sockets := vm.SocketDevices()
	if len(sockets) != 1 {
		_ = vm.Stop()
		return nil, fmt.Errorf("the VM has %d virtio socket devices, want 1", len(sockets))
	}
	socket := sockets[0]
	inst := &vzInstance{vm: vm, done: make(chan struct{})}
	// Looked for once the VM runs, and kept with why when not found: only
	// vm.host_qos needs it, and fails the run then with that error.
	inst.servicePID, inst.serviceErr = findServiceAfter(before, listErr)
	if inst.serviceErr == nil {
		logger.Printf("service process %s: pid %d", serviceName, inst.servicePID)
	} else {
		logger.Printf("service process %s not found: %v", serviceName, inst.serviceErr)
	}
	inst.conns = newConnector(func(port uint32, stop <-chan struct{}) (net.Conn, error) {
		c, err := socket.ConnectCancel(port, stop)
		if err != nil {
			return nil, err
		}
		if c == nil { // not a nil net.Conn holding a nil pointer
			return nil, errors.New("the framework returned no connection and no error")
		}
		return c, nil
	})
	go inst.watch(states, logger)
	return inst, nil
}

// invalidConfig explains a configuration the framework refuses, with what
// the host checks find wrong: a binary without the virtualization
// entitlement is refused here, whatever the configuration.
func invalidConfig(ctx context.Context, err error) error {
	return refused("Virtualization.framework refuses the VM's configuration", err, signing.CheckHost(ctx))
}

// configure builds the framework's configuration from p, device by device
// as planDevices lays them out.
func configure(p plan) (*vz.VirtualMachineConfiguration, error) {
	d, err := planDevices(p)
	if err != nil {
		return nil, err
	}
	boot, err := bootLoader(p, d)
	if err != nil {
		return nil, err
	}
	config, err := vz.NewVirtualMachineConfiguration(boot, uint(p.CPUs), p.MemoryBytes())
	if err != nil {
		return nil, fmt.Errorf("VM configuration: %w", err)
	}
	if d.macOS {
		platform, err := macPlatform(p)
		if err != nil {
			return nil, err
		}
		config.SetPlatformVirtualMachineConfiguration(platform)
		graphics, err := macGraphics()
		if err != nil {
			return nil, err
		}
		config.SetGraphicsDevicesVirtualMachineConfiguration([]vz.GraphicsDeviceConfiguration{graphics})
	}
	var storage []vz.StorageDeviceConfiguration
	for _, k := range d.disks {
		device, err := blockDevice(k.path, k.caching)
		if err != nil {
			return nil, err
		}
		storage = append(storage, device)
	}
	config.SetStorageDevicesVirtualMachineConfiguration(storage)
	if d.mac != nil {
		nic, err := natDevice(d.mac)
		if err != nil {
			return nil, err
		}
		config.SetNetworkDevicesVirtualMachineConfiguration([]*vz.VirtioNetworkDeviceConfiguration{nic})
	}
	if d.console != "" {
		console, err := consoleDevice(d.console)
		if err != nil {
			return nil, err
		}
		config.SetSerialPortsVirtualMachineConfiguration([]*vz.VirtioConsoleDeviceSerialPortConfiguration{console})
	}
	entropy, err := vz.NewVirtioEntropyDeviceConfiguration()
	if err != nil {
		return nil, fmt.Errorf("entropy device: %w", err)
	}
	config.SetEntropyDevicesVirtualMachineConfiguration([]*vz.VirtioEntropyDeviceConfiguration{entropy})
	socket, err := vz.NewVirtioSocketDeviceConfiguration()
	if err != nil {
		return nil, fmt.Errorf("virtio socket device: %w", err)
	}
	config.SetSocketDevicesVirtualMachineConfiguration([]vz.SocketDeviceConfiguration{socket})
	return config, nil
}

// bootLoader is the macOS boot loader, or the Linux one with p's kernel.
func bootLoader(p plan, d devices) (vz.BootLoader, error) {
	if d.macOS {
		b, err := vz.NewMacOSBootLoader()
		if err != nil {
			return nil, fmt.Errorf("macOS boot loader: %w", err)
		}
		return b, nil
	}
	b, err := vz.NewLinuxBootLoader(p.Kernel, vz.WithCommandLine(p.Cmdline), vz.WithInitrd(p.Initramfs))
	if err != nil {
		return nil, fmt.Errorf("Linux boot loader: %w", err)
	}
	return b, nil
}

// natDevice is a virtio network device on NAT, with address mac.
func natDevice(mac net.HardwareAddr) (*vz.VirtioNetworkDeviceConfiguration, error) {
	nat, err := vz.NewNATNetworkDeviceAttachment()
	if err != nil {
		return nil, fmt.Errorf("NAT network: %w", err)
	}
	nic, err := vz.NewVirtioNetworkDeviceConfiguration(nat)
	if err != nil {
		return nil, fmt.Errorf("network device: %w", err)
	}
	addr, err := vz.NewMACAddress(mac)
	if err != nil {
		return nil, fmt.Errorf("MAC address %s: %w", mac, err)
	}
	nic.SetMACAddress(addr)
	return nic, nil
}

// consoleDevice is a virtio console writing to the file at path.
func consoleDevice(path string) (*vz.VirtioConsoleDeviceSerialPortConfiguration, error) {
	attachment, err := vz.NewFileSerialPortAttachment(path, false)
	if err != nil {
		return nil, fmt.Errorf("console log %s: %w", path, err)
	}
	console, err := vz.NewVirtioConsoleDeviceSerialPortConfiguration(attachment)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	return console, nil
}

// macPlatform is the Mac the bundle describes.
func macPlatform(p plan) (*vz.MacPlatformConfiguration, error) {
	model, err := vz.NewMacHardwareModelWithData(p.HardwareModel)
	if err != nil {
		return nil, fmt.Errorf("hardware model: %w", err)
	}
	// The framework gives back no model for data it cannot read.
	if len(model.DataRepresentation()) == 0 {
		return nil, corrupt(p.Bundle, hardwareModelFile, "does not hold a hardware model Virtualization.framework reads")
	}
	if !model.Supported() {
		return nil, fmt.Errorf("VM bundle %s: this Mac does not support the bundle's hardware model (made for a newer macOS or other hardware): update macOS on this Mac, or make the bundle again here with `%s`", p.Bundle, bundleCreateCommand)
	}
	id, err := vz.NewMacMachineIdentifierWithData(p.MachineIdentifier)
	if err != nil {
		return nil, fmt.Errorf("machine identifier: %w", err)
	}
	if len(id.DataRepresentation()) == 0 {
		return nil, corrupt(p.Bundle, machineIdentifierFile, "does not hold a machine identifier Virtualization.framework reads")
	}
	aux, err := vz.NewMacAuxiliaryStorage(p.AuxStorage)
	if err != nil {
		return nil, fmt.Errorf("auxiliary storage %s: %w", p.AuxStorage, err)
	}
	platform, err := vz.NewMacPlatformConfiguration(
		vz.WithMacHardwareModel(model),
		vz.WithMacMachineIdentifier(id),
		vz.WithMacAuxiliaryStorage(aux),
	)
	if err != nil {
		return nil, fmt.Errorf("Mac platform: %w", err)
	}
	return platform, nil
}

func macGraphics() (*vz.MacGraphicsDeviceConfiguration, error) {
	graphics, err := vz.NewMacGraphicsDeviceConfiguration()
	if err != nil {
		return nil, fmt.Errorf("graphics device: %w", err)
	}
	display, err := vz.NewMacGraphicsDisplayConfiguration(macDisplayWidth, macDisplayHeight, macDisplayPPI)
	if err != nil {
		return nil, fmt.Errorf("display: %w", err)
	}
	graphics.SetDisplays(display)
	return graphics, nil
}

// blockDevice is a virtio block device on a raw disk image.
func blockDevice(path, caching string) (*vz.VirtioBlockDeviceConfiguration, error) {
	mode := vz.DiskImageCachingModeAutomatic
	if caching == cachingUncached {
		mode = vz.DiskImageCachingModeUncached
	}
	attachment, err := vz.NewDiskImageStorageDeviceAttachmentWithCacheAndSync(path, false, mode, vz.DiskImageSynchronizationModeFull)
	if err != nil {
		return nil, fmt.Errorf("disk %s: %w", path, err)
	}
	device, err := vz.NewVirtioBlockDeviceConfiguration(attachment)
	if err != nil {
		return nil, fmt.Errorf("disk %s: %w", path, err)
	}
	return device, nil
}

// vzInstance is a started vz.VirtualMachine.
type vzInstance struct {
	vm *vz.VirtualMachine
	// conns makes vsock connections through the VM's socket device, each
	// attempt with its deadline (vz's Connect cannot be cancelled, and may
	// never be answered; see connector).
	conns *connector

	// servicePID is the framework's service process running this VM, or
	// serviceErr why it was not found.
	servicePID int
	serviceErr error

	mu   sync.Mutex
	err  error
	done chan struct{}
}

// Service is the framework's service process running the VM.
func (i *vzInstance) Service() (int, error) { return i.servicePID, i.serviceErr }

// findServiceAfter is findService on the process table now, beside the
// one listed before the VM was made (or the error listing it).
func findServiceAfter(before []process, listErr error) (int, error) {
	if listErr != nil {
		return 0, listErr
	}
	after, err := serviceProcesses()
	if err != nil {
		return 0, err
	}
	return findService(before, after, os.Getuid())
}

// watch follows the VM's state until it has stopped.
func (i *vzInstance) watch(states <-chan vz.VirtualMachineState, logger *log.Logger) {
	var err error
	for st := range states {
		logger.Printf("VM state: %v", st)
		if st == vz.VirtualMachineStateStopped {
			break
		}
		if st == vz.VirtualMachineStateError {
			err = errors.New("Virtualization.framework put the VM in its error state (the guest crashed, or the host ran out of a resource)")
			break
		}
	}
	i.mu.Lock()
	i.err = err
	i.mu.Unlock()
	// The framework may never answer the attempts parked on the stopped
	// VM: give them up, so that a controller that outlives the VM keeps
	// none of their goroutines.
	i.conns.close()
	close(i.done)
}

// Connect dials a vsock port in the guest. The framework may not answer
// until the guest's vsock device does, or at all, and its call cannot be
// cancelled: an attempt unanswered past its deadline is left in flight and
// a new one made (see connector), until ctx ends or the VM stops.
func (i *vzInstance) Connect(ctx context.Context, port uint32) (net.Conn, error) {
	return i.conns.connectWhile(ctx, i.done, port)
}

func (i *vzInstance) Done() <-chan struct{} { return i.done }

func (i *vzInstance) Err() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.err
}

// RequestStop presses the guest's power button.
func (i *vzInstance) RequestStop() error {
	if !i.vm.CanRequestStop() {
		return fmt.Errorf("the VM is %v", i.vm.State())
	}
	ok, err := i.vm.RequestStop()
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("the framework did not send the request")
	}
	return nil
}

// ForceStop stops the VM at once, bounded by ctx.
func (i *vzInstance) ForceStop(ctx context.Context) error {
	if !i.vm.CanStop() {
		return fmt.Errorf("the VM is %v and cannot be stopped", i.vm.State())
	}
	stopped := make(chan error, 1)
	go func() { stopped <- i.vm.Stop() }()
	select {
	case err := <-stopped:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
