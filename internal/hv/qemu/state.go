package qemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/hv"
)

// StateFile is the VM's description in its state directory, written at
// start for Attach and `qoslab vm status`.
const StateFile = "vm.json"

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
}

// Running says whether the VM's QEMU is still running.
func (s State) Running() bool {
	return s.Info.PID > 0 && isQEMUProcess(s.Info.PID, s.QMPSocket)
}

// ReadState reads a VM's vm.json from its state directory.
func ReadState(stateDir string) (State, error) {
	path := filepath.Join(stateDir, StateFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, fmt.Errorf("%s has no %s: no VM was started there", stateDir, StateFile)
	}
	if err != nil {
		return State{}, fmt.Errorf("read VM state: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("read VM state %s: %w", path, err)
	}
	if s.Version != stateVersion {
		return State{}, fmt.Errorf("VM state %s has version %d; this qoslab reads version %d (was the VM started by another qoslab release?)", path, s.Version, stateVersion)
	}
	return s, nil
}

// writeState replaces vm.json.
func writeState(stateDir string, s State) error {
	s.Version = stateVersion
	if err := writeJSONFile(filepath.Join(stateDir, StateFile), s); err != nil {
		return fmt.Errorf("write VM state: %w", err)
	}
	return nil
}

// writeJSONFile replaces a file whole with v in JSON, so a concurrent
// reader never sees half of it.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// checkSocketPath fails when a unix socket path does not fit in
// sockaddr_un, which QEMU would report less clearly.
func checkSocketPath(path string) error {
	if len(path) > maxSocketPath {
		return fmt.Errorf("socket path %s is %d bytes; unix sockets allow at most %d: use a shorter state directory (for example under /tmp)", path, len(path), maxSocketPath)
	}
	return nil
}
