package experiment

import (
	"context"
	"fmt"
	"slices"

	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/namedvm"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/spec"
)

// BackendNotHereError is a VM backend asked for on a platform it does not
// run on (vz off Apple silicon).
type BackendNotHereError struct {
	Backend, Why string
}

func (e *BackendNotHereError) Error() string {
	return fmt.Sprintf("%s %s: use %s here", e.Backend, e.Why, registry.Default())
}

// CheckVMTarget refuses, before anything starts or boots, a spec whose vm
// target cannot be had on this machine as env sets it up: a backend for
// another platform (a *BackendNotHereError), an image the store lacks, a
// named VM that is not running. A spec without a vm target passes.
func CheckVMTarget(ctx context.Context, s spec.Spec, env guestvm.Env) error {
	if !slices.Contains(s.Targets, spec.TargetVM) {
		return nil
	}
	if env.Name != "" {
		_, err := namedvm.For(env).Attach(ctx, env.Name)
		return err
	}
	v, _ := guestvm.Fit(s.VM, env)
	if err := registry.Check(v.Backend); err != nil {
		return err
	}
	// Before booting anything: vz can give its VM only the background
	// band (its apply after the boot checks again, for a named VM too).
	if v.Backend == registry.VZ && s.VM.HostQoS != qos.Unspecified {
		if err := checkHostQoSVZ(s.VM.HostQoS); err != nil {
			return err
		}
	}
	if why := registry.NotApplicable(v.Backend); why != "" {
		return &BackendNotHereError{Backend: v.Backend, Why: why}
	}
	_, err := guestvm.LoadImage(env.Store, v.Image)
	return err
}
