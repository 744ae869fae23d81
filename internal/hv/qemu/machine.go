package qemu

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/qoslab/qoslab/internal/childproc"
	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/transport"
)

// How long Stop gives each way of ending QEMU before the next, harder one
// (then SIGKILL, for hv.KillTimeout).
const (
	quitTimeout = 3 * time.Second
	termTimeout = 2 * time.Second
)

// attachedPoll is how often an attached VM's process is looked at: well
// within the 2 s in which a VM killed from outside must be noticed.
const attachedPoll = 250 * time.Millisecond

// vsockDialTimeout bounds the vsock attempt before the virtio-serial
// channel is tried: a guest without vsock never answers.
const vsockDialTimeout = 2 * time.Second

var _ hv.Machine = (*machine)(nil)

// machine is a QEMU process running a VM: either this controller's child
// (started by Start) or one started earlier and found again (Attach).
type machine struct {
	pid         int
	stateDir    string
	qmpSocket   string
	agentSocket string
	consoleLog  string
	// consoleKept is where the console is kept once the VM stops
	// (hv.Spec.KeepConsole), which errors name; "" names consoleLog.
	consoleKept string
	qemuLog     string
	vsockCID    uint32
	// hybridSocket is the vz model's vsock (the host side of its daemon),
	// the agent's only channel there; "" in QEMU's own model.
	hybridSocket string
	// daemon serves the vz model's vsock device: it is stopped when QEMU
	// ends, and its end while QEMU runs is a fault that stops the VM.
	daemon *vsockDaemon
	// serving is set once the vz model's guest has said on its console that
	// its agent serves (see awaitServing).
	serving atomic.Bool

	// noVsock is set once a vsock dial has timed out: the guest has no
	// vsock driver, so later dials go straight to virtio-serial. (A guest
	// whose agent is not listening yet refuses at once instead.)
	noVsock atomic.Bool
	// Lifecycle is Done, Err and the guard of Stop: an exit that Stop
	// causes is not reported as an error.
	hv.Lifecycle
	// dialMu serializes QMP connections made for one command, since QEMU
	// serves one client at a time.
	dialMu sync.Mutex

	mu    sync.Mutex
	info  hv.MachineInfo
	state State
	// qmp is the connection held for the VM's life, nil if each command
	// dials its own. Holding it records QEMU's SHUTDOWN event, which says
	// why a VM this controller owns ended; a detached or attached VM dials
	// per command so that other controllers can reach it too.
	qmp *qmpClient
	// fault is why the VM was stopped by the controller on its own (its
	// vsock daemon died), reported as its end instead of a clean stop.
	fault error
}

// consoleNamed is the console as errors name it: where it is kept once
// the VM stops, when it is kept elsewhere.
func (m *machine) consoleNamed() string { return cmp.Or(m.consoleKept, m.consoleLog) }

func newMachine(s State) *machine {
	return &machine{
		pid:          s.Info.PID,
		stateDir:     s.Info.StateDir,
		qmpSocket:    s.QMPSocket,
		agentSocket:  s.AgentSocket,
		consoleLog:   s.Info.ConsoleLog,
		qemuLog:      filepath.Join(s.Info.StateDir, qemuLogFile),
		vsockCID:     s.VsockCID,
		hybridSocket: s.HybridVsockSocket,
		info:         s.Info,
		state:        s,
	}
}

// startQEMU starts cmd at the default class, whatever the controller's
// own (its vCPU threads inherit it until vm.host_qos gives them one), and
// calls exited with cmd.Wait's result when it ends. It returns the class
// QEMU started at, as read back. childproc forks it from a thread of its
// own that lives until QEMU has exited: Linux sends the parent-death
// signal when the thread that forked the child ends.
func startQEMU(cmd *exec.Cmd, exited func(error)) (qos.Applied, error) {
	class, err := childproc.Start(cmd, qos.Default)
	if err != nil {
		return class, err
	}
	go func() { exited(cmd.Wait()) }()
	return class, nil
}

