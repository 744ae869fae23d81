// Package namedvm keeps the named VMs of `qoslab vm`: VMs that outlive
// the command that starts them, each a state directory (vm.json, the
// hypervisor's sockets and pid file, the scratch disk, the console log)
// under the user's state home, found, attached, listed, cleaned up and
// deleted by name; booted (Start), asked how it is (Store.Status) and
// stopped (Stop) through the agent in it (guestvm).
package namedvm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
)

// Store is where named VMs are kept: one state directory each under
// Home/vms; Registry attaches their hypervisors.
type Store struct {
	// Home is qoslab's state home, $XDG_STATE_HOME/qoslab.
	Home     string
	Registry registry.Options
}

// Dir is the named VM's state directory.
func (s Store) Dir(name string) string { return filepath.Join(s.Home, "vms", name) }

// Names lists the named VMs' names, sorted.
func (s Store) Names() []string {
	entries, _ := os.ReadDir(filepath.Join(s.Home, "vms"))
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// CheckName refuses a VM name that cannot name a state directory.
func CheckName(name string) error {
	ok := name != ""
	for _, r := range name {
		ok = ok && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}
	if !ok {
		return fmt.Errorf("VM name %q: use letters, digits, '-' and '_' only", name)
	}
	return nil
}

// Attach finds the named VM, saying clearly whether it never existed (a
// *noSuchVMError) or has stopped (a *NotRunningError).
func (s Store) Attach(ctx context.Context, name string) (hv.Machine, error) {
	dir := s.Dir(name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, &noSuchVMError{Name: name, Known: s.Names()}
	}
	m, err := registry.Attach(ctx, s.Registry, dir)
	if err != nil {
		return nil, &NotRunningError{Name: name, Err: err}
	}
	return m, nil
}

// NotRunningError is a named VM whose hypervisor is gone (stopped, or
// killed from outside).
type NotRunningError struct {
	Name string
	Err  error
}

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("vm %s is not running: %v (start it with `qoslab vm start %s`)", e.Name, e.Err, e.Name)
}

func (e *NotRunningError) Unwrap() error { return e.Err }

// noSuchVMError is a VM name no VM was ever started with.
type noSuchVMError struct {
	Name  string
	Known []string
}

func (e *noSuchVMError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("no vm named %s: there are no named VMs; start one with `qoslab vm start %s`", e.Name, e.Name)
	}
	return fmt.Sprintf("no vm named %s: the named VMs are %s", e.Name, strings.Join(e.Known, ", "))
}

// CleanStopped removes what a named VM's hypervisor leaves behind when it
// dies without stopping (its sockets and pid file), keeping what the VM is
// (vm.json, its scratch disk, its console log): `qoslab vm stop` on a VM
// that already ended. It returns the files it removed.
func (s Store) CleanStopped(name string) ([]string, error) {
	dir := s.Dir(name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".sock") || strings.HasSuffix(n, ".pid") {
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return removed, err
			}
			removed = append(removed, n)
		}
	}
	return removed, nil
}

// Delete removes a stopped named VM: its state directory with its scratch
// disk and console log. A running VM is refused.
func (s Store) Delete(ctx context.Context, name string) error {
	m, err := s.Attach(ctx, name)
	var stopped *NotRunningError
	switch {
	case err == nil:
		return fmt.Errorf("vm %s is running (pid %d): stop it first with `qoslab vm stop %s`", name, m.Info().PID, name)
	case !errors.As(err, &stopped):
		return err // no such VM
	}
	if err := os.RemoveAll(s.Dir(name)); err != nil {
		return fmt.Errorf("delete vm %s: %w", name, err)
	}
	return nil
}

// State is a named VM as `qoslab vm list` shows it.
type State struct {
	Name    string          `json:"name"`
	Running bool            `json:"running"`
	Machine *hv.MachineInfo `json:"machine,omitempty"`
}

// List lists the named VMs, sorted by name, and whether each runs.
func (s Store) List(ctx context.Context) []State {
	out := []State{}
	for _, n := range s.Names() {
		st := State{Name: n}
		if m, err := registry.Attach(ctx, s.Registry, s.Dir(n)); err == nil {
			mi := m.Info()
			st.Running, st.Machine = true, &mi
		}
		out = append(out, st)
	}
	return out
}

// OpenConsole opens a named VM's console log, saying clearly when there is
// no such VM or it never booted.
func (s Store) OpenConsole(name string) (*os.File, error) {
	dir := s.Dir(name)
	f, err := os.Open(filepath.Join(dir, hv.ConsoleLogName)) //nolint:gosec // G304: the console log in the named VM's own state directory
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, &noSuchVMError{Name: name, Known: s.Names()}
		}
		return nil, fmt.Errorf("vm %s has no console log yet (it never booted?)", name)
	}
	if err != nil {
		return nil, fmt.Errorf("vm %s console: %w", name, err)
	}
	return f, nil
}
