// Package guestvm is a VM with qoslab's agent in it, as the engine and the
// named VMs both use one: where this machine keeps VMs and images and what
// the user overrides (Env), a spec's VM fitted to this host (Fit), its
// image found (LoadImage), booted until its agent answers (Boot), its agent
// reached (AgentOver) and the VM stopped through it (Stop).
package guestvm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/spec"
)

// AgentOver connects an agent client to a machine's channel, tied to the
// machine's life: once the VM ends, calls fail at once saying so, naming
// its console log (keep, when the log is kept elsewhere after the VM stops).
func AgentOver(m hv.Machine, keep string) (*agent.Client, error) {
	c, err := agent.NewClient(func(ctx context.Context) (net.Conn, error) { return m.DialAgent(ctx) })
	if err != nil {
		return nil, err
	}
	c.EndsWith(m.Done(), func() error {
		info := m.Info()
		why := "it stopped"
		if err := m.Err(); err != nil {
			why = err.Error()
		}
		console := info.ConsoleLog
		if keep != "" {
			console = keep + " (kept there once the VM stopped)"
		}
		return fmt.Errorf("vm %s ended (%s); its console is in %s", info.Name, why, console)
	})
	return c, nil
}

// Boot starts a VM and waits until its agent answers Info; the client it
// returns is the one that got the answer (a channel may take one connection).
// Each boot attempt gets timeout(the machine's Info) to answer: a guest
// that hangs (or a hypervisor stopped with SIGSTOP) is stopped, and the
// error names the VM, the deadline and its console log.
func Boot(ctx context.Context, backend hv.Backend, log io.Writer, hs hv.Spec, timeout func(hv.MachineInfo) time.Duration, keep string) (hv.Machine, *agent.Client, error) {
	var client *agent.Client
	hs.Ready = func(ctx context.Context, m hv.Machine) error {
		c, err := AgentOver(m, keep)
		if err != nil {
			return err
		}
		info := m.Info()
		accel, limit := info.Accel, timeout(info)
		ictx, cancel := context.WithTimeout(ctx, limit)
		_, err = c.Info(ictx)
		late := errors.Is(ictx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err != nil {
			c.Close()
			if late {
				return fmt.Errorf("vm %s: its agent did not answer within %s (accel %s; --boot-timeout sets the limit): the guest hung or its hypervisor was stopped", hs.Name, limit, accel)
			}
			return err
		}
		if client != nil {
			client.Close()
		}
		client = c
		return nil
	}
	hs.Log = log
	m, err := backend.Start(ctx, hs)
	if err != nil {
		if client != nil {
			client.Close()
		}
		return nil, nil, err
	}
	if client == nil {
		// A backend that did not call Ready: connect now.
		if client, err = AgentOver(m, keep); err != nil {
			_ = m.Stop(context.Background())
			return nil, nil, err
		}
	}
	return m, client, nil
}

// Env is where this machine keeps VMs and images, and what the user
// overrides of a spec's VM; it never changes what a spec measures.
type Env struct {
	// Name attaches the vm target to a VM started earlier with `qoslab vm
	// start NAME` instead of booting one for the run.
	Name string
	// Store is the image store; StateHome holds named VMs (vms/NAME);
	// CacheDir is the backends' cache (failed KVM probes).
	Store, StateHome, CacheDir string
	// Backend, Accel and Model, when set, override the spec's.
	Backend, Accel, Model string
	// BootTimeout bounds each boot, from starting the hypervisor to the
	// agent's first answer (0: hv.DefaultBootTimeout for the machine).
	BootTimeout time.Duration
	// CargoBin is cargo's bin directory (config.CargoBin), where the vz
	// model's vsock device is looked for when PATH lacks it.
	CargoBin string
	// KeepConsole, when set, is where a VM booted for a run keeps its
	// console log (appended when the VM stops): the results directory's,
	// so the log an error names outlives the run.
	KeepConsole string
}

// BootTimeoutFor is the env's boot timeout for machine m: --boot-timeout,
// else hv's default for it.
func (e Env) BootTimeoutFor(m hv.MachineInfo) time.Duration {
	if e.BootTimeout > 0 {
		return e.BootTimeout
	}
	return hv.DefaultBootTimeout(m)
}

// DefaultEnv fills in e's empty places with the user's (XDG) directories
// read through env: $XDG_STATE_HOME/qoslab for named VMs,
// $XDG_CACHE_HOME/qoslab for the backends' cache, the image store under
// it, and cargo's bin directory.
func DefaultEnv(env func(string) string, e Env) Env {
	home := func(xdg, fallback string) string {
		dir := env(xdg)
		if dir == "" || !filepath.IsAbs(dir) {
			dir = filepath.Join(env(config.HomeEnv), fallback)
		}
		return filepath.Join(dir, "qoslab")
	}
	if e.StateHome == "" {
		e.StateHome = home(config.StateHomeEnv, filepath.Join(".local", "state"))
	}
	if e.CacheDir == "" {
		e.CacheDir = home(config.CacheHomeEnv, ".cache")
	}
	if e.Store == "" {
		e.Store, _ = image.DefaultStoreDir(env)
	}
	if e.CargoBin == "" {
		e.CargoBin = config.CargoBin(env)
	}
	return e
}

// Registry is what the env gives the backends: their cache directory.
func (e Env) Registry() registry.Options {
	o := registry.Options{CacheDir: e.CacheDir}
	if e.CargoBin != "" {
		o.VhostVsockDirs = []string{e.CargoBin}
	}
	return o
}

// Fit applies the env's overrides and this host's limits to the spec's VM,
// with a note for each value changed to fit.
func Fit(v spec.VMSpec, env Env) (spec.VMSpec, []string) {
	if env.Backend != "" {
		v.Backend = env.Backend
	}
	if v.Backend == "" {
		v.Backend = registry.Default()
	}
	if env.Accel != "" {
		v.Accel = env.Accel
	}
	var notes []string
	if env.Model != "" {
		asked := modelName(v.Model)
		v.Model = env.Model
		if applied := modelName(v.Model); applied != asked {
			notes = append(notes, fmt.Sprintf("vm.model %s applied (--vm-model); the spec asked for %s", applied, asked))
		}
	}
	if v.Model == hv.ModelDefault {
		v.Model = ""
	}
	if v.Image == "" {
		v.Image = DefaultImageFor(v.Model)
	}
	if n := runtime.NumCPU(); v.Backend == registry.QEMU && v.CPUs > n {
		notes = append(notes, fmt.Sprintf("vm.cpus %d asked, %d applied: this host has %d CPUs and the qemu backend gives a VM at most that many", v.CPUs, n, n))
		v.CPUs = n
	}
	return v, notes
}

// DefaultImage is the image a VM boots unless told otherwise: the built-in
// recipe's, for this machine's arch.
func DefaultImage() string { return image.DefaultRecipe().ImageName(runtime.GOARCH) }

// modelName is a device model as a note names it.
func modelName(model string) string {
	if model == "" {
		return hv.ModelDefault
	}
	return model
}

// DefaultImageFor is DefaultImage for a device model: the vz model boots
// arm64 guests, as Virtualization.framework on Apple silicon does.
func DefaultImageFor(model string) string {
	if model == hv.ModelVZ {
		return image.DefaultRecipe().ImageName("arm64")
	}
	return DefaultImage()
}

// CheckModel refuses a device model the backend does not have (the vz
// model is the qemu backend's).
func CheckModel(v spec.VMSpec) error {
	if m, owner, ok := registry.Model(v.Model); ok && v.Backend != owner {
		return fmt.Errorf("vm.model %s runs on the %s backend, not %s: use --vm-backend %s (vm.backend: %s), or leave the model out; the %s model is %s", m.Name, owner, v.Backend, owner, owner, m.Name, m.Is)
	}
	return nil
}

// LoadImage finds the image to boot by name in the store: a VM bundle
// (macOS, for vz) or a built Linux image.
func LoadImage(store, name string) (hv.Image, error) {
	if img, ok, err := registry.OpenBundle(image.ImageDir(store, name)); ok {
		return img, err
	}
	img, _, err := image.Load(store, name)
	if err != nil {
		return hv.Image{}, err // it says how to build it
	}
	return img, nil
}

// Stop asks the guest's agent to power it off, gives it a moment,
// then stops the VM (by force if it has not gone). The stop is given the
// backend's own bounds, not one of ours: a macOS guest on vz has 30 s to
// shut down once asked, and cutting that short forces the power off of a
// guest that is writing its disk.
func Stop(c *agent.Client, m hv.Machine) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownRPCTimeout)
	_ = c.Shutdown(ctx)
	cancel()
	select {
	case <-m.Done():
	case <-time.After(3 * time.Second):
	}
	err := m.Stop(context.Background())
	_ = c.Close()
	return err
}

// shutdownRPCTimeout bounds the agent's answer to Shutdown.
const shutdownRPCTimeout = 15 * time.Second
