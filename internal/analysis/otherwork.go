package analysis

import (
	"slices"

	"github.com/qoslab/qoslab/internal/hostview"
)

// OtherWork is what the host's other work (processes not the run's own)
// took during the cell runs a verdict rests on, host and VM, from their
// host views (schema 1.3). A steady load takes from every cell run alike,
// so the interference rule, which compares each VM cell run with the
// run's own norm, finds none; this sums it all the same.
type OtherWork struct {
	// Runs are the cell runs whose host view read the host's processes;
	// Busy those of them in which other work took the interference rule's
	// floor (InterferenceOtherFloor) or more.
	Runs int `json:"runs"`
	Busy int `json:"busy"`
	// Median and Max are the CPUs other work took, over Runs.
	Median Float `json:"median_cpu"`
	Max    Float `json:"max_cpu"`
	// Others are the processes that took the most over all of them (their
	// CPU time summed), most first, at most three.
	Others []hostview.Process `json:"others,omitempty"`
}

// OtherWorkOf is OtherWork over every repeat of cells; nil when none of
// them read the host's processes (a run before schema 1.3, or a host view
// without the process table).
func OtherWorkOf(cells []Cell) *OtherWork {
	var cpus []float64
	sum := map[int]*hostview.Process{}
	for _, c := range cells {
		for i, x := range c.OtherCPU {
			if x.IsNaN() {
				continue
			}
			cpus = append(cpus, float64(x))
			if i >= len(c.HostViews) || c.HostViews[i] == nil {
				continue
			}
			for _, p := range c.HostViews[i].Others {
				if q := sum[p.PID]; q != nil && q.Name == p.Name {
					q.CPUNs += p.CPUNs
				} else if q == nil {
					p := p
					sum[p.PID] = &p
				}
			}
		}
	}
	if len(cpus) == 0 {
		return nil
	}
	w := &OtherWork{Runs: len(cpus), Median: Float(median(slices.Sorted(slices.Values(cpus)))), Max: Float(slices.Max(cpus))}
	for _, x := range cpus {
		if x >= InterferenceOtherFloor {
			w.Busy++
		}
	}
	w.Others = mostCPU(sum, 3)
	return w
}
