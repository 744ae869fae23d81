// Package hostview holds what the host saw of one cell run: how much of a
// host CPU each of the VM's vCPU threads got and how long it waited for
// one, and the CPU time of the host's work that is not the run's own.
package hostview

// Use is the host's view of one cell run (results schema 1.3), read by the
// controller just before and just after the call that ran it (never inside
// a measured interval): every field is the difference of the two reads.
// The guest cannot see the host take its vCPUs (without a steal clock the
// time taken looks like lower speed), so this is the only measure of it.
type Use struct {
	// WallNs is the host's monotonic time between the two reads.
	WallNs int64 `json:"wall_ns"`
	// HostCPUs is how many host CPUs were online.
	HostCPUs int `json:"host_cpus"`
	// VCPUs are the VM's vCPU threads in vCPU order: empty for a host cell
	// run, and where the backend exposes no vCPU threads.
	VCPUs []VCPU `json:"vcpus,omitempty"`
	// VM is the hypervisor's process as a whole (QEMU, or on a Mac the
	// Virtualization framework's service process), where it could be read.
	VM *Process `json:"vm_process,omitempty"`
	// OwnCPUNs is the CPU time of the run's own processes: the controller
	// and its descendants (the agent, the contention spinners, the
	// hypervisor and its helpers).
	OwnCPUNs int64 `json:"own_cpu_ns"`
	// OtherCPUNs is the CPU time of every other process on the host.
	OtherCPUNs int64 `json:"other_cpu_ns"`
	// Processes is how many processes the second read saw; 0 when the
	// processes were not read (OwnCPUNs and OtherCPUNs are then not
	// recorded, not zero).
	Processes int `json:"processes,omitempty"`
	// Others are the largest of those other processes, most CPU first.
	Others []Process `json:"others,omitempty"`
	// Notes say what could not be read and why.
	Notes []string `json:"notes,omitempty"`
}

// VCPU is one vCPU thread's time in the cell run, from the host's
// scheduler (Linux: /proc/<pid>/task/<tid>/schedstat).
type VCPU struct {
	Index int `json:"index"`
	TID   int `json:"tid"`
	// RunNs is the time the thread ran on a host CPU; WaitNs the time it
	// was runnable and waited for one.
	RunNs  int64 `json:"run_ns"`
	WaitNs int64 `json:"wait_ns"`
}

// Process is one host process's CPU time in the cell run.
type Process struct {
	PID   int    `json:"pid"`
	Name  string `json:"name"`
	CPUNs int64  `json:"cpu_ns"`
}
