// Package fakehv is a hypervisor backend that boots nothing, for tests
// only: importing it registers backend "fake", with accelerator
// "fakeaccel", device model "fakemodel" and a check of its own (at most
// 4 vCPUs). Its tests show what a new backend costs: this package, and no
// list elsewhere to extend (a real one adds one Register call in
// hv/registry). No qoslab command imports it.
package fakehv

import (
	"context"
	"errors"
	"fmt"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
)

// The names the fake backend registers.
const (
	Name  = "fake"
	Accel = "fakeaccel"
	Model = "fakemodel"
	// MaxCPUs is what its own validation allows.
	MaxCPUs = 4
)

func init() { registry.Register(Driver()) }

// Driver is the fake backend as it registers itself.
func Driver() hv.Driver {
	return hv.Driver{
		Name: Name,
		// Never the default: a machine with the fake backend imported still
		// boots what it did.
		DefaultOn: "fake/none",
		Accels:    []string{Accel},
		Models:    []hv.Model{{Name: Model, Is: "the fake backend's layout", Help: "lays nothing out: the fake backend's, for tests"}},
		Validate: func(c hv.VMConfig) []string {
			if c.CPUs > MaxCPUs {
				return []string{fmt.Sprintf("vm.cpus %d: the fake backend gives at most %d", c.CPUs, MaxCPUs)}
			}
			return nil
		},
		New: func(hv.DriverOptions) hv.Backend { return backend{} },
	}
}

// ErrNoBoot is what Start and Attach return: the fake boots nothing.
var ErrNoBoot = errors.New("the fake backend boots nothing (it is for tests)")

type backend struct{}

func (backend) Name() string { return Name }

func (backend) Check(context.Context) []hv.Check {
	return []hv.Check{{Name: "nothing", OK: true, Detail: "the fake backend needs nothing"}}
}

func (backend) Start(context.Context, hv.Spec) (hv.Machine, error) { return nil, ErrNoBoot }

func (backend) Attach(context.Context, string) (hv.Machine, error) { return nil, ErrNoBoot }
