package experiment

import (
	"errors"
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
)

func TestApplyHostQoS(t *testing.T) {
	notes := applyHostQoS(hv.MachineInfo{Backend: "vz"}, qos.UserInteractive)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "user-interactive asked, not applied")

	// A real thread of another process stands in for a vCPU thread.
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	notes = applyHostQoS(hv.MachineInfo{Backend: "qemu", VCPUThreads: []int{cmd.Process.Pid}}, qos.Utility)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "utility asked, utility applied")
	assert.Contains(t, notes[0], "SCHED_BATCH")
}

// A boot error names the console where it is kept, never the state
// directory's copy, which is gone by the time the user reads the error.
func TestBootErrorNamesTheKeptConsole(t *testing.T) {
	dir, keep := "/tmp/qoslab-vm-123", "/r/run-1/vm-console.log"
	inner := fmt.Errorf("start VM run-1: no agent before the deadline (4s): boom; console: %s/console.log", dir)
	err := fmt.Errorf("boot vm: %w", &consoleMovedError{err: inner, dir: dir, keep: keep})
	assert.Equal(t, "boot vm: start VM run-1: no agent before the deadline (4s): boom; console: /r/run-1/vm-console.log", err.Error())
	assert.ErrorIs(t, err, inner)

	quiet := &consoleMovedError{err: errors.New("qemu exited with status 1"), dir: dir, keep: keep}
	assert.Equal(t, "qemu exited with status 1; console: /r/run-1/vm-console.log", quiet.Error())
}
