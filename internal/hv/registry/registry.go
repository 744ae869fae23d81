// Package registry is the one place qoslab's hypervisor backends are
// registered, each with what the rest of qoslab knows of it (hv.Driver):
// its name, where it runs and is the default, the accelerators and device
// models it takes, its own validation of a VM asked of it, how it is made,
// the images it keeps itself (vz's VM bundles) and the helper commands it
// runs qoslab as (vz's host process). Above hv, nothing but this package
// names a backend's package (the image tools that make vz bundles aside),
// and nothing lists backends, accelerators or models: they read them here.
//
// A new backend is its package, whose Driver describes it, and one
// Register call in this file's init.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/qemu"
	"github.com/qoslab/qoslab/internal/hv/vz"
	"github.com/qoslab/qoslab/internal/suggest"
)

// Names of the registered backends.
const (
	QEMU = qemu.Name
	VZ   = vz.Name
)

// The backends, in the order doctor shows them.
func init() {
	Register(qemu.Driver())
	Register(vz.Driver(agent.ShutdownOver))
}

// Options are what backends need from the machine they run on.
type Options = hv.DriverOptions

// Helper is a hidden command a backend runs qoslab as (hv.Helper).
type Helper = hv.Helper

// drivers are the registered backends, in the order they registered.
var drivers []hv.Driver

// Register adds a backend. A driver without a name or New, a name
// registered twice, or a device model another backend (or every backend,
// as ModelDefault) already has is a programming error: it panics at
// start-up, before any VM is asked for.
func Register(d hv.Driver) {
	if d.Name == "" || d.New == nil {
		panic(fmt.Sprintf("hv registry: backend %q registered without a name or New", d.Name))
	}
	for _, e := range drivers {
		if e.Name == d.Name {
			panic(fmt.Sprintf("hv registry: backend %q registered twice", d.Name))
		}
	}
	for _, m := range d.Models {
		if owner := ModelBackend(m.Name); owner != "" || m.Name == hv.ModelDefault || m.Name == "" {
			panic(fmt.Sprintf("hv registry: backend %q registers device model %q, which is %s", d.Name, m.Name, orOwn(owner)))
		}
	}
	drivers = append(drivers, d)
}

func orOwn(owner string) string {
	if owner == "" {
		return "every backend's own"
	}
	return "backend " + owner + "'s"
}

// Driver returns the backend called name as it registered, ok false when
// none is.
func Driver(name string) (hv.Driver, bool) {
	for _, d := range drivers {
		if d.Name == name {
			return d, true
		}
	}
	return hv.Driver{}, false
}

