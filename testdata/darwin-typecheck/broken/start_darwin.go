// Package broken calls vzshape's Go API wrongly from darwin-only files, cgo
// among them: every line marked want must be reported at that line.
package broken

import (
	"fmt"
	"time"

	"example.com/dtc/vzshape"
)

// startVM starts m and waits up to timeout for it to run.
func startVM(m *vzshape.VirtualMachine, timeout time.Duration) error {
	if err := m.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	select {
	case s := <-m.StateChangedNotify():
		if s != vzshape.VirtualMachineStateRunning {
			return fmt.Errorf("start: machine went to state %d", s)
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("start: not running after %s", timeout)
	}
}
