package experiment

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/spec"
)

func TestApplyHostQoS(t *testing.T) {
	notes, err := applyHostQoS(hv.MachineInfo{Backend: "hyperkit"}, qos.UserInteractive, nil)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "user-interactive asked, not applied")

	// A real thread of another process stands in for a vCPU thread.
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	notes, err = applyHostQoS(hv.MachineInfo{Backend: "qemu", VCPUThreads: []int{cmd.Process.Pid}}, qos.Utility, nil)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "utility asked, utility applied")
	assert.Contains(t, notes[0], "SCHED_BATCH")
}

// A boot error names the console where it is kept, never the state
// directory's copy, which is gone by the time the user reads the error:
// the backend, told where it is kept (hv.Spec.KeepConsole), names it
// there (hv.ConsoleError); an error that names no console is given it.
// Nothing is found in, or edited into, an error's text.
func TestBootErrorNamesTheKeptConsole(t *testing.T) {
	keep := "/r/run-1/vm-console.log"
	boom := errors.New("no agent before the deadline (4s): boom")
	named := fmt.Errorf("start VM run-1: %w", &hv.ConsoleError{Err: boom, Path: keep, More: "; vhost-device-vsock said: x"})
	err := fmt.Errorf("boot vm: %w", withConsole(named, keep))
	assert.Equal(t, "boot vm: start VM run-1: no agent before the deadline (4s): boom; console: /r/run-1/vm-console.log; vhost-device-vsock said: x", err.Error())
	assert.ErrorIs(t, err, boom)

	quiet := withConsole(errors.New("qemu exited with status 1"), keep)
	assert.Equal(t, "qemu exited with status 1; console: /r/run-1/vm-console.log", quiet.Error())
}

// On vz the service process is demoted as a whole, to background only;
// a process that was not found or refused the call fails the run.
func TestApplyHostQoSOnVZ(t *testing.T) {
	var demoted []int
	background := func(pid int) (int, error) {
		demoted = append(demoted, pid)
		return 1, nil
	}
	found := hv.MachineInfo{Backend: "vz", ServicePID: 4242}
	notes, err := applyHostQoS(found, qos.Background, background)
	require.NoError(t, err)
	assert.Equal(t, []int{4242}, demoted)
	assert.Equal(t, []string{"VM service process com.apple.Virtualization.VirtualMachine (pid 4242, every vCPU thread): background asked, background applied (setpriority PRIO_DARWIN_PROCESS, PRIO_DARWIN_BG; getpriority reads 1)"}, notes)

	demoted = nil
	for _, c := range []qos.Class{qos.Utility, qos.Default, qos.UserInitiated, qos.UserInteractive} {
		_, err := applyHostQoS(found, c, background)
		assert.ErrorContains(t, err, "vm.host_qos "+c.String()+": on vz only background can be applied (allowed: background)")
	}
	assert.Empty(t, demoted, "a refused class touches nothing")

	_, err = applyHostQoS(hv.MachineInfo{Backend: "vz", ServiceError: "2 new com.apple.Virtualization.VirtualMachine processes of uid 501 appeared"}, qos.Background, background)
	assert.EqualError(t, err, "vm.host_qos background: the VM's service process (com.apple.Virtualization.VirtualMachine) was not found: 2 new com.apple.Virtualization.VirtualMachine processes of uid 501 appeared")
	_, err = applyHostQoS(hv.MachineInfo{Backend: "vz"}, qos.Background, background)
	assert.ErrorContains(t, err, "was not found: the backend did not report it")
	assert.Empty(t, demoted)

	refused := errors.New("setpriority(PRIO_DARWIN_PROCESS, 4242, PRIO_DARWIN_BG): operation not permitted")
	_, err = applyHostQoS(found, qos.Background, func(int) (int, error) { return 0, refused })
	assert.ErrorIs(t, err, refused)
	assert.ErrorContains(t, err, "vm.host_qos background: the VM's service process com.apple.Virtualization.VirtualMachine (pid 4242) refused the background band")
}

// A host_qos vz cannot apply is refused before anything boots, on any
// host (the check comes before the one that vz is not for this machine).
func TestCheckVMTargetRefusesHostQoSOnVZ(t *testing.T) {
	s := spec.Spec{Targets: []string{spec.TargetHost, spec.TargetVM}, VM: spec.VMSpec{Backend: "vz", HostQoS: qos.UserInteractive}}
	err := CheckVMTarget(context.Background(), s, guestvm.Env{})
	assert.ErrorContains(t, err, "vm.host_qos user-interactive: on vz only background can be applied (allowed: background)")

	s.VM.HostQoS = qos.Background
	err = CheckVMTarget(context.Background(), s, guestvm.Env{})
	assert.NotContains(t, fmt.Sprint(err), "host_qos", "background passes this check")
}
