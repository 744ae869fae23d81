package macos

import "github.com/qoslab/qoslab/internal/hv/vz"

// What only Virtualization.framework can do to make an image: the vz
// backend owns every call into the framework.
type (
	// Framework is what only Virtualization.framework can answer or do to
	// make a macOS image (see
	// vz.Framework).
	Framework = vz.Framework
	// requirements is what a restore image needs of this host
	// (VZMacOSConfigurationRequirements; see vz.Requirements).
	requirements = vz.Requirements
	// installTarget is a staged bundle the installer fills (see
	// vz.InstallTarget).
	installTarget = vz.InstallTarget
)

// errNeedsMac is wrapped by every error about a step only
// Virtualization.framework can do.
var errNeedsMac = vz.ErrNeedsMac

// hostFramework is Virtualization.framework on this Mac (see
// vz.HostFramework).
func hostFramework() (Framework, error) { return vz.HostFramework() }
