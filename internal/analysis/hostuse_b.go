package analysis

import (
	"math"

	"github.com/qoslab/qoslab/internal/hostview"
)

// fillHostView sets the cell's host-view columns (VCPUShares, VCPUWaits,
// OtherCPU, HostViews) in repeat order from each repeat's view, NaN (nil)
// where a repeat's records carry none. A cell none of whose records carry
// one keeps them empty, as a run recorded before schema 1.3 has them.
func (c *Cell) fillHostView(views map[int]*hostview.Use) {
	if len(views) == 0 {
		return
	}
	for _, r := range c.Repeats {
		u := views[r]
		c.HostViews = append(c.HostViews, u)
		c.VCPUShares = append(c.VCPUShares, Float(VCPUShare(u)))
		c.VCPUWaits = append(c.VCPUWaits, Float(vcpuWait(u)))
		c.OtherCPU = append(c.OtherCPU, Float(OtherCPU(u)))
	}
}

// VCPUShare is the host CPU a cell run's vCPU threads got: the sum of
// their run time over the run's wall time (1.9: nearly two host CPUs).
// NaN without a view, a wall time or vCPU threads (a host cell run).
func VCPUShare(u *hostview.Use) float64 {
	if u == nil || u.WallNs <= 0 || len(u.VCPUs) == 0 {
		return math.NaN()
	}
	var run int64
	for _, v := range u.VCPUs {
		run += v.RunNs
	}
	return float64(run) / float64(u.WallNs)
}

// vcpuWait is the time the vCPU threads waited for a host CPU, over the
// wall time, as VCPUShare.
func vcpuWait(u *hostview.Use) float64 {
	if u == nil || u.WallNs <= 0 || len(u.VCPUs) == 0 {
		return math.NaN()
	}
	var wait int64
	for _, v := range u.VCPUs {
		wait += v.WaitNs
	}
	return float64(wait) / float64(u.WallNs)
}

// OtherCPU is the CPU the host's other work (processes not the run's own)
// took during a cell run, in CPUs: OtherCPUNs over WallNs. NaN without a
// view or a wall time.
func OtherCPU(u *hostview.Use) float64 {
	if u == nil || u.WallNs <= 0 {
		return math.NaN()
	}
	return float64(u.OtherCPUNs) / float64(u.WallNs)
}
