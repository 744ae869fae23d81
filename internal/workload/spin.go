package workload

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload/kernel"
)

// Spinner is one contention thread as it runs: the CPU it was asked to stay
// on, whether the kernel confirmed that, and its class as read back.
type Spinner struct {
	// CPU is the CPU the spinner was asked to be pinned to.
	CPU int `json:"cpu"`
	// Pinned is true when the thread's affinity, read back, is CPU alone.
	Pinned bool `json:"pinned"`
	// Allowed is the thread's affinity as read back after pinning.
	Allowed []int `json:"allowed,omitempty"`
	// Reason says why the spinner is not pinned.
	Reason string      `json:"reason,omitempty"`
	TID    int         `json:"tid,omitempty"`
	QoS    qos.Applied `json:"qos"`
}

// SpinnerCPUs places n spinners on the allowed CPUs: spinner i goes to
// allowed[i mod len(allowed)], so n = len(allowed) puts one on every CPU and
// a larger n wraps around evenly.
func SpinnerCPUs(n int, allowed []int) []int {
	if len(allowed) == 0 {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = allowed[i%len(allowed)]
	}
	return out
}

// Spin runs one thread per entry of cpus, each pinned to that CPU and at the
// default class, doing fp loops until ctx ends: the contention that shows
// what a class is worth when cores are scarce. Unpinned spinners (an OS with
// no affinity call) could share a CPU while another CPU runs the measured
// thread alone, which is why they are pinned. ready gets each spinner's
// state once all are spinning.
func Spin(ctx context.Context, cpus []int, ready func([]Spinner)) {
	n := len(cpus)
	spinners := make([]Spinner, n)
	var started, stopped sync.WaitGroup
	started.Add(n)
	stopped.Add(n)
	for i, cpu := range cpus {
		go func() {
			defer stopped.Done()
			// The thread is the spinner for life: it is never handed back
			// to the runtime with its affinity narrowed.
			runtime.LockOSThread()
			s := Spinner{CPU: cpu, TID: currentTID()}
			allowed, err := pinSelf(cpu)
			if err != nil {
				s.Reason = err.Error()
			} else {
				s.Allowed = allowed
				s.Pinned = slices.Equal(allowed, []int{cpu})
			}
			s.QoS = qos.ApplySelf(qos.Default)
			spinners[i] = s
			started.Done()
			for ctx.Err() == nil {
				kernel.FP(loopChunk)
			}
		}()
	}
	started.Wait()
	ready(spinners)
	stopped.Wait()
}
