package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/runtrace"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/workload"
)

// Request is the agent request that measures c.
func (c PlannedRun) Request() *agentpb.RunRequest {
	return agent.RequestOf(workload.Params{Workload: c.Workload, QoS: c.QoS, Threads: c.Threads, Params: c.Params, Seed: c.DataSeed})
}

// samplesFrom turns a cell run's records into tidy samples.
func samplesFrom(target, workloadName string, class, threads, repeat, contention int, res *agentpb.Result) []results.Sample {
	out := make([]results.Sample, 0, len(res.GetRecords()))
	for _, pr := range res.GetRecords() {
		r := agent.RecordFromProto(pr)
		out = append(out, results.Sample{
			Target: target, Workload: workloadName, QoS: class, Threads: threads, Repeat: repeat,
			Index: r.Index, Phase: r.Phase, StartNs: r.StartNs, EndNs: r.EndNs,
			Work: r.Work, Unit: res.GetUnit(), Rate: r.Rate, CPUNs: r.CPUNs,
			QoSApplied: int(r.QoS.Applied), QoSFull: r.QoS.Full, QoSReason: r.QoS.Reason, QoSDetail: r.QoS.Detail,
			CPUs: r.CPUs, PID: r.PID, Contention: contention,
		})
	}
	return out
}

// Step is what the runner reports before each cell run.
type Step struct {
	Index, Total int
	Cell         PlannedRun
	// Skipped is true for a run finished before a resume.
	Skipped bool
	Elapsed time.Duration
	// ETA extrapolates from the runs measured so far; 0 until there is one.
	ETA time.Duration
}

// Stats is where the run's time went.
type Stats struct {
	Runs, Skipped, Warmups int
	// MeasuredNs adds up each timed run's interval: first thread start to
	// last thread end, on the target's clock.
	MeasuredNs int64
	// CallNs adds up the wall time of every agent call, warm-ups included.
	CallNs int64
	// Telemetry is the agents' account of their sampling.
	Telemetry TelemetryStats
}

// CellRun is one timed run of a cell as the runner kept it.
type CellRun struct {
	Cell    PlannedRun
	Metrics map[string]float64
	Notes   []string
	Samples []results.Sample
}

// runner runs a plan's cells on their targets and keeps every finished cell
// run in a sample log, synced, before the next starts.
type runner struct {
	Cells []PlannedRun
	// Before counts the cell runs of the plan before Cells (the planned
	// cells and earlier blocks, when Cells is a look's block), so steps
	// count through the whole plan as it grew.
	Before  int
	Targets map[string]Target
	// Log keeps every timed cell run; nil keeps them only in memory (OnRun).
	Log *results.SampleLog
	// Finished are the cell runs an earlier, interrupted run finished
	// (results.FinishedRuns): they are not run again.
	Finished   map[results.CellRunKey]bool
	Contention int
	// OnStep, when set, is called before each cell run (outside any measured
	// interval).
	OnStep func(Step)
	// OnRun, when set, gets each timed cell run once it is kept.
	OnRun func(Step, CellRun)
	// OnProgress, when set, gets the agent's progress events; nil asks the
	// agent for none, so nothing but the workload runs while it is measured.
	OnProgress func(*agentpb.Progress)
	// Telemetry, when set, samples every timed cell run (never a warm-up).
	Telemetry *runTelemetry
	// Conditions, when set, is asked after each cell run, before it is
	// saved, whether the run's conditions still hold (the contention
	// spinners still spin); an error discards that cell run, which may have
	// been measured without them, and stops the run.
	Conditions func() error
	// CellTimeout, when not 0, ends a cell run that has not finished after
	// it: the run stops there with a *cellTimeoutError, what finished kept.
	CellTimeout time.Duration
	// OnStall, when set, gets each cell run that goes far past what it was
	// expected to take (see Stall); Diagnose, when set, says what likely
	// keeps it. Both run on the controller while it waits for the cell.
	OnStall  func(Stall)
	Diagnose func(ctx context.Context, c PlannedRun) string
	// StallAfter, when set, replaces the rule for when a cell run expected
	// to take expected is stalled (stallAfter); tests shorten it.
	StallAfter func(expected time.Duration) time.Duration
	// Trace, when set, gets a span for every cell run with its steps on
	// the controller and the agent (which is then asked for its own).
	Trace *runtrace.Recorder
	// walls are each cell's timed runs' wall times, for the watchdog,
	// kept from one Run to the next (a look's block after the plan).
	walls map[string][]time.Duration
	// HostView, when set, reads the host just before and just after the
	// agent call of every timed cell run (never a warm-up), outside its
	// measured interval: the cell run's records carry what it saw.
	HostView *hostview.Reader
	// hostTargets caches what HostView reads of each target's machine.
	hostTargets map[string]hostview.Target
}

