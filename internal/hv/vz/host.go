package vz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/qoslab/qoslab/internal/hv"
)

// A Virtualization.framework VM lives as long as the process that made it
// (the framework's XPC service that runs the guest ends with it). So a VM
// that outlives `qoslab vm start` needs a process of its own: the vz host,
// this executable run again as `qoslab __vzhost STATE_DIR`, which boots the
// plan the controller left in vm.json, serves the agent on agent.sock in
// the state directory and stops the VM on SIGTERM. Controllers then attach
// through the state directory as they do to a detached QEMU. A VM that is
// not detached is hosted the same way inside the controller.

// HostCommand is the hidden subcommand that runs the vz host process:
// `qoslab __vzhost STATE_DIR` must call HostMain(ctx, STATE_DIR, stop),
// with stop the agent's shutdown (internal/agent.ShutdownOver).
const HostCommand = "__vzhost"

// Timing of the host's work.
const (
	// agentRetry is the pause between connection attempts to a guest port
	// nothing listens on yet (the guest refused the last one); an attempt
	// that gets no answer at all is the connector's (see connector).
	agentRetry = 100 * time.Millisecond
	// forceStopTimeout bounds a forced stop, which the framework does at once.
	forceStopTimeout = 10 * time.Second
)

// instance is a booted VM as the portable code drives it: vz's
// VirtualMachine on a Mac, a fake in tests.
type instance interface {
	// Connect opens a connection to a vsock port in the guest. It fails,
	// rather than waits, when the guest refuses it (nothing listens there
	// yet); an attempt the guest does not answer is made again (the
	// connector) until ctx ends.
	Connect(ctx context.Context, port uint32) (net.Conn, error)
	// Done is closed once the VM has stopped; Err then says why: nil when
	// the guest powered off or was stopped.
	Done() <-chan struct{}
	Err() error
	// RequestStop asks the guest to power off, as the power button does.
	RequestStop() error
	// ForceStop ends the VM at once, as pulling the power cord does.
	ForceStop(ctx context.Context) error
}

// servicer is an instance that knows the process running its vCPUs (vz's
// on a Mac: the framework's service process, looked for when it started).
type servicer interface {
	Service() (pid int, err error)
}

// serviceOf is inst's service process for MachineInfo: its pid, or why it
// was not found; 0 and "" when inst does not look for one.
func serviceOf(inst instance) (pid int, why string) {
	s, ok := inst.(servicer)
	if !ok {
		return 0, ""
	}
	pid, err := s.Service()
	if err != nil {
		return 0, err.Error()
	}
	return pid, ""
}

// bootFunc boots a plan, logging the VM's state changes to log.
type bootFunc func(ctx context.Context, p plan, log *log.Logger) (instance, error)

// platform is what the package needs of the operating system: the
// framework on a Mac, refusals elsewhere, fakes in tests.
type platform struct {
	limits func() (Limits, error)
	boot   bootFunc
	check  func(ctx context.Context) []hv.Check
}

// host runs one VM for its life: it holds the state directory's lock (and
// the bundle's), serves the agent's socket, and keeps vm.json.
type host struct {
	plan  plan
	dir   string
	inst  instance
	locks []*os.File
	ln    net.Listener
	log   *log.Logger
	// agentStop asks the guest's agent to power the guest off; nil when
	// there is no agent to ask.
	agentStop AgentStop
	// closeLog is closed when the VM has ended: the log file a controller
	// opened for a VM it hosts itself.
	closeLog io.Closer

	// ctx ends when the VM does, and with it every agent connection.
	ctx    context.Context
	cancel context.CancelFunc

	// Lifecycle is Done, Err and the guard of stop: an end that stop
	// causes is not reported as an error.
	hv.Lifecycle
}

