package qemu

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/hv"
)

// stateVersion is the schema of vm.json; readers refuse another major.
const stateVersion = 1

// The files in a VM's state directory.
const (
	consoleLogFile  = "console.log"
	probeConsoleLog = "console-kvm-probe.log"
	qemuLogFile     = "qemu.log"
	qmpSocketFile   = "qmp.sock"
	agentSocketFile = "agent.sock"
	pidFile         = "qemu.pid"
	scratchDiskFile = "scratch.raw"
)

// State is what vm.json holds: the running VM as the host knows it, and
// what was asked for.
type State struct {
	Version int            `json:"version"`
	Info    hv.MachineInfo `json:"info"`
	// RequestedAccel is the spec's Accel: "" when the backend chose.
	RequestedAccel string    `json:"requested_accel"`
	DiskBytes      int64     `json:"disk_bytes,omitempty"`
	DiskCache      string    `json:"disk_cache,omitempty"` // none or writeback
	Detached       bool      `json:"detached"`
	Machine        string    `json:"machine"` // q35 or virt
	QEMU           string    `json:"qemu"`    // the binary
	QEMUVersion    string    `json:"qemu_version"`
	Args           []string  `json:"args"`
	QMPSocket      string    `json:"qmp_socket"`
	AgentSocket    string    `json:"agent_socket"`
	VsockCID       uint32    `json:"vsock_cid,omitempty"`
	StartedAt      time.Time `json:"started_at"`
	// Model is the device model, "" for QEMU's own; in the vz model the
	// agent is reached through HybridVsockSocket, the host side of the
	// vsock device that VsockDaemon serves.
	Model              string `json:"model,omitempty"`
	HybridVsockSocket  string `json:"hybrid_vsock_socket,omitempty"`
	VsockDaemon        string `json:"vsock_daemon,omitempty"`
	VsockDaemonVersion string `json:"vsock_daemon_version,omitempty"`
	VsockDaemonPID     int    `json:"vsock_daemon_pid,omitempty"`
}

// Running says whether the VM's QEMU is still running.
func (s State) Running() bool {
	return s.Info.PID > 0 && isQEMUProcess(s.Info.PID, s.QMPSocket)
}

// ReadState reads a VM's vm.json from its state directory.
func ReadState(stateDir string) (State, error) {
	return hv.ReadState(stateDir, stateVersion, func(s *State) int { return s.Version })
}

// writeState replaces vm.json.
func writeState(stateDir string, s State) error {
	s.Version = stateVersion
	if err := atomicfile.WriteJSON(filepath.Join(stateDir, hv.StateFile), s); err != nil {
		return fmt.Errorf("write VM state: %w", err)
	}
	return nil
}

// checkSocketPath fails when a unix socket path does not fit in
// sockaddr_un, which QEMU would report less clearly.
func checkSocketPath(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("socket path %s is %d bytes; unix sockets allow at most %d: use a shorter state directory (for example under /tmp)", path, len(path), maxSocketPath)
	}
	return nil
}