// hostTarget is what the host view reads of target's machine: a VM's
// hypervisor process and vCPU threads; nothing more for the host.
func (r *runner) hostTarget(name string, target Target) hostview.Target {
	if t, ok := r.hostTargets[name]; ok {
		return t
	}
	var t hostview.Target
	if vm, ok := target.(inVM); ok {
		mi := vm.Machine()
		t = hostview.Target{PID: mi.PID, VCPUTIDs: mi.VCPUThreads}
		if mi.ServicePID > 0 { // vz: the framework's service process runs the vCPUs
			t.PID = mi.ServicePID
		}
	}
	if r.hostTargets == nil {
		r.hostTargets = map[string]hostview.Target{}
	}
	r.hostTargets[name] = t
	return t
}

// Run measures every cell in order. It stops at the first failure with an
// error naming the cell; everything finished before it is in the log.
func (r *runner) Run(ctx context.Context) (Stats, error) {
	var st Stats
	began := time.Now()
	if r.walls == nil {
		r.walls = map[string][]time.Duration{}
	}
	walls := r.walls
	total := r.Before + len(r.Cells)
	for j, c := range r.Cells {
		i := r.Before + j // the run's index in the whole plan
		if c.Timed() && r.Finished[c.RunKey()] {
			st.Skipped++
			r.step(Step{Index: i, Total: total, Cell: c, Skipped: true, Elapsed: time.Since(began)})
			continue
		}
		target, ok := r.Targets[c.Target]
		if !ok {
			return st, fmt.Errorf("cell %d/%d (%s): no %s target was started", i+1, total, c, c.Target)
		}
		ran := st.Runs + st.Warmups
		var eta time.Duration
		if ran > 0 {
			eta = time.Duration(int64(time.Since(began)) / int64(ran) * int64(len(r.Cells)-j-st.Skipped))
		}
		clk := r.stepClock()
		r.step(Step{Index: i, Total: total, Cell: c, Elapsed: time.Since(began), ETA: eta})
		clk.step(runtrace.StepProgress)
		res, hostSamples, view, wall, err := r.measure(ctx, i, c, target, walls[c.SeriesKey()], clk)
		st.CallNs += wall.Nanoseconds()
		if err != nil {
			return st, err
		}
		if c.Timed() {
			walls[c.SeriesKey()] = append(walls[c.SeriesKey()], wall)
		}
		if r.Conditions != nil {
			if err := r.Conditions(); err != nil {
				return st, fmt.Errorf("cell %d/%d (%s) not saved: %w", i+1, total, c.label(), err)
			}
		}
		clk.step(runtrace.StepCheck)
		if !c.Timed() {
			st.Warmups++
			r.traceCell(i, c, clk, res, 0)
			continue
		}
		samples, measured, err := r.keep(i, c, res, hostSamples, view, &st, clk)
		if err != nil {
			return st, err
		}
		if r.OnRun != nil {
			r.OnRun(Step{Index: i, Total: total, Cell: c, Elapsed: time.Since(began)},
				CellRun{Cell: c, Metrics: res.GetMetrics(), Notes: res.GetNotes(), Samples: samples})
		}
		clk.step(runtrace.StepReport)
		r.traceCell(i, c, clk, res, measured)
	}
	return st, nil
}