// openHost locks the state directory and the bundle, boots p, listens on
// its agent socket and writes vm.json from base, now running in this
// process. Nothing is booted when a lock is held elsewhere.
func openHost(ctx context.Context, p plan, base state, boot bootFunc, agentStop AgentStop, logger *log.Logger, closeLog io.Closer) (_ *host, err error) {
	h := &host{plan: p, dir: p.StateDir, log: logger, agentStop: agentStop, closeLog: closeLog}
	defer func() {
		if err != nil {
			h.unlock()
		}
	}()
	if p, err = h.lock(p); err != nil {
		return nil, err
	}
	h.plan = p
	if err := prepareFiles(p); err != nil {
		return nil, err
	}
	inst, err := boot(ctx, p, logger)
	if err != nil {
		return nil, err
	}
	h.inst = inst
	fail := func(err error) (*host, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), forceStopTimeout)
		defer cancel()
		_ = inst.ForceStop(fctx)
		return nil, err
	}
	h.ln, err = net.Listen("unix", p.AgentSocket)
	if err != nil {
		return fail(fmt.Errorf("agent socket: %w", err))
	}
	s := base
	s.Plan = p
	s.Phase = phaseRunning
	s.Info.PID = os.Getpid()
	s.Info.ServicePID, s.Info.ServiceError = serviceOf(inst)
	s.StartedAt = time.Now()
	if err := writeState(h.dir, s); err != nil {
		_ = h.ln.Close()
		return fail(err)
	}
	h.ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	logger.Printf("VM %s running: %d vCPUs, %d MiB, agent on vsock port %d served at %s", p.Name, p.CPUs, p.MemoryMiB, p.AgentPort, p.AgentSocket)
	go h.serve()
	go h.watch()
	return h, nil
}

// lock takes the state directory's lock and, for a macOS guest, the
// bundle's, adding them to h.locks; it returns p with the bundle's MAC
// address, read under its lock.
func (h *host) lock(p plan) (plan, error) {
	lock, err := lockExclusive(filepath.Join(h.dir, lockFile), true)
	if errors.Is(err, errLocked) {
		pid := 0
		if s, err := readState(h.dir); err == nil {
			pid = s.Info.PID
		}
		return p, fmt.Errorf("VM %s is already running in %s (vz host pid %d): stop it first", p.Name, h.dir, pid)
	}
	if err != nil {
		return p, fmt.Errorf("lock the state directory: %w", err)
	}
	h.locks = append(h.locks, lock)
	if p.Bundle == "" {
		return p, nil
	}
	// Two VMs booted from one bundle would write one disk at once.
	lock, err = lockExclusive(filepath.Join(p.Bundle, BundleConfigFile), false)
	if errors.Is(err, errLocked) {
		return p, fmt.Errorf("VM bundle %s is in use by another running VM: stop that VM first (two VMs on one disk would corrupt it)", p.Bundle)
	}
	if err != nil {
		return p, fmt.Errorf("lock the VM bundle: %w", err)
	}
	// Read under the lock: one MAC address per bundle, whoever boots it.
	mac, lock, err := bundleMAC(p.Bundle, lock)
	h.locks = append(h.locks, lock)
	if err != nil {
		return p, err
	}
	p.MACAddress = mac
	return p, nil
}

// prepareFiles readies the state directory for p's boot, under its lock:
// no agent socket left by a host that was killed, a new scratch disk and
// an empty console log.
func prepareFiles(p plan) error {
	// Left by a host that was killed; the lock says none runs now.
	if err := os.Remove(p.AgentSocket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the old agent socket: %w", err)
	}
	if p.ScratchDisk != "" {
		if err := makeScratchDisk(p.ScratchDisk, p.ScratchBytes); err != nil {
			return err
		}
	}
	if p.ConsoleLog != "" {
		// Each boot's console starts empty, as QEMU's does.
		if err := os.WriteFile(p.ConsoleLog, nil, 0o600); err != nil {
			return fmt.Errorf("console log: %w", err)
		}
	}
	return nil
}

// makeScratchDisk makes the scratch disk anew, dropping what an earlier run
// wrote so that the host's disk space comes back.
func makeScratchDisk(path string, size int64) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("scratch disk: %w", err)
	}
	if err := makeSparseDisk(path, size); err != nil {
		return fmt.Errorf("scratch disk: %w", err)
	}
	return nil
}

func (h *host) unlock() {
	for _, f := range h.locks {
		_ = f.Close()
	}
	h.locks = nil
}

// serve hands every connection on the agent socket to the agent.
func (h *host) serve() {
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		go h.forward(c)
	}
}

