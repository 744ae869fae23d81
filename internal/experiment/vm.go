package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/namedvm"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/tmpdir"
)

// agentOver connects an agent client to a machine's channel, tied to the
// machine's life: once the VM ends, calls fail at once saying so, naming
// its console log (keep, when the log is kept elsewhere after the VM stops).
func agentOver(m hv.Machine, keep string) (*agent.Client, error) {
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

// BootVM starts a VM and waits until its agent answers Info; the client it
// returns is the one that got the answer (a channel may take one connection).
// Each boot attempt gets timeout(the machine's Info) to answer: a guest
// that hangs (or a hypervisor stopped with SIGSTOP) is stopped, and the
// error names the VM, the deadline and its console log.
func BootVM(ctx context.Context, backend hv.Backend, log io.Writer, hs hv.Spec, timeout func(hv.MachineInfo) time.Duration, keep string) (hv.Machine, *agent.Client, error) {
	var client *agent.Client
	hs.Ready = func(ctx context.Context, m hv.Machine) error {
		c, err := agentOver(m, keep)
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
		if client, err = agentOver(m, keep); err != nil {
			_ = m.Stop(context.Background())
			return nil, nil, err
		}
	}
	return m, client, nil
}

// VMEnv is where this machine keeps VMs and images, and what the user
// overrides of a spec's VM; it never changes what a spec measures.
type VMEnv struct {
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

// bootTimeout is the env's boot timeout for machine m: --boot-timeout,
// else hv's default for it.
func (e VMEnv) bootTimeout(m hv.MachineInfo) time.Duration {
	if e.BootTimeout > 0 {
		return e.BootTimeout
	}
	return hv.DefaultBootTimeout(m)
}

// DefaultVMEnv fills in e's empty places with the user's (XDG) directories
// read through env: $XDG_STATE_HOME/qoslab for named VMs,
// $XDG_CACHE_HOME/qoslab for the backends' cache, the image store under
// it, and cargo's bin directory.
func DefaultVMEnv(env func(string) string, e VMEnv) VMEnv {
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
func (e VMEnv) Registry() registry.Options {
	o := registry.Options{CacheDir: e.CacheDir}
	if e.CargoBin != "" {
		o.VhostVsockDirs = []string{e.CargoBin}
	}
	return o
}

// NamedVMs is where the env keeps named VMs (`qoslab vm`).
func (e VMEnv) NamedVMs() namedvm.Store {
	return namedvm.Store{Home: e.StateHome, Registry: e.Registry()}
}

// fitVM applies the env's overrides and this host's limits to the spec's VM,
// with a note for each value changed to fit.
func fitVM(v spec.VMSpec, env VMEnv) (spec.VMSpec, []string) {
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

// checkModel refuses a device model the backend does not have: the vz
// model is the qemu backend's.
func checkModel(v spec.VMSpec) error {
	if v.Model == hv.ModelVZ && v.Backend != registry.QEMU {
		return fmt.Errorf("vm.model vz (Virtualization.framework's device model, emulated) runs on the qemu backend, not %s: use --vm-backend qemu (vm.backend: qemu), or leave the model out", v.Backend)
	}
	return nil
}

// loadImage finds the image to boot by name in the store: a VM bundle
// (macOS, for vz) or a built Linux image.
func loadImage(store, name string) (hv.Image, error) {
	if img, ok, err := registry.OpenBundle(image.ImageDir(store, name)); ok {
		return img, err
	}
	img, _, err := image.Load(store, name)
	if err != nil {
		return hv.Image{}, err // it says how to build it
	}
	return img, nil
}

// startVM attaches to the named VM of env, or boots one for the run of s,
// sized for it. notes say what was changed to fit this host.
func startVM(ctx context.Context, s spec.Spec, env VMEnv, log io.Writer) (t *vmTarget, notes []string, err error) {
	if env.Name != "" {
		m, err := env.NamedVMs().Attach(ctx, env.Name)
		if err != nil {
			return nil, nil, err
		}
		c, err := agentOver(m, "")
		if err != nil {
			return nil, nil, err
		}
		return &vmTarget{Client: c, machine: m}, nil, nil
	}
	v, notes := fitVM(s.VM, env)
	if err := checkModel(v); err != nil {
		return nil, notes, err
	}
	backend, err := registry.New(v.Backend, env.Registry())
	if err != nil {
		return nil, notes, err
	}
	img, err := loadImage(env.Store, v.Image)
	if err != nil {
		return nil, notes, err
	}
	// A controller killed with -9 left its VM's directory (sockets, a
	// sparse scratch disk): gone now that its owner is.
	for _, d := range tmpdir.Sweep("qoslab-vm-") {
		fmt.Fprintf(log, "vm: removed %s, left by a qoslab that no longer runs\n", d)
	}
	dir, err := tmpdir.Make("qoslab-vm-")
	if err != nil {
		return nil, notes, err
	}
	mem, disk := spec.VMSize(s)
	name := fmt.Sprintf("run-%d", os.Getpid())
	model := ""
	if v.Model != "" {
		model = ", Virtualization.framework's device model under " + v.Backend + " (vm.model " + v.Model + "): a test of the guest, not a Mac"
	}
	fmt.Fprintf(log, "vm: booting %s (%s, kernel %s) with %d vCPUs, %d MiB%s\n", name, v.Image, img.KernelVersion, v.CPUs, mem, model)
	m, c, err := BootVM(ctx, backend, log, hv.Spec{Name: name, Image: img, CPUs: v.CPUs, MemoryMiB: mem, DiskBytes: disk, Accel: v.Accel, Model: v.Model, StateDir: dir}, env.bootTimeout, env.KeepConsole)
	if err != nil {
		if kerr := releaseStateDir(dir, env.KeepConsole, name); kerr != nil {
			err = errors.Join(err, kerr)
		} else if env.KeepConsole != "" {
			err = &consoleMovedError{err: err, dir: dir, keep: env.KeepConsole}
		}
		return nil, notes, fmt.Errorf("boot vm: %w", err)
	}
	info := m.Info()
	if info.Model != "" {
		fmt.Fprintf(log, "vm: backend %s, model %s\n", info.Backend, info.Model)
	}
	fmt.Fprintf(log, "vm: agent answered %.2f s after start (accel %s, pid %d, vCPU threads %v)\n",
		float64(info.BootNs)/1e9, info.Accel, info.PID, info.VCPUThreads)
	return &vmTarget{Client: c, machine: m, owned: true, dir: dir, keepConsole: env.KeepConsole}, notes, nil
}

// keepConsole appends the console log of the VM whose state is in dir to
// keep (nothing when keep is empty), under a line naming the VM and when:
// the state directory goes when the run ends, the console must not. An
// error means the console is not whole in keep (a full disk): the caller
// must then leave dir, where it still is.
func keepConsole(dir, keep, name string) error {
	if keep == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, hv.ConsoleLogName)) //nolint:gosec // G304: the console in the VM's own state directory
	if err != nil {
		// A failed KVM probe leaves its console under another name.
		b, err = os.ReadFile(filepath.Join(dir, probeConsoleLog)) //nolint:gosec // G304: the console in the VM's own state directory
	}
	if err != nil {
		return nil // no console: nothing to keep
	}
	f, err := os.OpenFile(keep, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644) //nolint:gosec // G302,G304: the results directory's console log, readable as the rest of the results
	if err != nil {
		return err
	}
	head := fmt.Sprintf("=== vm %s console, kept %s ===\n", name, time.Now().UTC().Format(time.RFC3339))
	_, err = f.Write(append([]byte(head), b...))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// probeConsoleLog is where the qemu backend moves a failed KVM probe's
// console.
const probeConsoleLog = "console-kvm-probe.log"

// consoleNotKeptError is a VM's console that could not be copied into the
// results directory before its state directory would go: the directory is
// left where it is, and the error says where to read the console.
type consoleNotKeptError struct {
	VM, Keep, Dir string
	Err           error
}

func (e *consoleNotKeptError) Error() string {
	return fmt.Sprintf("the console of vm %s could not be kept in %s (%v): it is left in %s; read it there, then remove that directory", e.VM, e.Keep, e.Err, e.Dir)
}

func (e *consoleNotKeptError) Unwrap() error { return e.Err }

// releaseStateDir keeps the console of the VM whose state is in dir, then
// removes dir; when the console cannot be kept, dir stays and the error
// (a *consoleNotKeptError) says so.
func releaseStateDir(dir, keep, name string) error {
	if err := keepConsole(dir, keep, name); err != nil {
		return &consoleNotKeptError{VM: name, Keep: keep, Dir: dir, Err: err}
	}
	return os.RemoveAll(dir)
}

// consoleMovedError is a boot error whose text named the console in the
// VM's state directory, which is gone: it names the kept copy instead.
type consoleMovedError struct {
	err       error
	dir, keep string
}

func (e *consoleMovedError) Error() string {
	s := e.err.Error()
	for _, f := range []string{hv.ConsoleLogName, probeConsoleLog} {
		s = strings.ReplaceAll(s, filepath.Join(e.dir, f), e.keep)
	}
	if !strings.Contains(s, e.keep) {
		s += "; console: " + e.keep
	}
	return s
}

func (e *consoleMovedError) Unwrap() error { return e.err }
