// Package doctor says what a run on this machine has and lacks, each
// thing with how to fix it: `qoslab doctor`'s checks. It reads; it never
// builds, fetches or boots anything.
package doctor

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/image"
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
func Checks(ctx context.Context, agentPath string, env guestvm.Env, kernels string) []Check {
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
	for _, b := range registry.All(env.Registry()) {
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
	name := guestvm.DefaultImage()
	img, _, err := image.Load(env.Store, name)
	return append(out, found("image "+name, "qoslab image build linux", fmt.Sprintf("kernel %s, agent %s, in %s", img.KernelVersion, img.AgentVersion, img.Dir), err))
}
