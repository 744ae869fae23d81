package analysis

import "math"

// cpuUse is one repeat's CPU share and speed: the CPU time its threads
// consumed over the wall time of their measured intervals, and their work
// per CPU-second. A thread's rate (work over wall time) is exactly its
// share times its speed, so a QoS effect on a rate comes from one, the
// other or both: a class kept off the CPU loses share (SCHED_IDLE beside
// a spinner), a class sent to slower cores loses speed (Apple silicon's
// efficiency cores). Both are NaN when a record of the repeat carries no
// CPU time (written before schema 1.2), or the repeat has no interval;
// speed is NaN when the threads consumed no CPU time at all.
func cpuUse(iv []interval) (share, speed float64) {
	nan := math.NaN()
	var cpu, wall int64
	var work float64
	for _, x := range iv {
		if x.CPUNs <= 0 {
			return nan, nan
		}
		cpu += x.CPUNs
		wall += x.EndNs - x.StartNs
		work += x.Work
	}
	if wall <= 0 {
		return nan, nan
	}
	return float64(cpu) / float64(wall), work / (float64(cpu) / 1e9)
}

// floats converts values for JSON, where a NaN must be a null.
func floats(v []float64) []Float {
	out := make([]Float, len(v))
	for i, x := range v {
		out[i] = Float(x)
	}
	return out
}
