package experiment

import (
	"fmt"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/qos"
)

// backgroundProcess puts a whole process in the host's background band
// and reads it back: qos.BackgroundProcess, or a fake in tests.
type backgroundProcess func(pid int) (readBack int, err error)

// applyHostQoS gives a VM's vCPUs class c on the host and says what was
// asked and what was applied. Where the backend exposes the vCPU threads
// (qemu), each thread gets c and a note. On vz the vCPUs are threads of
// Virtualization.framework's service process, which qoslab did not start:
// only the background band can be applied to it, as a whole, and it must
// be (an error fails the run: a run asked for a demoted VM must not
// measure one that is not).
func applyHostQoS(mi hv.MachineInfo, c qos.Class, background backgroundProcess) ([]string, error) {
	if mi.Backend == registry.VZ {
		n, err := applyHostQoSVZ(mi, c, background)
		if err != nil {
			return nil, err
		}
		return []string{n}, nil
	}
	if len(mi.VCPUThreads) == 0 {
		return []string{fmt.Sprintf("%s asked, not applied: the %s backend does not expose its vCPU threads to the host", c, mi.Backend)}, nil
	}
	var notes []string
	for i, tid := range mi.VCPUThreads {
		a := qos.ApplyThread(tid, c)
		n := fmt.Sprintf("vCPU %d (host thread %d): %s asked, %s applied (%s)", i, tid, c, a.Applied, a.Detail)
		if a.Reason != "" {
			n += ": " + a.Reason
		}
		notes = append(notes, n)
	}
	return notes, nil
}

// vzServiceName is the process that runs a vz VM's vCPUs.
const vzServiceName = "com.apple.Virtualization.VirtualMachine"

// applyHostQoSVZ demotes a vz VM's service process, or says why not.
func applyHostQoSVZ(mi hv.MachineInfo, c qos.Class, background backgroundProcess) (string, error) {
	if err := checkHostQoSVZ(c); err != nil {
		return "", err
	}
	if mi.ServicePID <= 0 {
		why := mi.ServiceError
		if why == "" {
			why = "the backend did not report it"
		}
		return "", fmt.Errorf("vm.host_qos %s: the VM's service process (%s) was not found: %s", c, vzServiceName, why)
	}
	got, err := background(mi.ServicePID)
	if err != nil {
		return "", fmt.Errorf("vm.host_qos %s: the VM's service process %s (pid %d) refused the background band: %w", c, vzServiceName, mi.ServicePID, err)
	}
	return fmt.Sprintf("VM service process %s (pid %d, every vCPU thread): %s asked, background applied (setpriority PRIO_DARWIN_PROCESS, PRIO_DARWIN_BG; getpriority reads %d)", vzServiceName, mi.ServicePID, c, got), nil
}

// checkHostQoSVZ refuses a class vz cannot give the VM's vCPUs.
func checkHostQoSVZ(c qos.Class) error {
	if c == qos.Background {
		return nil
	}
	return fmt.Errorf("vm.host_qos %s: on vz only background can be applied (allowed: background): the vCPUs are threads of Virtualization.framework's service process, which qoslab does not start, and macOS lets another process of the same user move it only into the background band (PRIO_DARWIN_BG, as taskpolicy -b -p does), not set its threads' QoS classes", c)
}