// stepClock times a cell run's steps when the run is traced; nil (which
// times nothing) when it is not.
func (r *runner) stepClock() *stepClock {
	if r.Trace == nil {
		return nil
	}
	now := time.Now()
	return &stepClock{began: now, last: now, steps: map[string]int64{}}
}

// traceCell records cell run i, c, timed by clk, with the agent's own steps
// from res and its measured interval.
func (r *runner) traceCell(i int, c PlannedRun, clk *stepClock, res *agentpb.Result, measured int64) {
	if clk == nil {
		return
	}
	r.Trace.Add(runtrace.Span{Name: runtrace.SpanCell, StartNs: r.Trace.Since(clk.began), EndNs: r.Trace.Since(clk.last),
		Target: c.Target, Index: i + 1, Cell: c.SeriesKey(), Repeat: c.Repeat, MeasuredNs: measured,
		Steps: clk.steps, Agent: res.GetTraceNs()})
}

// stepClock times the steps of one cell run on the controller.
type stepClock struct {
	began, last time.Time
	steps       map[string]int64
}

// step records the time since the previous step as name's.
func (k *stepClock) step(name string) {
	if k == nil {
		return
	}
	now := time.Now()
	k.steps[name] += now.Sub(k.last).Nanoseconds()
	k.last = now
}

// measure runs cell i, c, on target, watched (earlier are the wall times of
// its earlier repeats) and bounded by CellTimeout, with the host's view of
// it recorded when telemetry asks for one and, for a timed run, read by
// HostView just before and just after the call. It returns the agent's
// result, the host's samples, the host's view and the call's wall time, or
// the error that ends the run: ctx's, a *cellTimeoutError or a *cellError.
func (r *runner) measure(ctx context.Context, i int, c PlannedRun, target Target, earlier []time.Duration, clk *stepClock) (*agentpb.Result, []telemetry.Sample, *hostview.Use, time.Duration, error) {
	req := c.Request()
	if r.OnProgress != nil {
		req.ProgressIntervalMs = 500
	}
	req.Trace = clk != nil
	var hostRec *telemetry.Recorder
	if r.Telemetry != nil && c.Timed() {
		req.TelemetryIntervalMs = uint32(max(r.Telemetry.Interval.Milliseconds(), 1))
		hostRec = r.Telemetry.hostRecorder(ctx, c.Target)
	}
	reader := r.HostView
	if !c.Timed() {
		reader = nil
	}
	var hostTarget hostview.Target
	var before hostview.Snapshot
	if reader != nil {
		hostTarget = r.hostTarget(c.Target, target)
		clk.step(runtrace.StepPrepare)
		before = reader.Snapshot(hostTarget)
		clk.step(runtrace.StepHostView)
	}
	t0 := time.Now()
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if r.CellTimeout > 0 {
		cctx, cancel = context.WithTimeoutCause(ctx, r.CellTimeout, errCellTimeout)
	}
	expected, basis := expectation(c, earlier)
	wd := r.watch(cctx, c, t0, expected, basis)
	clk.step(runtrace.StepPrepare)
	res, err := target.Run(cctx, req, r.OnProgress)
	// The call's wall time ends here: the host's read after it is not
	// the call's.
	wall := time.Since(t0)
	clk.step(runtrace.StepCall)
	var view *hostview.Use
	if reader != nil {
		u := hostview.Between(before, reader.Snapshot(hostTarget))
		view = &u
		clk.step(runtrace.StepHostView)
	}
	cause := wd.stop()
	timedOut := errors.Is(context.Cause(cctx), errCellTimeout) && ctx.Err() == nil
	cancel()
	var hostSamples []telemetry.Sample
	if hostRec != nil {
		hostSamples, _ = hostRec.Stop()
	}
	clk.step(runtrace.StepCollect)
	switch {
	case err == nil:
		return res, hostSamples, view, wall, nil
	case ctx.Err() != nil:
		return nil, nil, nil, wall, ctx.Err()
	case timedOut:
		if cause == "" && r.Diagnose != nil {
			cause = r.Diagnose(ctx, c)
		}
		return nil, nil, nil, wall, &cellTimeoutError{Index: i, Total: r.Before + len(r.Cells), Cell: c, Limit: r.CellTimeout, Cause: cause}
	}
	return nil, nil, nil, wall, &cellError{Index: i, Total: r.Before + len(r.Cells), Cell: c, Err: err}
}

