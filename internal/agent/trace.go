package agent

import "github.com/qoslab/qoslab/internal/workload"

// Trace step names: what the agent's time for one Run went on, outside the
// measured interval (RunRequest.trace; qoslab run --trace). They are the
// keys of Result.trace_ns.
const (
	traceValidate    = "validate"        // the request checked, the agent's cell lock taken
	traceTelStart    = "telemetry_start" // the sampler started (its probe made on the first cell)
	traceLaunch      = "launch"          // workload.Run up to starting the measuring threads
	traceThreads     = "threads"         // every thread created, locked, set up and classed
	traceThreadSetUp = "thread_setup"    // of which the slowest thread's set-up
	traceThreadClass = "thread_class"    // of which the slowest thread's class application
	traceStart       = "start"           // the garbage collector quietened, the cell's clock started
	traceMeasured    = "measured"        // the cell's clock started to the last thread's end
	traceFinish      = "finish"          // the last thread's end to workload.Run's return (checks, records)
	traceWorkload    = "workload"        // workload.Run whole, for a workload that gives no phases (procs)
	traceTelStop     = "telemetry_stop"  // the sampler stopped, its samples encoded
	traceTelSend     = "telemetry_send"  // the samples sent
	traceTotal       = "total"           // the call's arrival to the result's send
	traceClockRead   = "clock_read"      // one read of the cell's clock (the mean of clockReads)
	clockReads       = 16
)

// callTrace times one Run on the agent's monotonic clock; a nil one (the
// request asked for no trace) records nothing.
type callTrace struct {
	arrived, last int64
	ns            map[string]int64
}

func newCallTrace(asked bool, arrived int64) *callTrace {
	if !asked {
		return nil
	}
	return &callTrace{arrived: arrived, last: arrived, ns: map[string]int64{}}
}

// step records the time since the previous step as name's.
func (t *callTrace) step(name string) {
	if t == nil {
		return
	}
	now := workload.MonoNow()
	t.ns[name] = now - t.last
	t.last = now
}

// workload records workload.Run's steps from its phases; it returned at
// returned.
func (t *callTrace) workload(ph workload.Phases, returned int64) {
	if t == nil {
		return
	}
	if ph.Spawned == 0 || ph.Finished == 0 {
		t.ns[traceWorkload] = returned - t.last
	} else {
		t.ns[traceLaunch] = ph.Spawned - t.last
		t.ns[traceThreads] = ph.Ready - ph.Spawned
		t.ns[traceThreadSetUp] = ph.SetUpNs
		t.ns[traceThreadClass] = ph.ClassNs
		t.ns[traceStart] = ph.CellStart - ph.Ready
		t.ns[traceMeasured] = ph.Finished - ph.CellStart
		t.ns[traceFinish] = returned - ph.Finished
	}
	t.last = returned
}

// result returns the steps with the call's total and the cost of reading
// the clock, for the result.
func (t *callTrace) result() map[string]int64 {
	if t == nil {
		return nil
	}
	t.ns[traceTotal] = workload.MonoNow() - t.arrived
	first := workload.MonoNow()
	last := first
	for range clockReads {
		last = workload.MonoNow()
	}
	t.ns[traceClockRead] = (last - first) / clockReads
	return t.ns
}
