package workload

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// currentCPU asks the kernel which CPU the calling thread is on (getcpu(2)).
func currentCPU() (int, bool) {
	var cpu uint32
	_, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0) //nolint:gosec // G103: getcpu(2) writes the CPU through this pointer
	return int(cpu), errno == 0
}

// currentTID is the calling thread's kernel id.
func currentTID() int { return unix.Gettid() }
