package agent

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
)

// describeMachine fills the machine part of Info from sysctl.
func describeMachine(r *agentpb.InfoReply) {
	r.CpuModel, _ = unix.Sysctl("machdep.cpu.brand_string")
	r.MemoryBytes, _ = unix.SysctlUint64("hw.memsize")
	if v, err := unix.Sysctl("kern.osproductversion"); err == nil {
		r.OsVersion = "macOS " + v
	}
	if n, err := unix.SysctlUint32("kern.hv_vmm_present"); err == nil {
		r.Virtualized = n == 1
		r.Virtualization = fmt.Sprintf("kern.hv_vmm_present=%d", n)
	} else {
		r.Virtualization = "kern.hv_vmm_present unreadable: " + err.Error()
	}
	levels, _ := unix.SysctlUint32("hw.nperflevels")
	for i := uint32(0); i < levels; i++ {
		name, _ := unix.Sysctl(fmt.Sprintf("hw.perflevel%d.name", i))
		n, _ := unix.SysctlUint32(fmt.Sprintf("hw.perflevel%d.logicalcpu", i))
		r.PerfLevels = append(r.PerfLevels, &agentpb.PerfLevel{Name: fmt.Sprintf("perflevel%d %s", i, name), LogicalCpus: n})
	}
}
