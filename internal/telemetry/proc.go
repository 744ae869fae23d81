package telemetry

// Parsers for the Linux /proc and /sys files the proc sampler reads. They
// carry no build tag so that they are tested on every OS against files
// recorded in testdata; they take bytes and allocate as little as they can,
// because they run ten times a second beside the measured work.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/procfs"
	"github.com/qoslab/qoslab/internal/procsched"
)

// procCPUTicks is one cpuN line of /proc/stat, in clock ticks since boot.
type procCPUTicks struct {
	ID int
	// Idle is idle + iowait: a CPU waiting for I/O is not running anything.
	Idle uint64
	// Total is user + nice + system + idle + iowait + irq + softirq +
	// steal. guest and guest_nice are left out: the kernel already counts
	// them in user and nice.
	Total uint64
	// Garbled is set when the CPU's line was there but did not parse; Idle
	// and Total are then meaningless.
	Garbled bool
}

// procStatFields is how many of a cpuN line's counters count towards Total
// (user nice system idle iowait irq softirq steal); kernels before 2.6.11
// print fewer, and fewer than four (up to idle) is garbled.
const (
	procStatFields    = 8
	procStatMinFields = 4
)

// parseProcStat appends /proc/stat's per-CPU lines to dst (reused across
// samples to spare allocations). The aggregate "cpu" line is skipped. A line
// that does not parse is named in a note rather than failing the sample: with
// its CPU number readable it is kept as Garbled, so that the CPU is not taken
// for one that went offline.
func parseProcStat(b []byte, dst []procCPUTicks) ([]procCPUTicks, []string) {
	var notes []string
	seenCPU := false
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if !bytes.HasPrefix(line, []byte("cpu")) {
			if seenCPU {
				// The cpu lines come first and together; the rest (the
				// long intr line above all) need not be scanned.
				break
			}
			continue
		}
		seenCPU = true
		name, rest := procfs.NextField(line)
		if len(name) == 3 { // "cpu", the sum over all CPUs
			continue
		}
		id, ok := procfs.ParseDecimal(name[3:])
		if !ok || id > 1<<20 {
			notes = append(notes, fmt.Sprintf("/proc/stat: garbled line %q skipped", procfs.Clip(line)))
			continue
		}
		c := procCPUTicks{ID: int(id)}
		n := 0
		for n < procStatFields {
			var f []byte
			f, rest = procfs.NextField(rest)
			if f == nil {
				break
			}
			v, ok := procfs.ParseDecimal(f)
			if !ok {
				n = -1
				break
			}
			if n == 3 || n == 4 {
				c.Idle += v
			}
			c.Total += v
			n++
		}
		if n < procStatMinFields {
			c = procCPUTicks{ID: c.ID, Garbled: true}
			notes = append(notes, fmt.Sprintf("/proc/stat: garbled line %q: cpu %d has no busy share", procfs.Clip(line), c.ID))
		}
		dst = append(dst, c)
	}
	return dst, notes
}

// cpuBusy is the share of an interval a CPU was not idle, from two
// /proc/stat readings. Counters are compared one by one and a step backwards
// counts as none: iowait is known to go backwards on some kernels. ok is
// false when no tick passed (nothing to divide by).
func cpuBusy(prev, cur procCPUTicks) (busy float64, ok bool) {
	dTotal := subFloor(cur.Total, prev.Total)
	dIdle := subFloor(cur.Idle, prev.Idle)
	if dTotal == 0 {
		return 0, false
	}
	if dIdle > dTotal {
		dIdle = dTotal
	}
	return 1 - float64(dIdle)/float64(dTotal), true
}

