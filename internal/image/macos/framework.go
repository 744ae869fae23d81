package macos

import "github.com/qoslab/qoslab/internal/hv/vz"

// What only Virtualization.framework can do to make an image: the vz
// backend owns every call into the framework (see vz.Framework).
type (
	Framework     = vz.Framework
	Requirements  = vz.Requirements
	InstallTarget = vz.InstallTarget
)

// ErrNeedsMac is wrapped by every error about a step only
// Virtualization.framework can do.
var ErrNeedsMac = vz.ErrNeedsMac

// HostFramework is Virtualization.framework on this Mac (see
// vz.HostFramework).
func HostFramework() (Framework, error) { return vz.HostFramework() }
