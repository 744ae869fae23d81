package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
)

// describeMachine fills the machine part of Info from /proc and /sys.
func describeMachine(r *agentpb.InfoReply) {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		ci := parseCPUInfo(string(b))
		r.CpuModel = ci.Model
		r.Virtualized, r.Virtualization = linuxVirtualization(ci.Hypervisor)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		r.MemoryBytes, _ = parseMemTotal(string(b))
	}
	var uts unix.Utsname
	kernel := ""
	if unix.Uname(&uts) == nil {
		kernel = "Linux " + unix.ByteSliceToString(uts.Release[:])
	}
	r.OsVersion = kernel
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if n := osReleaseName(string(b)); n != "" {
			r.OsVersion = n + ", " + kernel
		}
	}
	r.PerfLevels = linuxPerfLevels()
}

// linuxPerfLevels prefers Intel hybrid PMU CPU lists, then cpu_capacity.
func linuxPerfLevels() []*agentpb.PerfLevel {
	var hybrid []*agentpb.PerfLevel
	for _, kind := range []struct{ dir, name string }{{"cpu_core", "performance (cpu_core)"}, {"cpu_atom", "efficiency (cpu_atom)"}} {
		b, err := os.ReadFile(filepath.Join("/sys/devices", kind.dir, "cpus"))
		if err != nil {
			continue
		}
		if cpus, err := parseCPUList(string(b)); err == nil && len(cpus) > 0 {
			hybrid = append(hybrid, &agentpb.PerfLevel{Name: kind.name, LogicalCpus: uint32(len(cpus)), Cpus: cpus})
		}
	}
	if len(hybrid) > 0 {
		return hybrid
	}
	paths, _ := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*/cpu_capacity")
	capacity := map[int]uint32{}
	for _, p := range paths {
		cpu, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(p)), "cpu"))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(p) //nolint:gosec // G304: a sysfs file the glob above names
		if err != nil {
			continue
		}
		if c, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32); err == nil {
			capacity[cpu] = uint32(c)
		}
	}
	return levelsByCapacity(capacity)
}

// linuxVirtualization decides whether this kernel runs in a VM: the x86
// hypervisor CPU flag, DMI vendor strings, a device-tree hypervisor node.
func linuxVirtualization(cpuFlag bool) (bool, string) {
	var why []string
	if cpuFlag {
		why = append(why, "cpu flag hypervisor")
	}
	for _, f := range []string{"/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name", "/sys/hypervisor/type"} {
		b, err := os.ReadFile(f) //nolint:gosec // G304: one of the fixed sysfs files of the loop
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		for _, hv := range []string{"QEMU", "KVM", "VMware", "VirtualBox", "Xen", "Microsoft Corporation", "Amazon EC2", "Google Compute Engine", "Apple Virtualization", "Parallels", "BHYVE", "Firecracker"} {
			if strings.Contains(strings.ToLower(v), strings.ToLower(hv)) {
				why = append(why, fmt.Sprintf("%s=%q", filepath.Base(f), v))
				break
			}
		}
	}
	if _, err := os.Stat("/proc/device-tree/hypervisor"); err == nil {
		why = append(why, "device-tree hypervisor node")
	}
	if b, err := os.ReadFile("/proc/device-tree/compatible"); err == nil {
		if board, ok := virtualBoard(b); ok {
			why = append(why, "device-tree compatible "+board)
		}
	}
	if len(why) == 0 {
		return false, "no hypervisor signs (cpu flag, DMI, device tree)"
	}
	return true, strings.Join(why, "; ")
}
