//go:build linux || darwin

package workload

import "golang.org/x/sys/unix"

// monoNow reads CLOCK_MONOTONIC in ns. It is system-wide, so worker processes'
// instants compare with the parent's (Go's time.Time hides its monotonic reading).
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// threadCPUNow reads the calling thread's CPU clock in ns: the CPU time
// (user and system) the OS thread has consumed, CLOCK_THREAD_CPUTIME_ID.
// Linux keeps it per task in ns; macOS documents the same clock for
// clock_gettime(3) (in libc, which x/sys calls without cgo), at the mach
// timebase's resolution. In a guest it is the guest kernel's account: the
// time the vCPU ran this thread, which says nothing of the vCPU's own share
// of the host. The caller must stay on one OS thread between two reads
// (the measuring threads are locked to theirs). It returns -1 when the
// clock cannot be read: the record then says its CPU time was not recorded.
func threadCPUNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return -1
	}
	return ts.Nano()
}

// cpuSpent is the CPU time between two reads of a thread's CPU clock, 0
// (not recorded) when either read failed.
func cpuSpent(from, to int64) int64 {
	if from < 0 || to < from {
		return 0
	}
	return to - from
}