// forward connects c to the agent's vsock port, waiting for the agent to
// listen (as long as the guest's boot may take: its boot deadline, the one
// a controller booting it gives it too), and copies between them. Until
// then c is left unread: what the client sends waits in the socket.
func (h *host) forward(c net.Conn) {
	ctx, cancel := context.WithTimeout(h.ctx, h.plan.bootTimeout())
	g, err := connectRetry(ctx, func(ctx context.Context) (net.Conn, error) {
		return h.inst.Connect(ctx, h.plan.AgentPort)
	})
	cancel()
	if err != nil {
		if h.ctx.Err() == nil {
			h.log.Printf("agent connection dropped: no agent on vsock port %d: %v", h.plan.AgentPort, err)
		}
		_ = c.Close()
		return
	}
	proxy(h.ctx, c, g, halfOpenLinger)
}

// watch waits for the VM to end and leaves the state directory to the next
// host: vm.json says how it ended before the lock goes.
func (h *host) watch() {
	<-h.inst.Done()
	err := h.inst.Err()
	if h.StopAsked() {
		err = nil
	}
	h.cancel()
	_ = h.ln.Close()
	_ = os.Remove(h.plan.AgentSocket)
	if err != nil {
		h.log.Printf("VM %s ended: %v", h.plan.Name, err)
	} else {
		h.log.Printf("VM %s stopped", h.plan.Name)
	}
	uerr := updateState(h.dir, func(s *state) {
		s.Phase = phaseEnded
		s.EndedAt = time.Now()
		s.EndError = ""
		if err != nil {
			s.EndError = err.Error()
		}
	})
	if uerr != nil {
		h.log.Print(uerr)
	}
	h.unlock()
	if h.closeLog != nil {
		_ = h.closeLog.Close()
	}
	h.Finish(err)
}

// stop powers the VM off: through its agent, else with the power button,
// then by force (see stopInstance), and returns once the host has let the
// state directory go.
func (h *host) stop(ctx context.Context) error {
	return h.StopWith(func() error {
		times := stopTimes{reach: agentStopReach, grace: h.plan.StopTimeout, force: forceStopTimeout}
		if err := stopInstance(ctx, h.inst, h.plan.AgentPort, h.agentStop, times, h.log); err != nil {
			return fmt.Errorf("stop VM %s: %w", h.plan.Name, err)
		}
		<-h.Done()
		return nil
	})
}

// HostMain is the vz host process: `qoslab __vzhost STATE_DIR` (see
// HostCommand), started by Start for a detached VM. It boots the plan the
// controller wrote in STATE_DIR's vm.json and serves the VM until the VM
// ends, or until SIGTERM or SIGINT (or ctx) asks it to stop the VM, which it
// does gracefully (through the guest's agent with agentStop), then by
// force. Its stderr is the VM's vz.log. The error is why the VM ended, nil
// for a clean stop.
func HostMain(ctx context.Context, stateDir string, agentStop AgentStop) error {
	// The host has its own session and no terminal; a hangup is not for it.
	signal.Ignore(syscall.SIGHUP)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	return hostMain(ctx, stateDir, hostPlatform().boot, agentStop, os.Stderr)
}

// hostMain is HostMain with the platform's boot and the log given.
func hostMain(ctx context.Context, stateDir string, boot bootFunc, agentStop AgentStop, logw io.Writer) error {
	logger := log.New(logw, "vz host: ", log.LstdFlags|log.Lmicroseconds)
	dir, err := filepath.Abs(stateDir)
	if err != nil {
		return fmt.Errorf("vz host: %w", err)
	}
	s, err := readState(dir)
	if err != nil {
		return fmt.Errorf("vz host: %w", err)
	}
	if s.Phase != phaseStarting {
		return fmt.Errorf("vz host: the VM in %s is %s, not waiting to start: `qoslab vm start` runs the vz host, not a user", dir, s.Phase)
	}
	if s.Plan.StateDir != dir {
		return fmt.Errorf("vz host: vm.json in %s plans a VM in %s", dir, s.Plan.StateDir)
	}
	h, err := openHost(ctx, s.Plan, s, boot, agentStop, logger, nil)
	if err != nil {
		logger.Print(err)
		// For the controller waiting on it, which shows it; unless another
		// host runs the VM there and owns vm.json.
		if held, lerr := running(dir); lerr == nil && !held {
			_ = updateState(dir, func(s *state) {
				s.Phase, s.EndedAt, s.EndError = phaseEnded, time.Now(), err.Error()
			})
		}
		return err
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
		logger.Printf("asked to stop the VM (%v)", context.Cause(ctx))
		if err := h.stop(context.Background()); err != nil {
			logger.Print(err)
			return err
		}
	}
	return h.Err()
}
