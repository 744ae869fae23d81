package experiment

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/spec"
)

// Check is one thing a run needs, present or missing, and how to fix it.
type Check struct {
	hv.Check
	// NotApplicable marks a backend that cannot run on this platform at
	// all: not missing, just not for here.
	NotApplicable bool `json:"not_applicable,omitempty"`
}

// Checks says what a run on this machine has and lacks: the agents, every
// registered backend (its own Check), the guest kernel and the default
// image. kernels is the kernel cache.
func Checks(ctx context.Context, agentPath string, env VMEnv, kernels string) []Check {
	found := func(name, fix, detail string, err error) Check {
		if err != nil {
			line, _, _ := strings.Cut(err.Error(), "\n")
			return Check{Check: hv.Check{Name: name, Detail: line, Fix: fix}}
		}
		return Check{Check: hv.Check{Name: name, OK: true, Detail: detail}}
	}
	arch := runtime.GOARCH
	p, err := agent.FindAgent(agentPath)
	out := []Check{found("host agent", "make build", p, err)}
	p, err = agent.FindGuestAgent("", "linux", arch)
	out = append(out, found("guest agent (linux/"+arch+")", "make build", p, err))
	for _, b := range registry.All(env.registry()) {
		if why := registry.NotApplicable(b.Name()); why != "" {
			out = append(out, Check{Check: hv.Check{Name: b.Name(), OK: true, Detail: why}, NotApplicable: true})
			continue
		}
		for _, c := range b.Check(ctx) {
			c.Name = b.Name() + ": " + c.Name
			out = append(out, Check{Check: c})
		}
	}
	r := image.DefaultRecipe()
	ks, err := image.LocateKernel(r, image.LocateOptions{Arch: arch, KernelCacheDir: kernels, DefaultKernelCacheDir: kernels})
	out = append(out, found("guest kernel ("+r.Kernel.Source+")", "qoslab image fetch-kernel --arch "+arch, fmt.Sprintf("%s from %s", ks.Version, ks.Origin), err))
	name := DefaultImage()
	img, _, err := image.Load(env.Store, name)
	return append(out, found("image "+name, "qoslab image build linux", fmt.Sprintf("kernel %s, agent %s, in %s", img.KernelVersion, img.AgentVersion, img.Dir), err))
}

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
func CheckVMTarget(ctx context.Context, s spec.Spec, env VMEnv) error {
	if !slices.Contains(s.Targets, spec.TargetVM) {
		return nil
	}
	if env.Name != "" {
		_, err := env.NamedVMs().Attach(ctx, env.Name)
		return err
	}
	v, _ := fitVM(s.VM, env)
	if err := registry.Check(v.Backend); err != nil {
		return err
	}
	if why := registry.NotApplicable(v.Backend); why != "" {
		return &BackendNotHereError{Backend: v.Backend, Why: why}
	}
	_, err := loadImage(env.Store, v.Image)
	return err
}
