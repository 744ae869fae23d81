package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/namedvm"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/tmpdir"
)

// startVM attaches to the named VM of env, or boots one for the run of s,
// sized for it. notes say what was changed to fit this host.
func startVM(ctx context.Context, s spec.Spec, env guestvm.Env, log io.Writer) (t *vmTarget, notes []string, err error) {
	if env.Name != "" {
		m, err := namedvm.For(env).Attach(ctx, env.Name)
		if err != nil {
			return nil, nil, err
		}
		c, err := guestvm.AgentOver(m, "")
		if err != nil {
			return nil, nil, err
		}
		return &vmTarget{Client: c, machine: m}, nil, nil
	}
	v, notes := guestvm.Fit(s.VM, env)
	if err := guestvm.CheckModel(v); err != nil {
		return nil, notes, err
	}
	backend, err := registry.New(v.Backend, env.Registry())
	if err != nil {
		return nil, notes, err
	}
	img, err := guestvm.LoadImage(env.Store, v.Image)
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
	m, c, err := guestvm.Boot(ctx, backend, log, hv.Spec{Name: name, Image: img, CPUs: v.CPUs, MemoryMiB: mem, DiskBytes: disk, Accel: v.Accel, Model: v.Model, StateDir: dir, BootTimeout: env.BootTimeout, KeepConsole: env.KeepConsole}, env.BootTimeoutFor, env.KeepConsole)
	if err != nil {
		if kerr := releaseStateDir(dir, env.KeepConsole, name); kerr != nil {
			err = errors.Join(err, kerr)
		} else if env.KeepConsole != "" {
			err = withConsole(err, env.KeepConsole)
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

// withConsole is a boot error that names the console where it is kept
// (keep): the backend's own error names it there already (hv.ConsoleError,
// told hv.Spec.KeepConsole); one that names none is given keep.
func withConsole(err error, keep string) error {
	var named *hv.ConsoleError
	if errors.As(err, &named) {
		return err
	}
	return &hv.ConsoleError{Err: err, Path: keep}
}
