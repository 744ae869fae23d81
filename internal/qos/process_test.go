package qos

import (
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A child process this test starts is put in the background band and read
// back, through the real system calls: what vm.host_qos background does to
// Virtualization.framework's service process, a process of the same user
// that qoslab did not start.
func TestDemoteOnThisMac(t *testing.T) {
	if runtime.GOOS != "darwin" {
		t.Skip("PRIO_DARWIN_BG is macOS's: CI's hosted macOS job runs this")
	}
	child := exec.Command("sleep", "30")
	require.NoError(t, child.Start())
	t.Cleanup(func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	})
	got, err := BackgroundProcess(child.Process.Pid)
	require.NoError(t, err)
	t.Logf("sleep (pid %d): getpriority(PRIO_DARWIN_PROCESS) reads %d after PRIO_DARWIN_BG", child.Process.Pid, got)
	assert.NotZero(t, got)

	_, err = BackgroundProcess(0)
	assert.Error(t, err)
}

func TestBackgroundProcessOffMacOS(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("see TestDemoteOnThisMac")
	}
	_, err := BackgroundProcess(42)
	assert.EqualError(t, err, "process 42: PRIO_DARWIN_BG is macOS's; "+runtime.GOOS+" has no background band for a whole process")
}