// childExited records how this controller's QEMU child ended.
func (m *machine) childExited(waitErr error) {
	m.mu.Lock()
	c := m.qmp
	m.mu.Unlock()
	reason := ""
	if c != nil {
		// The SHUTDOWN event precedes the exit, but the reader may still be
		// reading it; it stops when QEMU's end of the socket closes.
		select {
		case <-c.readDone:
		case <-time.After(time.Second):
		}
		reason = c.shutdownReason()
		_ = c.Close()
	}
	if m.daemon != nil {
		// The VM's devices end with it: no process is left when Done closes.
		m.daemon.stop()
	}
	m.Finish(m.exitError(waitErr, reason))
}

// exitError says why QEMU ended, nil when it was asked to (Stop) or the
// guest powered off.
func (m *machine) exitError(waitErr error, shutdownReason string) error {
	m.mu.Lock()
	fault := m.fault
	m.mu.Unlock()
	if fault != nil {
		return fault
	}
	if m.StopAsked() {
		return nil
	}
	var exit *exec.ExitError
	if errors.As(waitErr, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Errorf("qemu (pid %d) died of signal %d (%v)%s", m.pid, int(ws.Signal()), ws.Signal(), signalCause(ws.Signal(), m.qemuLog))
		}
		return fmt.Errorf("qemu (pid %d) exited with status %d: %s", m.pid, exit.ExitCode(), hv.LogTail(m.qemuLog))
	}
	if waitErr != nil {
		return fmt.Errorf("wait for qemu (pid %d): %w", m.pid, waitErr)
	}
	switch shutdownReason {
	case "", "guest-shutdown":
		return nil
	case "guest-reset", "guest-panic":
		return fmt.Errorf("the guest rebooted or its kernel panicked (QEMU: %s); see %s", shutdownReason, m.consoleNamed())
	case "host-signal":
		return fmt.Errorf("qemu (pid %d) was stopped by a signal from outside qoslab", m.pid)
	default:
		return fmt.Errorf("qemu (pid %d) shut down: %s", m.pid, shutdownReason)
	}
}

// signalCause says where the signal a QEMU died of came from. The ones a
// process raises on itself (an abort from a failed assertion or a KVM call
// QEMU cannot go on from, a crash) are QEMU's own end, and its log says
// why; the others were sent, and not by qoslab, which stops QEMU by asking
// it (Stop) before it ever signals it.
func signalCause(sig syscall.Signal, qemuLog string) string {
	switch sig {
	case syscall.SIGABRT:
		return ": QEMU aborted itself, not a signal from outside (often a KVM call it cannot go on from); its log: " + hv.LogTail(qemuLog)
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGILL, syscall.SIGFPE, syscall.SIGTRAP, syscall.SIGSYS:
		return ": QEMU crashed, not a signal from outside; its log: " + hv.LogTail(qemuLog)
	default:
		return ", sent from outside qoslab"
	}
}

// watchAttached notices the end of a QEMU that is not this controller's
// child by looking at its process.
func (m *machine) watchAttached() {
	t := time.NewTicker(attachedPoll)
	defer t.Stop()
	for range t.C {
		if !isQEMUProcess(m.pid, m.qmpSocket) {
			break
		}
	}
	var err error
	if !m.StopAsked() {
		err = fmt.Errorf("qemu (pid %d) ended outside this controller; see %s", m.pid, m.consoleNamed())
	}
	m.Finish(err)
}

