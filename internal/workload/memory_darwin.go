package workload

import "golang.org/x/sys/unix"

func totalMemory() uint64 {
	n, _ := unix.SysctlUint64("hw.memsize")
	return n
}
