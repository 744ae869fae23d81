package analysis

import (
	"math"

	"github.com/qoslab/qoslab/internal/hostview"
)

// The host's view of a cell's repeats (hostview.Use, results schema 1.3),
// in host CPUs: the guest cannot see the host take its vCPUs (both classes
// "got 97% of a vCPU" inside a VM whose vCPU threads were 37% busy on the
// host), so these are the only measure of it.

// HostUse is each view's VCPUShare, VCPUWait and OtherCPU, in the views'
// order (a cell's repeat order), NaN for a view not recorded (nil).
func HostUse(views []*hostview.Use) (vcpuShares, vcpuWaits, otherCPU []Float) {
	vcpuShares = make([]Float, len(views))
	vcpuWaits = make([]Float, len(views))
	otherCPU = make([]Float, len(views))
	for i, u := range views {
		vcpuShares[i], vcpuWaits[i], otherCPU[i] = Float(VCPUShare(u)), Float(VCPUWait(u)), Float(OtherCPU(u))
	}
	return vcpuShares, vcpuWaits, otherCPU
}

// VCPUShare is how many host CPUs the VM's vCPU threads got in the cell
// run: their run time summed over the vCPUs, over the run's wall time (2 is
// two vCPUs that ran throughout). NaN where there are no vCPU times: a host
// cell run, a run before schema 1.3, a backend that does not expose its
// vCPU threads, or one not read (the view's notes say why).
func VCPUShare(u *hostview.Use) float64 {
	return vcpuSum(u, func(v hostview.VCPU) int64 { return v.RunNs })
}

// VCPUWait is how many host CPUs' worth of time the vCPU threads spent
// runnable and waiting for one, over the run's wall time; NaN as for
// VCPUShare.
func VCPUWait(u *hostview.Use) float64 {
	return vcpuSum(u, func(v hostview.VCPU) int64 { return v.WaitNs })
}

func vcpuSum(u *hostview.Use, of func(hostview.VCPU) int64) float64 {
	if u == nil || len(u.VCPUs) == 0 || u.WallNs <= 0 {
		return math.NaN()
	}
	var sum int64
	for _, v := range u.VCPUs {
		sum += of(v)
	}
	return float64(sum) / float64(u.WallNs)
}

// OtherCPU is how many host CPUs work other than the run's own took in the
// cell run (OtherCPUNs over the wall time); NaN where the host's processes
// were not read.
func OtherCPU(u *hostview.Use) float64 {
	if u == nil || u.Processes == 0 || u.WallNs <= 0 {
		return math.NaN()
	}
	return float64(u.OtherCPUNs) / float64(u.WallNs)
}

// MedianOf is the median of the values that are numbers, NaN when none is.
func MedianOf(xs []Float) Float {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = float64(x)
	}
	return OrderStatsOf(v).Median
}
