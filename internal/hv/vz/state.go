package vz

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/hv"
)

// stateVersion is the schema of vm.json; readers refuse another.
const stateVersion = 1

// The phases of a VM in vm.json. Whether the VM still runs is told by the
// state directory's lock, which its host process holds: a host that was
// killed leaves "running" behind.
const (
	phaseStarting = "starting" // written by the controller for the vz host process to boot
	phaseRunning  = "running"
	phaseEnded    = "ended"
)

// state is vm.json: the VM as the host knows it, and the plan it runs.
type state struct {
	Version  int            `json:"version"`
	Info     hv.MachineInfo `json:"info"`
	Phase    string         `json:"phase"`
	Detached bool           `json:"detached"`
	Plan     plan           `json:"plan"`
	// HostLog is where the process hosting the VM logs the VM's state
	// changes, and, when detached, its own errors.
	HostLog   string    `json:"host_log"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// EndError says why the VM ended, once Phase is ended: "" for a clean
	// stop (asked for, or the guest powered off).
	EndError string `json:"end_error,omitempty"`
}

// readState reads a VM's vm.json from its state directory.
func readState(stateDir string) (state, error) {
	s, err := hv.ReadState(stateDir, stateVersion, func(s *state) int { return s.Version })
	if err != nil {
		return state{}, err
	}
	if s.Info.Backend != backendName {
		return state{}, fmt.Errorf("VM state %s is of a %q VM, not a vz one", filepath.Join(stateDir, hv.StateFile), s.Info.Backend)
	}
	return s, nil
}

// writeState replaces vm.json.
func writeState(stateDir string, s state) error {
	s.Version = stateVersion
	if err := atomicfile.WriteJSON(filepath.Join(stateDir, hv.StateFile), s); err != nil {
		return fmt.Errorf("write VM state: %w", err)
	}
	return nil
}

// updateState changes vm.json with f, keeping what others wrote in it.
func updateState(stateDir string, f func(*state)) error {
	s, err := readState(stateDir)
	if err != nil {
		return err
	}
	f(&s)
	return writeState(stateDir, s)
}

// running says whether a VM's host holds the lock of stateDir.
func running(stateDir string) (bool, error) {
	return lockHeld(filepath.Join(stateDir, lockFile))
}
