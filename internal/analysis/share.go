package analysis

import "math"

// MinReadableCPUNs is the least CPU time a thread of a repeat that did
// work must carry for the repeat's speed to be read: a tenth of a
// millisecond, under what one chunk of a kernel takes at full speed
// (about 0.4 ms for fp's 2^17 loops, internal/workload) and about the
// clock reads and wake-ups around the work. A repeat that did work on less
// measured those, not the work, and its work over it is no speed: one such
// repeat once read "at 72.1x its speed per CPU-second".
const MinReadableCPUNs = 100_000

// cpuUse is one repeat's CPU share and speed: the CPU time its threads
// consumed over the wall time of their measured intervals, and their work
// per CPU-second. A thread's rate (work over wall time) is exactly its
// share times its speed, so a QoS effect on a rate comes from one, the
// other or both: a class kept off the CPU loses share (SCHED_IDLE beside
// a spinner), a class sent to slower cores loses speed (Apple silicon's
// efficiency cores). Both are NaN when a record of the repeat carries no
// CPU time (written before schema 1.2), or the repeat has no interval;
// speed is NaN when the threads consumed no CPU time at all, and when
// they did work on less than MinReadableCPUNs a thread (lowCPU: the speed
// would mean nothing).
func cpuUse(iv []interval) (share, speed float64, lowCPU bool) {
	nan := math.NaN()
	var cpu, wall int64
	var work float64
	for _, x := range iv {
		if x.CPUNs <= 0 {
			return nan, nan, false
		}
		cpu += x.CPUNs
		wall += x.EndNs - x.StartNs
		work += x.Work
	}
	if wall <= 0 {
		return nan, nan, false
	}
	share = float64(cpu) / float64(wall)
	if work > 0 && cpu < MinReadableCPUNs*int64(len(iv)) {
		return share, nan, true
	}
	return share, work / (float64(cpu) / 1e9), false
}

// floats converts values for JSON, where a NaN must be a null.
func floats(v []float64) []Float {
	out := make([]Float, len(v))
	for i, x := range v {
		out[i] = Float(x)
	}
	return out
}
