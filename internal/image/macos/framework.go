package macos

import "github.com/qoslab/qoslab/internal/hv/vz"

// What only Virtualization.framework can do to make an image: the vz
// backend owns every call into the framework.
type (
	// Framework is what only Virtualization.framework can answer or do to
	// make a macOS image (see
	// vz.Framework).
	Framework = vz.Framework
	// Requirements is what a restore image needs of this host
	// (VZMacOSConfigurationRequirements; see vz.Requirements).
	Requirements = vz.Requirements
	// InstallTarget is a staged bundle the installer fills (see
	// vz.InstallTarget).
	InstallTarget = vz.InstallTarget
)

// ErrNeedsMac is wrapped by every error about a step only
// Virtualization.framework can do.
var ErrNeedsMac = vz.ErrNeedsMac

// HostFramework is Virtualization.framework on this Mac (see
// vz.HostFramework).
func HostFramework() (Framework, error) { return vz.HostFramework() }