// Accels lists the accelerators any backend takes, each once, in the
// order the backends registered them: --accel's and vm.accel's values.
func Accels() []string {
	var out []string
	for _, d := range drivers {
		for _, a := range d.Accels {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// AccelBackends lists the backends that take an accelerator at all.
func AccelBackends() []string {
	var out []string
	for _, d := range drivers {
		if len(d.Accels) > 0 {
			out = append(out, d.Name)
		}
	}
	return out
}

// Models lists the device models: every backend's own (hv.ModelDefault),
// then each backend's, in the order they registered: --vm-model's and
// vm.model's values.
func Models() []string {
	out := []string{hv.ModelDefault}
	for _, d := range drivers {
		for _, m := range d.Models {
			out = append(out, m.Name)
		}
	}
	return out
}

// Model returns the device model called name and the backend that has
// it; ok is false for the backend's own (hv.ModelDefault, "") and for a
// name no backend has.
func Model(name string) (m hv.Model, backend string, ok bool) {
	for _, d := range drivers {
		for _, m := range d.Models {
			if m.Name == name {
				return m, d.Name, true
			}
		}
	}
	return hv.Model{}, "", false
}

// ModelBackend is the backend that has the device model called name, ""
// for the backend's own and for a name no backend has.
func ModelBackend(name string) string {
	_, b, _ := Model(name)
	return b
}

// OpenBundle opens the image in dir that a backend keeps itself (a vz VM
// bundle), through the backend whose it is; ok is false when dir is no
// backend's bundle (a built Linux image, or nothing).
func OpenBundle(dir string) (img hv.Image, ok bool, err error) {
	for _, e := range drivers {
		if e.OpenBundle == nil {
			continue
		}
		if img, ok, err := e.OpenBundle(dir); ok {
			return img, true, err
		}
	}
	return hv.Image{}, false, nil
}

// Helpers lists the helper commands of every backend, for the command
// tree (hidden: qoslab runs them of itself, users do not).
func Helpers() []Helper {
	var out []Helper
	for _, e := range drivers {
		out = append(out, e.Helpers...)
	}
	return out
}

// Names lists the registered backends.
func Names() []string {
	var out []string
	for _, e := range drivers {
		out = append(out, e.Name)
	}
	return out
}

// Default is the backend a machine uses unless told otherwise: the one
// whose DefaultOn is this platform (vz on Apple silicon Macs), else the
// first with none (qemu).
func Default() string {
	here := runtime.GOOS + "/" + runtime.GOARCH
	fallback := ""
	for _, d := range drivers {
		if d.DefaultOn == here {
			return d.Name
		}
		if d.DefaultOn == "" && fallback == "" {
			fallback = d.Name
		}
	}
	return fallback
}

// NotApplicable says why the backend called name cannot run on this
// platform at all ("" when it can: whether it is ready is its Check's
// business).
func NotApplicable(name string) string {
	here := runtime.GOOS + "/" + runtime.GOARCH
	for _, e := range drivers {
		if e.Name == name && e.Platform != "" && e.Platform != here {
			return fmt.Sprintf("runs on %s only; this is %s", e.Platform, here)
		}
	}
	return ""
}

// UnknownError is a backend name that is not registered.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	msg := fmt.Sprintf("unknown VM backend %q: allowed %s", e.Name, strings.Join(Names(), ", "))
	if g := suggest.Closest(e.Name, Names()); g != "" {
		msg += fmt.Sprintf("; did you mean %s?", g)
	}
	return msg
}

// Check returns an *UnknownError when name is not a registered backend.
func Check(name string) error {
	for _, e := range drivers {
		if e.Name == name {
			return nil
		}
	}
	return &UnknownError{Name: name}
}

// New makes the backend called name ("" for Default); an unknown name is an
// *UnknownError, never a fallback to another backend.
func New(name string, o Options) (hv.Backend, error) {
	if name == "" {
		name = Default()
	}
	for _, e := range drivers {
		if e.Name == name {
			return e.New(o), nil
		}
	}
	return nil, &UnknownError{Name: name}
}

// All makes every registered backend, for doctor.
func All(o Options) []hv.Backend {
	var out []hv.Backend
	for _, e := range drivers {
		out = append(out, e.New(o))
	}
	return out
}

// Attach attaches to the VM whose state is in stateDir through the backend
// that started it (vm.json names it).
func Attach(ctx context.Context, o Options, stateDir string) (hv.Machine, error) {
	var head struct {
		Info struct {
			Backend string `json:"backend"`
		} `json:"info"`
	}
	b, err := os.ReadFile(filepath.Join(stateDir, hv.StateFile)) //nolint:gosec // G304: vm.json in the state directory the user names
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s has no %s: no VM was started there", stateDir, hv.StateFile)
	}
	if err != nil {
		return nil, fmt.Errorf("read VM state: %w", err)
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("read VM state %s: %w", filepath.Join(stateDir, hv.StateFile), err)
	}
	backend, err := New(head.Info.Backend, o)
	if err != nil {
		return nil, fmt.Errorf("VM state %s: %w", filepath.Join(stateDir, hv.StateFile), err)
	}
	return backend.Attach(ctx, stateDir)
}

// CheckVM returns the problems of a VM asked of the backend called
// backend ("" when it is decided later, from this machine), as spec
// validation words them (vm.accel, vm.model): an accelerator or device
// model no backend has, or that this backend does not take, then what the
// backend's own Validate says. An unknown backend is Check's to refuse;
// here it has no problems of its own.
func CheckVM(backend string, c hv.VMConfig) []string {
	var p []string
	bad := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	d, named := Driver(backend)
	switch {
	case c.Accel == "":
	case !slices.Contains(Accels(), c.Accel):
		bad("vm.accel %q: allowed %s, or leave it out to use KVM/hvf when they work", c.Accel, strings.Join(Accels(), ", "))
	case named && len(d.Accels) == 0:
		bad("vm.accel %q: only the %s an accelerator", c.Accel, backendsTake(AccelBackends()))
	case named && !slices.Contains(d.Accels, c.Accel):
		bad("vm.accel %q: the %s backend takes %s", c.Accel, d.Name, strings.Join(d.Accels, ", "))
	}
	switch m, owner, ok := Model(c.Model); {
	case c.Model == "" || c.Model == hv.ModelDefault:
	case !ok:
		bad("vm.model %q: allowed %s, or leave it out for the backend's own", c.Model, strings.Join(Models(), ", "))
	case named && owner != backend:
		bad("vm.model %q with vm.backend %s: the %s model is %s; with vm.backend %s leave vm.model out (or use vm.backend %s)", c.Model, backend, c.Model, m.Is, backend, owner)
	}
	if named && d.Validate != nil {
		p = append(p, d.Validate(c)...)
	}
	return p
}

// backendsTake is "qemu backend takes", or "qemu and fake backends take".
func backendsTake(names []string) string {
	if len(names) == 1 {
		return names[0] + " backend takes"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " backends take"
}