// DialAgent connects to the agent: over vsock when the VM has it, else
// (or when the guest does not answer there) over the virtio-serial port.
func (m *machine) DialAgent(ctx context.Context) (net.Conn, error) {
	if m.Ended() {
		return nil, fmt.Errorf("dial the agent in VM %s: %w", m.info.Name, m.EndErr())
	}
	if m.hybridSocket != "" {
		c, err := m.dialHybrid(ctx)
		if err != nil {
			return nil, fmt.Errorf("dial the agent in VM %s over vsock port %d (%s): %w", m.info.Name, guestchan.VsockPort, m.hybridSocket, err)
		}
		return c, nil
	}
	if m.vsockCID != 0 && !m.noVsock.Load() {
		vctx, cancel := context.WithTimeout(ctx, vsockDialTimeout)
		c, err := transport.Dial(vctx, transport.Addr{Kind: transport.KindVsock, CID: m.vsockCID, Port: guestchan.VsockPort})
		timedOut := errors.Is(vctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err == nil {
			return c, nil
		}
		if timedOut {
			m.noVsock.Store(true)
		}
	}
	c, err := transport.Dial(ctx, transport.Addr{Kind: transport.KindUnix, Path: m.agentSocket})
	if err != nil {
		return nil, fmt.Errorf("dial the agent in VM %s: %w", m.info.Name, err)
	}
	return c, nil
}

// Info returns what the host knows about the VM.
func (m *machine) Info() hv.MachineInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	info := m.info
	info.VCPUThreads = append([]int(nil), m.info.VCPUThreads...)
	return info
}

// Stop ends QEMU: a QMP quit, then SIGTERM, then SIGKILL, each after the
// previous one had its time (or at once when ctx ends). It returns once no
// QEMU process is left, and does nothing for a VM that has already ended.
func (m *machine) Stop(ctx context.Context) error {
	return m.StopWith(func() error { return m.stop(ctx) })
}

// stop is Stop's sequence, for a VM that runs.
func (m *machine) stop(ctx context.Context) error {
	qctx, cancel := context.WithTimeout(ctx, quitTimeout)
	if err := m.useQMP(qctx, func(c *qmpClient) error { return c.quit(qctx) }); err == nil {
		m.Wait(qctx)
	}
	cancel()
	if err := m.Terminate(ctx, termTimeout, m.signal, m.info.Name, fmt.Sprintf("qemu (pid %d)", m.pid)); err != nil {
		return err
	}
	// QEMU removes its sockets and pid file when it exits cleanly, not when
	// it is killed.
	for _, f := range []string{m.qmpSocket, m.agentSocket, filepath.Join(m.stateDir, pidFile)} {
		_ = os.Remove(f)
	}
	return nil
}

// signal sends sig to QEMU, if the pid is still QEMU's.
func (m *machine) signal(sig syscall.Signal) {
	if isQEMUProcess(m.pid, m.qmpSocket) {
		_ = syscall.Kill(m.pid, sig)
	}
}

// PressPowerButton presses the power button of m, a VM this backend
// started or attached (QMP system_powerdown), and returns once QEMU has
// taken the press: what the guest does about it is the guest's business
// (qoslab's init powers off; see Done). It is what Virtualization.framework's
// requestStop does to a vz guest, which is how the vz backend's stop
// sequence is tested on the vz device model.
func PressPowerButton(ctx context.Context, m hv.Machine) error {
	qm, ok := m.(*machine)
	if !ok {
		return fmt.Errorf("press the power button: %T is not a VM of the qemu backend", m)
	}
	if qm.Ended() {
		return fmt.Errorf("press the power button of VM %s: the VM has ended", qm.info.Name)
	}
	if err := qm.useQMP(ctx, func(c *qmpClient) error { return c.execute(ctx, "system_powerdown", nil, nil) }); err != nil {
		return fmt.Errorf("press the power button of VM %s: %w", qm.info.Name, err)
	}
	return nil
}

// useQMP runs f with the held QMP connection, or with one made for it.
func (m *machine) useQMP(ctx context.Context, f func(*qmpClient) error) error {
	m.mu.Lock()
	c := m.qmp
	m.mu.Unlock()
	if c != nil {
		return f(c)
	}
	m.dialMu.Lock()
	defer m.dialMu.Unlock()
	c, err := dialQMP(ctx, m.qmpSocket)
	if err != nil {
		return err
	}
	defer c.Close()
	return f(c)
}

// processClass records a class as hv.MachineInfo carries it.
func processClass(a qos.Applied) *hv.ProcessClass {
	return &hv.ProcessClass{Asked: a.Asked.String(), Applied: a.Applied.String(), Detail: a.Detail, Reason: a.Reason}
}
