//go:build darwin && arm64 && cgo

package vz

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/Code-Hex/vz/v3"
	"golang.org/x/sys/unix"
)

// minHostMajor is the oldest macOS qoslab's vz backend runs on.
const minHostMajor = 13

// The installer's display: the framework wants a graphics device in a Mac
// configuration even when nobody looks at it.
const (
	installDisplayWidth  = 1920
	installDisplayHeight = 1200
	installDisplayPPI    = 80
)

// vzFramework is Framework through github.com/Code-Hex/vz/v3.
type vzFramework struct{ host string }

// HostFramework is Virtualization.framework on this Mac, or an error when
// the Mac runs a macOS older than 13.
func HostFramework() (Framework, error) {
	host, err := unix.Sysctl("kern.osproductversion")
	if err != nil {
		return nil, fmt.Errorf("read this Mac's macOS version: %w", err)
	}
	if major, _ := strconv.Atoi(strings.SplitN(host, ".", 2)[0]); major < minHostMajor {
		return nil, fmt.Errorf("%w; this Mac runs macOS %s: update it", ErrNeedsMac, host)
	}
	return vzFramework{host: host}, nil
}

func (f vzFramework) HostVersion() string { return f.host }

func (vzFramework) LatestRestoreImageURL(ctx context.Context) (string, error) {
	// vz's call cannot be cancelled; waiting aside lets ctx end the wait.
	type answer struct {
		url string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		u, err := vz.GetLatestSupportedMacOSRestoreImageURL()
		ch <- answer{u, err}
	}()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case a := <-ch:
		if a.err != nil {
			return "", fmt.Errorf("ask Apple for the latest restore image this Mac supports: %w", a.err)
		}
		return a.url, nil
	}
}

func (vzFramework) Requirements(ctx context.Context, ipsw string) (Requirements, error) {
	img, err := vz.LoadMacOSRestoreImageFromPath(ipsw)
	if err != nil {
		return Requirements{}, err
	}
	// vz v3.7.1 never returns nil here: when the host supports no
	// configuration it wraps a nil object, whose minimums read 0 and whose
	// hardware model is unsupported and empty.
	cfg := img.MostFeaturefulSupportedConfiguration()
	if cfg == nil || cfg.MinimumSupportedCPUCount() == 0 {
		return Requirements{}, nil
	}
	hw := cfg.HardwareModel()
	if hw == nil || !hw.Supported() {
		return Requirements{}, nil
	}
	return Requirements{
		Supported: true,
		MinCPUs:   int(cfg.MinimumSupportedCPUCount()),
		MinMemory: cfg.MinimumSupportedMemorySize(),
		// A copy: vz's slice points into the object's NSData, which goes with it.
		HardwareModel: append([]byte(nil), hw.DataRepresentation()...),
	}, nil
}

func (vzFramework) Limits() Limits {
	return Limits{
		MinCPUs:        int(vz.VirtualMachineConfigurationMinimumAllowedCPUCount()),
		MaxCPUs:        int(vz.VirtualMachineConfigurationMaximumAllowedCPUCount()),
		MinMemoryBytes: vz.VirtualMachineConfigurationMinimumAllowedMemorySize(),
		MaxMemoryBytes: vz.VirtualMachineConfigurationMaximumAllowedMemorySize(),
	}
}

func (vzFramework) NewMachineIdentifier() ([]byte, error) {
	id, err := vz.NewMacMachineIdentifier()
	if err != nil {
		return nil, err
	}
	// A copy: vz's slice points into the object's NSData, which goes with it.
	return append([]byte(nil), id.DataRepresentation()...), nil
}

func (vzFramework) Install(ctx context.Context, t InstallTarget, progress func(float64)) error {
	vm, err := installerVM(t)
	if err != nil {
		return err
	}
	inst, err := vz.NewMacOSInstaller(vm, t.IPSW)
	if err != nil {
		return fmt.Errorf("start the macOS installer: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- inst.Install(ctx) }()
	// vz records fractionCompleted as the framework's NSProgress reports
	// it; polling it is how v3.7.1 exposes progress.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("macOS installer: %w", err)
			}
			progress(1)
			return nil
		case <-tick.C:
			progress(inst.FractionCompleted())
		}
	}
}

// installerVM is the smallest Mac configuration the installer accepts,
// creating the auxiliary storage on the way.
func installerVM(t InstallTarget) (*vz.VirtualMachine, error) {
	hw, err := vz.NewMacHardwareModelWithData(t.HardwareModel)
	if err != nil {
		return nil, fmt.Errorf("hardware model: %w", err)
	}
	id, err := vz.NewMacMachineIdentifierWithData(t.MachineIdentifier)
	if err != nil {
		return nil, fmt.Errorf("machine identifier: %w", err)
	}
	aux, err := vz.NewMacAuxiliaryStorage(t.Aux, vz.WithCreatingMacAuxiliaryStorage(hw))
	if err != nil {
		return nil, fmt.Errorf("auxiliary storage: %w", err)
	}
	platform, err := vz.NewMacPlatformConfiguration(
		vz.WithMacHardwareModel(hw), vz.WithMacMachineIdentifier(id), vz.WithMacAuxiliaryStorage(aux))
	if err != nil {
		return nil, fmt.Errorf("platform: %w", err)
	}
	boot, err := vz.NewMacOSBootLoader()
	if err != nil {
		return nil, fmt.Errorf("boot loader: %w", err)
	}
	cfg, err := vz.NewVirtualMachineConfiguration(boot, uint(t.CPUs), t.MemoryBytes)
	if err != nil {
		return nil, fmt.Errorf("VM configuration: %w", err)
	}
	cfg.SetPlatformVirtualMachineConfiguration(platform)
	att, err := vz.NewDiskImageStorageDeviceAttachment(t.Disk, false)
	if err != nil {
		return nil, fmt.Errorf("disk: %w", err)
	}
	disk, err := vz.NewVirtioBlockDeviceConfiguration(att)
	if err != nil {
		return nil, fmt.Errorf("disk: %w", err)
	}
	cfg.SetStorageDevicesVirtualMachineConfiguration([]vz.StorageDeviceConfiguration{disk})
	gfx, err := vz.NewMacGraphicsDeviceConfiguration()
	if err != nil {
		return nil, fmt.Errorf("graphics: %w", err)
	}
	display, err := vz.NewMacGraphicsDisplayConfiguration(installDisplayWidth, installDisplayHeight, installDisplayPPI)
	if err != nil {
		return nil, fmt.Errorf("graphics: %w", err)
	}
	gfx.SetDisplays(display)
	cfg.SetGraphicsDevicesVirtualMachineConfiguration([]vz.GraphicsDeviceConfiguration{gfx})
	// Validate may refuse without an error to say why.
	ok, err := cfg.Validate()
	if err != nil {
		return nil, fmt.Errorf("Virtualization.framework refused the installer's VM configuration (%d CPUs, %d MiB): %w",
			t.CPUs, t.MemoryBytes>>20, err)
	}
	if !ok {
		return nil, fmt.Errorf("Virtualization.framework refused the installer's VM configuration (%d CPUs, %d MiB) without saying why",
			t.CPUs, t.MemoryBytes>>20)
	}
	vm, err := vz.NewVirtualMachine(cfg)
	if err != nil {
		return nil, fmt.Errorf("installer VM: %w", err)
	}
	return vm, nil
}
