// Package vz boots macOS and Linux guests with Apple's Virtualization.framework
// (through github.com/Code-Hex/vz/v3) on Apple silicon, reaching the agent over
// virtio-vsock.
package vz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/hv"
)

// backendName is the backend's name in flags, results and vm.json.
const backendName = "vz"

// hostStartTimeout bounds waiting for a vz host process to have the VM
// running: the framework starts a VM in seconds; the guest's boot comes
// after, and Ready waits for that.
const hostStartTimeout = 2 * time.Minute

// Options configure the backend.
type Options struct {
	// Executable and HostArgs start the vz host process of a detached VM as
	// `Executable HostArgs... STATE_DIR`. Empty means this process's
	// executable and []string{HostCommand}.
	Executable string
	HostArgs   []string
	// AgentStop asks a guest's agent to power the guest off, which is how
	// a VM hosted in this process is stopped first (internal/agent's
	// ShutdownOver; hv/vz does not import the agent). Nil: the power button,
	// then a forced stop. A detached VM's host gets it from HostMain.
	AgentStop AgentStop
}

// Backend boots VMs with Virtualization.framework.
type Backend struct {
	opts     Options
	platform platform
}

var _ hv.Backend = (*Backend)(nil)

// New returns a vz backend. Off macOS on Apple silicon its Check says what
// is missing and Start refuses.
func New(o Options) *Backend {
	return &Backend{opts: o, platform: hostPlatform()}
}

// Name is the backend's name in flags and results.
func (b *Backend) Name() string { return backendName }

// Check reports what the backend needs on this host, for `qoslab doctor`.
func (b *Backend) Check(ctx context.Context) []hv.Check { return b.platform.check(ctx) }

// Start boots spec's VM: a macOS guest when spec.Image is a bundle (see
// Bundle.Image), else a Linux guest from the image's kernel (uncompressed
// here when it is not: the framework boots only a raw arm64 Image) and
// initramfs. Everything about the spec is checked (planVM) before anything
// is written or booted.
//
// A VM that is not detached runs in this process and ends with it; a
// detached one runs in a vz host process of its own (see HostCommand).
// Either way its state directory has vm.json and agent.sock, so other
// controllers can Attach. Start returns once spec.Ready, when set, has
// returned nil; a VM that does not get there is stopped.
func (b *Backend) Start(ctx context.Context, spec hv.Spec) (hv.Machine, error) {
	name := spec.Name
	if name == "" {
		name = filepath.Base(spec.StateDir)
	}
	logw := spec.Log
	if logw == nil {
		logw = io.Discard
	}
	lim, err := b.platform.limits()
	if err != nil {
		return nil, fmt.Errorf("start VM %s: %w", name, err)
	}
	p, err := planVM(spec, lim)
	if err != nil {
		return nil, fmt.Errorf("start VM %s: %w", name, err)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(logw, "vm %s: %s\n", p.Name, n)
	}
	if err := os.MkdirAll(p.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("start VM %s: state directory: %w", p.Name, err)
	}
	if held, err := running(p.StateDir); err != nil {
		return nil, fmt.Errorf("start VM %s: %w", p.Name, err)
	} else if held {
		return nil, fmt.Errorf("start VM %s: it is already running in %s: stop it first", p.Name, p.StateDir)
	}

	base := state{
		Info: hv.MachineInfo{
			Backend: backendName, Name: p.Name, Accel: backendName,
			CPUs: p.CPUs, MemoryMiB: p.MemoryMiB, StateDir: p.StateDir,
			ConsoleLog: p.ConsoleLog, Disk: p.ScratchDisk, GuestDisk: p.GuestDisk,
			Image: spec.Image,
		},
		Phase: phaseStarting, Detached: spec.Detach, Plan: p,
		HostLog: filepath.Join(p.StateDir, hostLogFile),
	}
	if base.Info.ConsoleLog == "" {
		// A macOS guest has no serial console; the host's log is where its
		// state changes are.
		base.Info.ConsoleLog = base.HostLog
	}
	started := time.Now()
	var m machine
	if spec.Detach {
		m, err = b.startHosted(ctx, base)
	} else {
		m, err = b.startLocal(ctx, base)
	}
	if err != nil {
		return nil, fmt.Errorf("start VM %s: %w", p.Name, err)
	}
	if spec.Ready != nil {
		if err := hv.AwaitReady(ctx, m, spec.Ready, "the VM"); err != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopBound(p)+hv.KillTimeout)
			_ = m.Stop(sctx)
			cancel()
			return nil, fmt.Errorf("start VM %s: %w; see %s", p.Name, err, base.Info.ConsoleLog)
		}
	}
	m.setBootNs(time.Since(started).Nanoseconds())
	bootNs := m.Info().BootNs
	if err := updateState(p.StateDir, func(s *state) {
		if s.Phase == phaseRunning {
			s.Info.BootNs = bootNs
		}
	}); err != nil {
		fmt.Fprintf(logw, "vm %s: %v\n", p.Name, err)
	}
	return m, nil
}

