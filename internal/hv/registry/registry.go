// Package registry is the one place qoslab's hypervisor backends are
// registered: their names, how each is made, the images a backend keeps
// itself (vz's VM bundles), the helper commands a backend runs qoslab as
// (vz's host process), and which backend a machine uses by default. Above
// hv, nothing but this package names a backend's package (the image tools
// that make vz bundles aside).
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
	"strings"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/qemu"
	"github.com/qoslab/qoslab/internal/hv/vz"
	"github.com/qoslab/qoslab/internal/suggest"
)

// Names of the registered backends.
const (
	QEMU = "qemu"
	VZ   = "vz"
)

// Options are what backends need from the machine they run on.
type Options struct {
	// CacheDir is qoslab's cache directory (failed KVM probes are remembered there).
	CacheDir string
	// VhostVsockDirs are where the qemu backend looks for the vz model's
	// vsock device when PATH lacks it (qemu.Options.VhostVsockDirs).
	VhostVsockDirs []string
}

// entry is one registered backend.
type entry struct {
	name string
	// platform is where the backend runs at all (GOOS/GOARCH, "" for
	// anywhere): elsewhere it is not applicable, rather than missing.
	platform string
	make     func(Options) hv.Backend
	// openBundle opens the image the backend keeps itself in dir (a VM
	// bundle); ok is false when dir holds none of its. Nil for a backend
	// whose images are all qoslab's built Linux images.
	openBundle func(dir string) (img hv.Image, ok bool, err error)
	// helpers are the commands qoslab runs of itself for the backend.
	helpers []Helper
}

// Helper is a hidden command a backend runs qoslab as, a process of its
// own: vz's host, which keeps a detached VM running after the command
// that started it has ended.
type Helper struct {
	// Name is the command's name; Arg names its one argument, for its
	// usage line.
	Name, Arg string
	// Main is the process's work, with the command's argument.
	Main func(ctx context.Context, arg string) error
}

// backends lists every backend, in the order doctor shows them.
func backends() []entry {
	return []entry{
		// QEMU: Linux guests; KVM or TCG on Linux, hvf on macOS.
		{name: QEMU, make: func(o Options) hv.Backend {
			return qemu.New(qemu.Options{CacheDir: o.CacheDir, VhostVsockDirs: o.VhostVsockDirs})
		}},
		// Virtualization.framework: macOS and Linux guests, macOS 13+ on
		// Apple silicon.
		{name: VZ, platform: "darwin/arm64", make: func(Options) hv.Backend {
			// A guest is stopped through its agent first (a macOS guest's
			// power button opens a dialog).
			return vz.New(vz.Options{AgentStop: agent.ShutdownOver})
		}, openBundle: openVZBundle, helpers: []Helper{{Name: vz.HostCommand, Arg: "STATE_DIR", Main: func(ctx context.Context, stateDir string) error {
			return vz.HostMain(ctx, stateDir, agent.ShutdownOver)
		}}}},
	}
}

// openVZBundle opens the macOS (or Linux) VM bundle in dir, when dir is
// one (it has vz's config file).
func openVZBundle(dir string) (hv.Image, bool, error) {
	if _, err := os.Stat(filepath.Join(dir, vz.BundleConfigFile)); err != nil {
		return hv.Image{}, false, nil
	}
	b, err := vz.OpenBundle(dir)
	if err != nil {
		return hv.Image{}, true, err
	}
	return b.Image(), true, nil
}

// OpenBundle opens the image in dir that a backend keeps itself (a vz VM
// bundle), through the backend whose it is; ok is false when dir is no
// backend's bundle (a built Linux image, or nothing).
func OpenBundle(dir string) (img hv.Image, ok bool, err error) {
	for _, e := range backends() {
		if e.openBundle == nil {
			continue
		}
		if img, ok, err := e.openBundle(dir); ok {
			return img, true, err
		}
	}
	return hv.Image{}, false, nil
}

// Helpers lists the helper commands of every backend, for the command
// tree (hidden: qoslab runs them of itself, users do not).
func Helpers() []Helper {
	var out []Helper
	for _, e := range backends() {
		out = append(out, e.helpers...)
	}
	return out
}

// Names lists the registered backends.
func Names() []string {
	var out []string
	for _, e := range backends() {
		out = append(out, e.name)
	}
	return out
}

// Default is the backend a machine uses unless told otherwise:
// Virtualization.framework on Apple silicon Macs, QEMU elsewhere.
func Default() string {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		return VZ
	}
	return QEMU
}

// NotApplicable says why the backend called name cannot run on this
// platform at all ("" when it can: whether it is ready is its Check's
// business).
func NotApplicable(name string) string {
	here := runtime.GOOS + "/" + runtime.GOARCH
	for _, e := range backends() {
		if e.name == name && e.platform != "" && e.platform != here {
			return fmt.Sprintf("runs on %s only; this is %s", e.platform, here)
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
	for _, e := range backends() {
		if e.name == name {
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
	for _, e := range backends() {
		if e.name == name {
			return e.make(o), nil
		}
	}
	return nil, &UnknownError{Name: name}
}

// All makes every registered backend, for doctor.
func All(o Options) []hv.Backend {
	var out []hv.Backend
	for _, e := range backends() {
		out = append(out, e.make(o))
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