// keep appends timed cell run i, c, to the log and its telemetry to the
// telemetry log, each synced before it returns, and counts it in st; it
// returns the run's samples and its measured interval (ns).
//
// The two appends run at once: each ends in an fsync, and two fsyncs
// issued together share a journal commit where one after the other they
// wait for two (a few ms each on a virtual disk, twice per cell run). A
// crash between them leaves telemetry of a cell run that is not in the
// samples, which a resume drops (telemetry.OpenLogKeeping).
func (r *runner) keep(i int, c PlannedRun, res *agentpb.Result, hostSamples []telemetry.Sample, view *hostview.Use, st *Stats, clk *stepClock) ([]results.Sample, int64, error) {
	samples := samplesFrom(c.Target, c.Workload, int(c.QoS), c.Threads, c.Repeat, r.Contention, res)
	for i := range samples {
		samples[i].DurationNs = int64(c.Duration)
	}
	if view != nil {
		// A view no read gives would have the cell run refused with it:
		// the measurement is kept, the view only as why it is not.
		kept := view.Recordable()
		view = &kept
	}
	for i := range samples {
		samples[i].HostView = view // the looks decide from these, as the summary from the records
	}
	recs := make([]results.Record, len(samples))
	params := c.Params
	now, key := time.Now().UTC(), c.SeriesKey()
	var first, last int64
	for j, s := range samples {
		recs[j] = results.Record{Cell: key, RunRecords: len(samples), Params: &params, Sample: s, Metrics: res.GetMetrics(), HostView: view, RecordedAt: now}
		if j == 0 || s.StartNs < first {
			first = s.StartNs
		}
		last = max(last, s.EndNs)
	}
	tel := st.Telemetry
	telErr := make(chan error, 1)
	go func() { telErr <- r.Telemetry.keep(c, res.GetTelemetry(), hostSamples, &tel) }()
	var err error
	if r.Log != nil {
		err = r.Log.Append(recs...)
	}
	terr := <-telErr
	clk.step(runtrace.StepKeep)
	if err != nil {
		return nil, 0, fmt.Errorf("cell %d/%d (%s) measured but not saved: %w", i+1, r.Before+len(r.Cells), c.label(), err)
	}
	st.Runs++
	st.MeasuredNs += last - first
	st.Telemetry = tel
	if terr != nil {
		return nil, 0, fmt.Errorf("cell %d/%d (%s) measured and saved, its telemetry not: %w", i+1, r.Before+len(r.Cells), c.label(), terr)
	}
	return samples, last - first, nil
}

// cellError is a cell run that failed: the run stops there, and what
// finished before it is kept.
type cellError struct {
	Index, Total int
	Cell         PlannedRun
	Err          error
}

func (e *cellError) Error() string {
	return fmt.Sprintf("cell %d/%d (%s) failed: %v", e.Index+1, e.Total, e.Cell.label(), e.Err)
}

func (e *cellError) Unwrap() error { return e.Err }

// label names a cell run in errors: the target, what it measures, and
// repeat=N (or warm-up N).
func (c PlannedRun) label() string {
	if !c.Timed() {
		return c.String()
	}
	return fmt.Sprintf("%s: %s qos=%s threads=%d repeat=%d", c.Target, c.Workload, c.QoS, c.Threads, c.Repeat)
}

func (r *runner) step(s Step) {
	if r.OnStep != nil {
		r.OnStep(s)
	}
}
