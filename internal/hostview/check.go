package hostview

import (
	"fmt"
	"slices"
	"strings"
)

// The tolerances of Damage. A vCPU thread's times are exact (ns) but read a
// few µs from the clock that bounds them; process CPU times are in clock
// ticks (10 ms), each process's rounded on its own, and read over a pass of
// /proc that can take milliseconds.
const (
	// VCPUSlackShare and VCPUSlackNs are how far a vCPU's run or wait time may pass WallNs: 1%
	// plus 10 ms.
	VCPUSlackShare = 0.01
	VCPUSlackNs    = 10_000_000
	// CPUSlackShare and CPUSlackNs are how far own plus other CPU time may pass HostCPUs x
	// WallNs: 10% plus 100 ms.
	CPUSlackShare = 0.10
	CPUSlackNs    = 100_000_000
)

// Damage says why u cannot be what the host saw, "" when it can be:
// times below zero, a vCPU that ran or waited longer than the interval, or
// more CPU time than the host's CPUs had in it, each beyond the tolerances
// above.
func (u Use) Damage() string {
	var why []string
	neg := func(what string, v int64) {
		if v < 0 {
			why = append(why, fmt.Sprintf("%s is negative (%d)", what, v))
		}
	}
	neg("wall_ns", u.WallNs)
	neg("own_cpu_ns", u.OwnCPUNs)
	neg("other_cpu_ns", u.OtherCPUNs)
	if u.HostCPUs < 0 {
		why = append(why, fmt.Sprintf("host_cpus is negative (%d)", u.HostCPUs))
	}
	if u.Processes < 0 {
		why = append(why, fmt.Sprintf("processes is negative (%d)", u.Processes))
	}
	vcpuMax := u.WallNs + int64(VCPUSlackShare*float64(u.WallNs)) + VCPUSlackNs
	for _, v := range u.VCPUs {
		neg(fmt.Sprintf("vCPU %d run_ns", v.Index), v.RunNs)
		neg(fmt.Sprintf("vCPU %d wait_ns", v.Index), v.WaitNs)
		if v.RunNs > vcpuMax || v.WaitNs > vcpuMax {
			why = append(why, fmt.Sprintf("vCPU %d ran %d ns and waited %d ns in %d ns (at most %d with the tolerance)", v.Index, v.RunNs, v.WaitNs, u.WallNs, vcpuMax))
		}
	}
	capNs := float64(u.HostCPUs) * float64(u.WallNs)
	cpuMax := int64(capNs+CPUSlackShare*capNs) + CPUSlackNs
	if u.OwnCPUNs+u.OtherCPUNs > cpuMax {
		why = append(why, fmt.Sprintf("own and other CPU time %d ns is more than %d CPUs had in %d ns (at most %d with the tolerance)",
			u.OwnCPUNs+u.OtherCPUNs, u.HostCPUs, u.WallNs, cpuMax))
	}
	var others int64
	for _, p := range u.Others {
		neg(fmt.Sprintf("other process %d cpu_ns", p.PID), p.CPUNs)
		others += p.CPUNs
	}
	if len(u.Others) > 0 && others > u.OtherCPUNs {
		why = append(why, fmt.Sprintf("the named other processes took %d ns, more than all other work's other_cpu_ns %d", others, u.OtherCPUNs))
	}
	if u.VM != nil {
		neg("vm_process cpu_ns", u.VM.CPUNs)
		if u.VM.CPUNs > u.OwnCPUNs && u.Processes > 0 {
			why = append(why, fmt.Sprintf("the hypervisor's process took %d ns, more than the run's own own_cpu_ns %d", u.VM.CPUNs, u.OwnCPUNs))
		}
	}
	return strings.Join(why, "; ")
}

// Recordable is u, or where u is damaged as much of it as is not: the
// vCPU threads' times (exact, from the scheduler) where only the process
// table does not add up (its clock-tick times, a process whose collected
// children could not be told apart), else only the interval and the host's
// CPUs; a note says what is not recorded and why. A damaged view must
// never cost the cell run it came with.
func (u Use) Recordable() Use {
	why := u.Damage()
	if why == "" {
		return u
	}
	vcpusOnly := Use{WallNs: u.WallNs, HostCPUs: u.HostCPUs, VCPUs: u.VCPUs, Notes: slices.Clone(u.Notes)}
	if u.Processes > 0 && vcpusOnly.Damage() == "" {
		vcpusOnly.Notes = append(vcpusOnly.Notes, "the host's processes were not recorded: "+why)
		return vcpusOnly
	}
	return Use{WallNs: max(u.WallNs, 0), HostCPUs: max(u.HostCPUs, 0),
		Notes: append(slices.Clone(u.Notes), "the host's view was not recorded: "+why)}
}
