package cli

import (
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
)

func TestRunVMFitsThisHost(t *testing.T) {
	s, err := experiment.DefaultSpec("subsumption")
	require.NoError(t, err)
	io, _, _ := testIO()
	f := NewFactory(io)
	home := t.TempDir()
	f.Env = func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	s.VM.CPUs = runtime.NumCPU() + 2
	vo, notes, err := runVMOptions(f, s, &RunOptions{Backend: "qemu", Accel: "tcg"})
	require.NoError(t, err)
	assert.Equal(t, runtime.NumCPU(), vo.CPUs, "qemu gives a VM at most the host's CPUs")
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "asked")
	assert.Equal(t, "tcg", vo.Accel, "flags override the spec")

	n := runNeeds(s)
	assert.GreaterOrEqual(t, n.memoryMiB, 2*1024+512, "1 GiB of compression input is held in guest memory")
	assert.Greater(t, n.diskBytes, int64(1<<30))
}

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
