package workload

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcHeadroom is how far the heap may grow during a cell before the garbage
// collector runs after all (a quarter of memory at most).
const gcHeadroom = 512 << 20

// quietGC turns the garbage collector off for a cell's measured interval
// and returns what turns it back on. A collection stops the world, and
// stopping it waits for every worker thread to reach a safe point: a
// background worker starved by contention may not run for a second, and
// the agent's other goroutines (its telemetry sampler, its transport) would
// stall with it, while the collection's own work would land inside the
// measured interval of the workers that do run. The workloads allocate
// little while measured, so the collector is only a backstop: a memory
// limit the heap's growth reaches first.
func quietGC() (restore func()) {
	headroom := uint64(gcHeadroom)
	if total := totalMemory(); total > 0 {
		headroom = min(headroom, total/4)
	}
	limit := debug.SetMemoryLimit(int64(min(runtimeSys()+headroom, 1<<62)))
	percent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

// runtimeMemory is the runtime's metric for all the memory it has mapped:
// MemStats.Sys.
const runtimeMemory = "/memory/classes/total:bytes"

// runtimeSys is the memory the Go runtime has mapped (MemStats.Sys), read
// without runtime.ReadMemStats, which stops the world: that waits for every
// thread to reach a safe point, about 5 ms per cell in an emulated guest,
// between the threads being ready and the cell's clock starting.
func runtimeSys() uint64 {
	s := []metrics.Sample{{Name: runtimeMemory}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return s[0].Value.Uint64()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Sys
}
