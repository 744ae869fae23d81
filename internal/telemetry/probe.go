package telemetry

import "context"

// ThreadRef names a thread to follow: a measured worker thread or process, or
// a VM's vCPU thread seen from the host.
type ThreadRef struct {
	PID  int    // the process the thread belongs to
	TID  int    // the thread; equal to PID for a process's main thread
	Role string // "worker 0", "proc 3", "vcpu 1"
}

// Probe reads one machine's counters. Each Sample call reports the state
// since the previous call: a first call primes the counters and returns
// what it can without rates (IntervalNs 0, no Busy). Fields it cannot read
// are left nil with a note; a probe never fails a cell over telemetry.
type Probe interface {
	// Name is the sampler: SamplerProc, SamplerPowermetrics.
	Name() string
	// Sample fills CPUs, Clusters, power, Threads (for the refs given),
	// IntervalNs and Notes. It leaves Cell, Repeat, Target, View and TNs to
	// the caller.
	Sample(ctx context.Context, threads []ThreadRef) (Sample, error)
	// Close releases the probe (powermetrics: stops the child process).
	Close() error
}