// startLocal hosts the VM in this process.
func (b *Backend) startLocal(ctx context.Context, base state) (machine, error) {
	logf, err := os.OpenFile(base.HostLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("VM log: %w", err)
	}
	logger := log.New(logf, fmt.Sprintf("vz (pid %d): ", os.Getpid()), log.LstdFlags|log.Lmicroseconds)
	h, err := openHost(ctx, base.Plan, base, b.platform.boot, b.opts.AgentStop, logger, logf)
	if err != nil {
		_ = logf.Close()
		return nil, err
	}
	info := base.Info
	info.PID = os.Getpid()
	info.ServicePID, info.ServiceError = serviceOf(h.inst)
	return &localMachine{h: h, info: info}, nil
}

// startHosted writes the plan to vm.json, starts a vz host process on it,
// and waits until the host has the VM running.
func (b *Backend) startHosted(ctx context.Context, base state) (machine, error) {
	dir := base.Plan.StateDir
	if err := writeState(dir, base); err != nil {
		return nil, err
	}
	exe, args := b.opts.Executable, b.opts.HostArgs
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find this executable to run the vz host: %w", err)
		}
	}
	if len(args) == 0 {
		args = []string{HostCommand}
	}
	logf, err := os.OpenFile(base.HostLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("VM log: %w", err)
	}
	cmd := exec.Command(exe, append(append([]string(nil), args...), dir)...) //nolint:gosec // G204: this executable (or the one Options names) as the vz host, by design
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = hostProcAttr()
	err = cmd.Start()
	_ = logf.Close()
	if err != nil {
		return nil, fmt.Errorf("run the vz host %s: %w", exe, err)
	}
	// Reaped here whenever it ends, so that it never lingers as a zombie
	// while this controller runs.
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()

	s, err := awaitHost(ctx, dir, cmd.Process.Pid, exited, func() error { return waitErr })
	if err != nil {
		// The host may have the VM half started: let it stop it.
		_ = cmd.Process.Signal(os.Interrupt)
		t := time.NewTimer(stopBound(base.Plan))
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			_ = cmd.Process.Kill()
			<-exited
		}
		return nil, err
	}
	return newHostedMachine(s), nil
}

// awaitHost polls vm.json until the host with pid says the VM runs, the
// host exits, or time runs out.
func awaitHost(ctx context.Context, dir string, pid int, exited <-chan struct{}, exitErr func() error) (state, error) {
	ctx, cancel := context.WithTimeout(ctx, hostStartTimeout)
	defer cancel()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-exited:
			why := hv.LogTail(filepath.Join(dir, hostLogFile))
			if s, rerr := readState(dir); rerr == nil && s.Phase == phaseEnded && s.EndError != "" {
				why = s.EndError
			}
			how := exitErr()
			if how == nil {
				how = errors.New("exit status 0")
			}
			return state{}, fmt.Errorf("the vz host exited before the VM ran (%w): %s", how, why)
		case <-ctx.Done():
			return state{}, fmt.Errorf("the vz host (pid %d) did not have the VM running: %w; see %s", pid, ctx.Err(), filepath.Join(dir, hostLogFile))
		case <-t.C:
		}
		s, err := readState(dir)
		if err == nil && s.Phase == phaseRunning && s.Info.PID == pid {
			return s, nil
		}
	}
}

// Attach finds a VM started earlier from its state directory: one whose
// host (a vz host process, or the controller that started it) still holds
// the directory's lock.
func (b *Backend) Attach(ctx context.Context, stateDir string) (hv.Machine, error) {
	s, err := hv.AttachState(stateDir, readState, func(s *state) *hv.MachineInfo { return &s.Info },
		func(dir string, s state) (bool, string, error) {
			held, err := running(dir)
			return held && s.Phase == phaseRunning, fmt.Sprintf("its host, pid %d,", s.Info.PID), err
		})
	if err != nil {
		return nil, err
	}
	return newHostedMachine(s), nil
}
