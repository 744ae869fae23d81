package hv

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// StateFile is the file in a VM's state directory that describes it, written
// by the backend that started it.
const StateFile = "vm.json"

// ReadState reads a backend's state file from a VM's state directory,
// refusing a version other than want (version reads it from the decoded state).
func ReadState[T any](stateDir string, want int, version func(*T) int) (T, error) {
	var s T
	path := filepath.Join(stateDir, StateFile)
	b, err := os.ReadFile(path) //nolint:gosec // G304: vm.json in the state directory the user names
	if errors.Is(err, fs.ErrNotExist) {
		return s, fmt.Errorf("%s has no %s: no VM was started there", stateDir, StateFile)
	}
	if err != nil {
		return s, fmt.Errorf("read VM state: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("read VM state %s: %w", path, err)
	}
	if v := version(&s); v != want {
		return s, fmt.Errorf("VM state %s has version %d; this qoslab reads version %d (was the VM started by another qoslab release?)", path, v, want)
	}
	return s, nil
}

// AttachState is how a backend's Attach begins: it reads the state of the
// VM in stateDir (made absolute) with read, and has running say whether the
// VM still runs there; gone names what has ended when it does not ("qemu
// pid 12"), for the error. The boot time is cleared: the VM was not booted
// by this controller.
func AttachState[T any](stateDir string, read func(dir string) (T, error), info func(*T) *MachineInfo,
	running func(dir string, s T) (ok bool, gone string, err error)) (T, error) {
	var none T
	dir, err := filepath.Abs(stateDir)
	if err != nil {
		return none, fmt.Errorf("attach to the VM in %s: %w", stateDir, err)
	}
	s, err := read(dir)
	if err != nil {
		return none, fmt.Errorf("attach to the VM in %s: %w", dir, err)
	}
	i := info(&s)
	ok, gone, err := running(dir, s)
	if err != nil {
		return none, fmt.Errorf("attach to VM %s: %w", i.Name, err)
	}
	if !ok {
		return none, fmt.Errorf("attach to VM %s: it is not running (%s has ended); start it again", i.Name, gone)
	}
	i.BootNs = 0
	return s, nil
}