func subFloor(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// procTaskStat is what the sampler takes from /proc/<pid>/task/<tid>/stat.
type procTaskStat struct {
	State byte
	// Ticks is utime + stime, in clock ticks.
	Ticks     uint64
	Nice      int
	Processor int // the CPU the thread last ran on
	RTPrio    int
	Policy    int
}

// taskStatLastField is field 41 (policy), the last one parsed; fields are
// numbered from 1 as in proc(5).
const taskStatLastField = 41

// parseTaskStat parses a /proc/<pid>/task/<tid>/stat line. The thread's name
// (field 2) is in parentheses and may itself hold spaces and parentheses
// (QEMU names vCPU threads "CPU 0/KVM"), so fields are counted from the last
// ')'.
func parseTaskStat(b []byte) (procTaskStat, error) {
	var st procTaskStat
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return st, fmt.Errorf("task stat %q: no ')' after the thread name", procfs.Clip(b))
	}
	rest := b[end+1:]
	var utime, stime uint64
	field := 3
	for ; field <= taskStatLastField; field++ {
		var f []byte
		f, rest = procfs.NextField(rest)
		if f == nil {
			return st, fmt.Errorf("task stat %q: %d fields, want at least %d", procfs.Clip(b), field-1, taskStatLastField)
		}
		var ok bool
		switch field {
		case 3:
			st.State, ok = f[0], len(f) == 1
		case 14:
			utime, ok = procfs.ParseDecimal(f)
		case 15:
			stime, ok = procfs.ParseDecimal(f)
		case 19:
			st.Nice, ok = procfs.ParseSigned(f)
		case 39:
			st.Processor, ok = procfs.ParseSigned(f)
		case 40:
			st.RTPrio, ok = procfs.ParseSigned(f)
		case 41:
			st.Policy, ok = procfs.ParseSigned(f)
		default:
			ok = true
		}
		if !ok {
			return st, fmt.Errorf("task stat %q: field %d is %q", procfs.Clip(b), field, f)
		}
	}
	st.Ticks = utime + stime
	return st, nil
}

// parseSchedstat returns the first field of /proc/<pid>/task/<tid>/schedstat:
// the nanoseconds the thread has run. It is exact where the tick counts of
// stat are 10 ms steps, a tenth of a 100 ms interval.
func parseSchedstat(b []byte) (uint64, error) {
	f, _ := procfs.NextField(b)
	v, ok := procfs.ParseDecimal(f)
	if !ok {
		return 0, fmt.Errorf("schedstat %q: want the run time in ns first", procfs.Clip(b))
	}
	return v, nil
}

// Scheduling policies as numbered in <linux/sched.h>; spelled out here so that
// the parsers build on every OS.
const (
	schedOther    = 0
	schedFIFO     = 1
	schedRR       = 2
	schedBatch    = 3
	schedIdle     = 5
	schedDeadline = 6
	schedExt      = 7
)

// schedPolicyString names a thread's policy as sched(7) does, with its nice
// ("SCHED_OTHER nice=0") and, for the real-time policies, whose nice the
// kernel ignores, the real-time priority first ("SCHED_FIFO rtprio=10
// nice=0").
func schedPolicyString(policy, nice, rtprio int) string {
	name := procsched.PolicyName(policy)
	if policy == schedFIFO || policy == schedRR {
		return fmt.Sprintf("%s rtprio=%d nice=%d", name, rtprio, nice)
	}
	return fmt.Sprintf("%s nice=%d", name, nice)
}

// parseKHzAsMHz reads a cpufreq scaling_cur_freq (kHz) as MHz.
func parseKHzAsMHz(b []byte) (float64, error) {
	f, _ := procfs.NextField(b)
	v, ok := procfs.ParseDecimal(f)
	if !ok {
		return 0, fmt.Errorf("cpufreq %q: want kHz", procfs.Clip(b))
	}
	return float64(v) / 1000, nil
}

// parseUintFile reads a sysfs file holding one unsigned number (RAPL
// energy_uj, max_energy_range_uj, cpu_capacity).
func parseUintFile(b []byte) (uint64, error) {
	f, rest := procfs.NextField(b)
	v, ok := procfs.ParseDecimal(f)
	if extra, _ := procfs.NextField(rest); !ok || extra != nil {
		return 0, fmt.Errorf("%q: want one number", procfs.Clip(b))
	}
	return v, nil
}

