// Package workload runs the fixed, measured workloads (fp, int, mmul, pi, compress,
// decompress, procs) on OS threads that carry a QoS class.
package workload

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Params describe one cell: one workload at one QoS class on Threads threads
// (processes for procs), with the workload's parameters (for pi, Loops is
// the total number of iterations, split over the threads; with Duration
// not zero every thread runs its kernel in chunks until the cell's clock
// reaches it, and its record holds the work done).
type Params struct {
	Workload string
	QoS      qos.Class
	Threads  int
	catalog.Params
	// Seed seeds the generated input and pi's random numbers.
	Seed uint64
	// SinkRoot, when set, confines a file sink to this directory (the
	// agent's scratch directory): files are created through an os.Root.
	SinkRoot string
}

// Record is one thread's (or process's) measured interval.
type Record struct {
	Index   int     `json:"index"`
	Phase   string  `json:"phase,omitempty"` // compress/decompress: which timed phase
	StartNs int64   `json:"start_ns"`        // since the cell began, target's monotonic clock
	EndNs   int64   `json:"end_ns"`
	Work    float64 `json:"work"`
	Rate    float64 `json:"rate"` // Work per second of this record's interval
	// CPUNs is the CPU time the thread (for procs, the worker process's
	// measuring thread) consumed in its interval, read by the thread itself
	// just outside it; 0 when its CPU clock could not be read.
	CPUNs int64       `json:"cpu_ns,omitempty"`
	QoS   qos.Applied `json:"qos"`
	CPUs  []int       `json:"cpus,omitempty"` // Linux: CPUs the thread was seen on
	PID   int         `json:"pid,omitempty"`  // procs: the worker process
}

// Result is a finished cell.
type Result struct {
	Records []Record
	// Metrics holds workload-specific figures: pi_estimate, pi_error,
	// compressed_bytes, ratio, and per-phase seconds for compression.
	Metrics map[string]float64
	Notes   []string
}

// Progress is shared between a running cell and whoever reports on it. Workers
// add to Done between chunks of work, never inside the measured loop body.
type Progress struct {
	Done  atomic.Uint64
	Total atomic.Uint64
	// durationNs is a fixed-duration cell's length: its fraction done is
	// the time gone, not the work.
	durationNs atomic.Int64

	// cellStart is CLOCK_MONOTONIC (ns) when the cell's clock started, 0
	// before: what telemetry times are made relative to.
	cellStart atomic.Int64
	mu        sync.Mutex
	workers   []Worker
	phases    Phases
}

// Phases are when a cell's steps outside its measured interval happened on
// the agent, on the clock CellStart uses (CLOCK_MONOTONIC ns): what a run's
// trace shows of the time between cells. Zero where a workload does not
// say (procs).
type Phases struct {
	// Spawned is when the measuring threads were started; Ready when every
	// one was created, locked to its OS thread, set up and classed;
	// CellStart when the cell's clock started (the garbage collector
	// quietened first); Finished when the last thread ended.
	Spawned, Ready, CellStart, Finished int64
	// SetUpNs and ClassNs are the slowest thread's set-up (its input, for
	// compression) and the slowest thread's class application
	// (qos.ApplySelf, with its read-back).
	SetUpNs, ClassNs int64
}

// Phases returns the phases of the cell once it has finished (zero
// before).
func (p *Progress) Phases() Phases {
	if p == nil {
		return Phases{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.phases
}

func (p *Progress) setPhases(ph Phases) {
	if p != nil {
		p.mu.Lock()
		p.phases = ph
		p.mu.Unlock()
	}
}

// Worker is a measured thread (or, for procs, process) as the OS knows it,
// so a sampler can follow it.
type Worker struct {
	PID, TID int
	Role     string // "worker 0", "proc 3"
}

// Workers returns the measured threads started so far. Threads register
// before the cell's start barrier, so once the cell runs all are there.
func (p *Progress) Workers() []Worker {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.workers)
}

// CellStart returns CLOCK_MONOTONIC in ns when the cell's clock started (the
// zero of every record's StartNs), and false before it has.
func (p *Progress) CellStart() (int64, bool) {
	if p == nil {
		return 0, false
	}
	v := p.cellStart.Load()
	return v, v != 0
}

// MonoNow reads the clock CellStart and the records use.
func MonoNow() int64 { return monoNow() }

func (p *Progress) addWorker(w Worker) {
	if p == nil || w.TID == 0 {
		return
	}
	p.mu.Lock()
	p.workers = append(p.workers, w)
	p.mu.Unlock()
}

func (p *Progress) setCellStart(mono int64) {
	if p != nil {
		p.cellStart.Store(mono)
	}
}

// Fraction returns how much of the cell is done, 0..1.
func (p *Progress) Fraction() float64 {
	if p == nil {
		return 0
	}
	var f float64
	if d := p.durationNs.Load(); d > 0 {
		start, ok := p.CellStart()
		if !ok {
			return 0
		}
		f = float64(monoNow()-start) / float64(d)
	} else {
		t := p.Total.Load()
		if t == 0 {
			return 0
		}
		f = float64(p.Done.Load()) / float64(t)
	}
	if f > 1 {
		f = 1
	}
	return f
}

func (p *Progress) add(n uint64) {
	if p != nil {
		p.Done.Add(n)
	}
}

func (p *Progress) setTotal(n uint64) {
	if p != nil {
		p.Total.Store(n)
	}
}

// setDuration makes the fraction done the time gone of a cell of length d.
func (p *Progress) setDuration(d time.Duration) {
	if p != nil {
		p.durationNs.Store(int64(d))
	}
}
