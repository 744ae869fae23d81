package experiment

import (
	"fmt"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
)

// applyHostQoS gives each of a VM's vCPU threads a class on the host and says,
// per thread, what was asked and what was applied.
func applyHostQoS(mi hv.MachineInfo, c qos.Class) []string {
	if len(mi.VCPUThreads) == 0 {
		return []string{fmt.Sprintf("%s asked, not applied: the %s backend does not expose its vCPU threads to the host", c, mi.Backend)}
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
	return notes
}
