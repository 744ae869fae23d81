package hostview

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// procTaskInfoSize is sizeof(struct proc_taskinfo) in XNU's
// <sys/proc_info.h>: six uint64_t (pti_virtual_size, pti_resident_size,
// pti_total_user, pti_total_system, pti_threads_user,
// pti_threads_system) and twelve int32_t (pti_policy to pti_priority),
// 96 bytes with no padding, the same on arm64 and x86_64.
const procTaskInfoSize = 96

// Offsets of the fields read, in bytes.
const (
	ptiTotalUserOffset   = 16
	ptiTotalSystemOffset = 24
)

// Timebase is mach_timebase_info's ratio: Mach absolute time units times
// Numer / Denom are nanoseconds. On Apple silicon it is 125/3 (a 24 MHz
// tick: 41.67 ns each); on an Intel Mac 1/1.
type Timebase struct {
	Numer, Denom uint32
}

// TaskCPUNs is a process's CPU time, user and system, in nanoseconds, from
// the bytes proc_pidinfo(pid, PROC_PIDTASKINFO, ...) filled in (n of
// them: it returns how many). XNU fills pti_total_user and
// pti_total_system from the task's recount_times_mach, in Mach absolute
// time units, not nanoseconds as <sys/proc_info.h>'s comment ("total
// time") lets one assume: on Apple silicon a reader that takes them for
// nanoseconds is 41.67 times short. tb converts them.
func TaskCPUNs(b []byte, n int, tb Timebase) (int64, error) {
	if n != procTaskInfoSize || len(b) < procTaskInfoSize {
		return 0, fmt.Errorf("proc_pidinfo PROC_PIDTASKINFO filled %d bytes of %d: want %d, struct proc_taskinfo", n, len(b), procTaskInfoSize)
	}
	if tb.Numer == 0 || tb.Denom == 0 {
		return 0, fmt.Errorf("mach_timebase_info %d/%d: want a nonzero numerator and denominator", tb.Numer, tb.Denom)
	}
	user := binary.LittleEndian.Uint64(b[ptiTotalUserOffset:])
	system := binary.LittleEndian.Uint64(b[ptiTotalSystemOffset:])
	total, carry := bits.Add64(user, system, 0)
	if carry != 0 {
		return 0, fmt.Errorf("pti_total_user %d + pti_total_system %d overflow", user, system)
	}
	return tb.nanoseconds(total)
}

// nanoseconds converts Mach absolute time units to nanoseconds without
// overflowing in between (ticks * numer would, after 2^64/125 ticks).
func (tb Timebase) nanoseconds(ticks uint64) (int64, error) {
	hi, lo := bits.Mul64(ticks, uint64(tb.Numer))
	if hi >= uint64(tb.Denom) {
		return 0, fmt.Errorf("%d Mach time units at %d/%d overflow nanoseconds", ticks, tb.Numer, tb.Denom)
	}
	ns, _ := bits.Div64(hi, lo, uint64(tb.Denom))
	if ns > 1<<63-1 {
		return 0, fmt.Errorf("%d Mach time units at %d/%d overflow nanoseconds", ticks, tb.Numer, tb.Denom)
	}
	return int64(ns), nil //nolint:gosec // G115: ns is at most MaxInt64 (checked above)
}
