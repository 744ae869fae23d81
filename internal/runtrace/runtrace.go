// Package runtrace records where a run's wall time goes, span by span:
// on the controller, starting the targets, each cell run's steps and
// stopping; on the agent, its own steps of each cell run (the agent's
// Result.trace_ns). `qoslab run --trace` writes it as trace.jsonl in the
// results directory; Summarize sums it (scripts/bench-orchestration.sh).
// A leaf: the experiment engine and the command line record into it.
package runtrace

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// The spans of a run, in the order they happen.
const (
	SpanSpec     = "spec"      // the results directory made (or reopened), the spec recorded
	SpanStart    = "start"     // a target started (Target), its agent's Info asked; a VM's boot in Steps[StepBoot]
	SpanSetUp    = "set-up"    // contention spinners and telemetry started
	SpanCell     = "cell"      // one cell run, its steps in Steps and the agent's in Agent
	SpanStop     = "stop"      // every target stopped (a VM powered off)
	SpanPublish  = "publish"   // summaries, charts and report written
	SpanRun      = "run"       // the whole run as its time line counts it: Measured and Steps[StepBoot]
	SpanSamples  = "samples"   // the samples an earlier session finished read, the log opened
	SpanRecorded = "run.json"  // run.json written at the end
	StepBoot     = "boot"      // a VM's boot to its agent answering (the time line's "booting")
	StepProgress = "progress"  // the progress line before the cell run (Env.OnStep)
	StepPrepare  = "prepare"   // the request, the host's telemetry of a VM cell and the watchdog started
	StepHostView = "host_view" // the host read just before the call and just after it (hostview), for the cell run's host_view
	StepCall     = "call"      // the agent's Run call, sent to result received
	StepCollect  = "collect"   // the watchdog and the host's telemetry stopped
	StepCheck    = "check"     // the run's conditions checked (the spinners still spin)
	StepKeep     = "save"      // the records made; they and the cell's telemetry appended to samples.jsonl and telemetry.jsonl, synced
	StepReport   = "report"    // the result line printed (Env.OnRun)
)

// Span is one line of trace.jsonl: a step of the run on the controller's
// clock, in ns since the run began.
type Span struct {
	Name    string `json:"span"`
	StartNs int64  `json:"start_ns"`
	EndNs   int64  `json:"end_ns"`
	// Target is the target a start span started, or a cell run's.
	Target string `json:"target,omitempty"`
	// Index is a cell run's place in the plan, from 1; Cell and Repeat
	// name it (Repeat 0: a warm-up).
	Index  int    `json:"index,omitempty"`
	Cell   string `json:"cell,omitempty"`
	Repeat int    `json:"repeat,omitempty"`
	// MeasuredNs is a timed cell run's measured interval (first thread
	// start to last thread end, on the target's clock), or the run's sum.
	MeasuredNs int64 `json:"measured_ns,omitempty"`
	// Steps are the controller's steps within the span, in ns by name.
	Steps map[string]int64 `json:"steps_ns,omitempty"`
	// Agent are the agent's steps of a cell run, in ns by name (its
	// Result.trace_ns: "total" is its whole call; "measured" its clock
	// from the cell's start to the last thread's end).
	Agent map[string]int64 `json:"agent_ns,omitempty"`
}

// Ns is the span's length.
func (s Span) Ns() int64 { return s.EndNs - s.StartNs }

// Recorder writes spans to a trace file. A nil Recorder records nothing, so
// a run without --trace pays one nil check per step.
type Recorder struct {
	began time.Time
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	err   error
}

// Create starts a trace at path whose clock starts at began. Spans are
// buffered, not synced: the trace explains a run, it is not one of its
// results.
func Create(path string, began time.Time) (*Recorder, error) {
	f, err := os.Create(path) //nolint:gosec // G304: the trace file in the run's own results directory
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return &Recorder{began: began, f: f, w: bufio.NewWriter(f)}, nil
}

// Since is t on the trace's clock (ns since the run began); 0 for a nil
// Recorder.
func (r *Recorder) Since(t time.Time) int64 {
	if r == nil {
		return 0
	}
	return t.Sub(r.began).Nanoseconds()
}

// Add writes s. The first error is kept for Close.
func (r *Recorder) Add(s Span) {
	if r == nil {
		return
	}
	b, err := json.Marshal(s)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	if err == nil {
		b = append(b, '\n')
		_, err = r.w.Write(b)
	}
	r.err = err
}

// Span adds a span named name from start to now, on target.
func (r *Recorder) Span(name, target string, start time.Time, steps map[string]int64) {
	if r == nil {
		return
	}
	r.Add(Span{Name: name, Target: target, StartNs: r.Since(start), EndNs: r.Since(time.Now()), Steps: steps})
}

// Close flushes the trace and says the first error it met.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err := errors.Join(r.err, r.w.Flush(), r.f.Close())
	if err != nil {
		return fmt.Errorf("trace %s: %w", r.f.Name(), err)
	}
	return nil
}

// Read reads a trace file's spans in order.
func Read(path string) ([]Span, error) {
	f, err := os.Open(path) //nolint:gosec // G304: a trace file the user names
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var s Span
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return out, fmt.Errorf("%s:%d: not a trace span: %w", path, line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}
