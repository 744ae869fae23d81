package vz

import (
	"context"
	"errors"
)

// ErrNeedsMac is wrapped by every error about a step only
// Virtualization.framework can do.
var ErrNeedsMac = errors.New("creating macOS images needs a Mac (macOS 13+, Apple silicon)")

// Framework is what only Virtualization.framework can answer or do to make
// a macOS image. The darwin/arm64 cgo build implements it with
// github.com/Code-Hex/vz/v3 (install_darwin.go); tests pass a fake, so
// everything around it is checked on Linux.
type Framework interface {
	// HostVersion is the host's macOS version, e.g. "14.4.1".
	HostVersion() string
	// LatestRestoreImageURL asks Apple for the newest restore image this
	// host supports.
	LatestRestoreImageURL(ctx context.Context) (string, error)
	// Requirements loads the restore image at ipsw and says what its most
	// featureful configuration this host supports needs.
	Requirements(ctx context.Context, ipsw string) (Requirements, error)
	// Limits are the framework's bounds on any VM's CPUs and memory.
	Limits() Limits
	// NewMachineIdentifier makes a new VZMacMachineIdentifier and returns
	// its data representation.
	NewMachineIdentifier() ([]byte, error)
	// Install creates the auxiliary storage at t.Aux and runs the macOS
	// installer onto t.Disk, calling progress with the fraction done (0..1)
	// as it goes.
	Install(ctx context.Context, t InstallTarget, progress func(fraction float64)) error
}

// Requirements is VZMacOSConfigurationRequirements, for one restore image
// on this host.
type Requirements struct {
	// Supported is false when the host supports none of the image's
	// hardware models (an image too new for this macOS, or too old for
	// this Mac).
	Supported bool
	MinCPUs   int
	MinMemory uint64 // bytes
	// HardwareModel is VZMacHardwareModel's data representation, saved as
	// the bundle's hardware-model.bin.
	HardwareModel []byte
}

// InstallTarget is a staged bundle the installer fills: Disk exists at its
// full size, Aux does not exist yet.
type InstallTarget struct {
	IPSW              string
	Disk, Aux         string
	HardwareModel     []byte
	MachineIdentifier []byte
	CPUs              int
	MemoryBytes       uint64
}
