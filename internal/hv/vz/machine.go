package vz

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/qoslab/qoslab/internal/hv"
)

// attachedPoll is how often an attached VM's host is looked at: well within
// the 2 s in which a VM killed from outside must be noticed.
const attachedPoll = 250 * time.Millisecond

// machine is an hv.Machine whose boot time Start records.
type machine interface {
	hv.Machine
	setBootNs(ns int64)
}

var (
	_ machine = (*localMachine)(nil)
	_ machine = (*hostedMachine)(nil)
)

// localMachine is a VM hosted in this process: a controller's VM that is
// not detached, which ends with the controller.
type localMachine struct {
	h  *host
	mu sync.Mutex
	// info is what Info returns.
	info hv.MachineInfo
}

// DialAgent connects to the agent over the VM's vsock device, waiting (as
// long as ctx allows) for the agent to listen.
func (m *localMachine) DialAgent(ctx context.Context) (net.Conn, error) {
	if m.h.Ended() {
		return nil, fmt.Errorf("dial the agent in VM %s: %w", m.h.plan.Name, m.h.EndErr())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.h.ctx, cancel)
	defer stop()
	c, err := connectRetry(ctx, func(ctx context.Context) (net.Conn, error) {
		return m.h.inst.Connect(ctx, m.h.plan.AgentPort)
	})
	if err != nil {
		if m.h.Ended() {
			return nil, fmt.Errorf("dial the agent in VM %s: %w", m.h.plan.Name, m.h.EndErr())
		}
		return nil, fmt.Errorf("dial the agent in VM %s on vsock port %d: %w", m.h.plan.Name, m.h.plan.AgentPort, err)
	}
	return c, nil
}

// Info returns what the host knows about the VM.
func (m *localMachine) Info() hv.MachineInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.info
}

func (m *localMachine) setBootNs(ns int64) {
	m.mu.Lock()
	m.info.BootNs = ns
	m.mu.Unlock()
}

// Done is closed once the VM has ended and let its state directory go.
func (m *localMachine) Done() <-chan struct{} { return m.h.Done() }

// Err says why the VM ended, once Done is closed.
func (m *localMachine) Err() error { return m.h.Err() }

// Stop asks the guest to power off (through its agent, else with the
// power button), then stops the VM by force after the guest's stop timeout
// or once ctx ends (see stopInstance).
func (m *localMachine) Stop(ctx context.Context) error { return m.h.stop(ctx) }

// hostedMachine is a VM that a vz host process runs: one this controller
// just started detached, or one found again by Attach.
type hostedMachine struct {
	dir         string
	lockPath    string
	agentSocket string
	pid         int
	hostLog     string
	// grace is how long the host may take to stop the VM on SIGTERM.
	grace time.Duration

	// Lifecycle is Done, Err and the guard of Stop: an end that Stop
	// causes is not reported as an error.
	hv.Lifecycle

	mu   sync.Mutex
	info hv.MachineInfo
}

func newHostedMachine(s state) *hostedMachine {
	m := &hostedMachine{
		dir:         s.Info.StateDir,
		lockPath:    filepath.Join(s.Info.StateDir, lockFile),
		agentSocket: s.Plan.AgentSocket,
		pid:         s.Info.PID,
		hostLog:     s.HostLog,
		grace:       stopBound(s.Plan) + 2*time.Second,
		info:        s.Info,
	}
	go m.watch()
	return m
}

// watch notices the end of the host by its lock, which the kernel drops
// however the host ends.
func (m *hostedMachine) watch() {
	t := time.NewTicker(attachedPoll)
	defer t.Stop()
	for range t.C {
		if held, err := lockHeld(m.lockPath); err != nil || !held {
			break
		}
	}
	var err error
	if !m.StopAsked() {
		err = m.endError()
	}
	m.Finish(err)
}

// endError is why the host says the VM ended, or that it could not say.
func (m *hostedMachine) endError() error {
	s, err := readState(m.dir)
	if err == nil && s.Phase == phaseEnded && s.Info.PID == m.pid {
		if s.EndError == "" {
			return nil
		}
		return fmt.Errorf("VM %s ended: %s; see %s", m.info.Name, s.EndError, m.hostLog)
	}
	return fmt.Errorf("the vz host of VM %s (pid %d) ended without saying why: killed from outside qoslab? See %s", m.info.Name, m.pid, m.hostLog)
}

// DialAgent connects to the agent through the host's agent socket. The
// host holds the connection until the agent listens in the guest.
func (m *hostedMachine) DialAgent(ctx context.Context) (net.Conn, error) {
	if m.Ended() {
		return nil, fmt.Errorf("dial the agent in VM %s: %w", m.info.Name, m.EndErr())
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", m.agentSocket)
	if err != nil {
		return nil, fmt.Errorf("dial the agent in VM %s: %w", m.info.Name, err)
	}
	return c, nil
}

// Info returns what the host knows about the VM.
func (m *hostedMachine) Info() hv.MachineInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.info
}

func (m *hostedMachine) setBootNs(ns int64) {
	m.mu.Lock()
	m.info.BootNs = ns
	m.mu.Unlock()
}

// Stop has the host stop the VM (SIGTERM: the guest is asked to power off,
// through its agent else with the power button, then stopped by force), and kills the host, and with it the VM, if it has
// not ended after its time or once ctx ends. It returns once the host has
// ended.
func (m *hostedMachine) Stop(ctx context.Context) error {
	return m.StopWith(func() error { return m.stop(ctx) })
}

// stop is Stop's sequence, for a host that runs.
func (m *hostedMachine) stop(ctx context.Context) error {
	if err := m.Terminate(ctx, m.grace, m.signal, m.info.Name, fmt.Sprintf("its vz host (pid %d)", m.pid)); err != nil {
		return err
	}
	// A killed host leaves its socket behind.
	_ = os.Remove(m.agentSocket)
	return nil
}

// signal sends sig to the host while the lock is held and vm.json names
// it, so that a pid reused after the host ended is never signalled.
func (m *hostedMachine) signal(sig syscall.Signal) {
	held, err := lockHeld(m.lockPath)
	if err != nil || !held {
		return
	}
	if s, err := readState(m.dir); err == nil && s.Info.PID == m.pid {
		_ = signalProcess(m.pid, sig)
	}
}