// errEnergyBackwards is a RAPL counter reading lower than the one before
// without a known range to wrap at: the energy used is unknown.
var errEnergyBackwards = errors.New("energy counter went backwards and its range is unknown")

// energyDelta is the energy, in µJ, used between two readings of a RAPL
// energy_uj counter. The counter wraps to 0 after maxRange
// (max_energy_range_uj; 0 when unknown), within minutes on a busy package, so
// a lower reading is a wrap when the range is known: wrapped is then true and
// the delta is still right as long as it wrapped once at most, which holds at
// any sampling interval under a minute.
func energyDelta(prev, cur, maxRange uint64) (delta uint64, wrapped bool, err error) {
	if cur >= prev {
		return cur - prev, false, nil
	}
	if maxRange == 0 || prev > maxRange {
		return 0, false, errEnergyBackwards
	}
	return maxRange - prev + cur, true, nil
}

// parseCPUList parses the kernel's cpulist format ("0-7,16", "" for none),
// used by /sys/devices/system/cpu/online and /sys/devices/cpu_*/cpus.
func parseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		// A kernel allows at most 8192 CPUs (NR_CPUS); more is garbage
		// that must not turn into a huge allocation.
		if b >= 1<<16 {
			return nil, fmt.Errorf("cpu list %q: CPU %d out of range", s, b)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// Core type labels (CPU.Type) from Intel hybrid PMUs.
const (
	coreTypePerformance = "P"
	coreTypeEfficiency  = "E"
)

// coreTypes names each CPU's core type. Intel hybrid parts expose their
// P-cores and E-cores as the PMUs cpu_core and cpu_atom (their lists are
// pCPUs and eCPUs); elsewhere, arm64 big.LITTLE above all, cpu_capacity
// (capacity, by CPU) tells cores apart by their relative capacity, and is
// used only when CPUs differ: where all are alike there is nothing to tell
// and every type stays "". nil means no types.
func coreTypes(pCPUs, eCPUs []int, capacity map[int]uint64) map[int]string {
	if len(pCPUs)+len(eCPUs) > 0 {
		out := make(map[int]string, len(pCPUs)+len(eCPUs))
		for _, c := range pCPUs {
			out[c] = coreTypePerformance
		}
		for _, c := range eCPUs {
			out[c] = coreTypeEfficiency
		}
		return out
	}
	alike := true
	first := true
	var c0 uint64
	for _, c := range capacity {
		if first {
			c0, first = c, false
		} else if c != c0 {
			alike = false
			break
		}
	}
	if alike {
		return nil
	}
	out := make(map[int]string, len(capacity))
	for id, c := range capacity {
		out[id] = "capacity " + strconv.FormatUint(c, 10)
	}
	return out
}

// auxvClockTicks is AT_CLKTCK in <elf.h>: the auxiliary vector entry the
// kernel fills with USER_HZ, the unit of every tick count in /proc.
const auxvClockTicks = 17

// parseAuxvClockTicks finds AT_CLKTCK in an auxiliary vector
// (/proc/self/auxv: pairs of native words).
func parseAuxvClockTicks(b []byte, wordSize int, order binary.ByteOrder) (int, bool) {
	word := func(p []byte) uint64 {
		if wordSize == 4 {
			return uint64(order.Uint32(p))
		}
		return order.Uint64(p)
	}
	for len(b) >= 2*wordSize {
		key, val := word(b), word(b[wordSize:])
		b = b[2*wordSize:]
		if key == auxvClockTicks && val > 0 && val < 1<<20 {
			return int(val), true
		}
		if key == 0 { // AT_NULL ends the vector
			break
		}
	}
	return 0, false
}

// VCPURefs names a VM's vCPU threads (the hypervisor process pid and the
// thread ids it reported, QEMU's from QMP) as threads to follow, "vcpu 0"
// onwards in the order given.
func VCPURefs(pid int, tids []int) []ThreadRef {
	out := make([]ThreadRef, len(tids))
	for i, tid := range tids {
		out[i] = ThreadRef{PID: pid, TID: tid, Role: "vcpu " + strconv.Itoa(i)}
	}
	return out
}
