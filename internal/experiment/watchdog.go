package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/units"
)

// A cell run is stalled when it has run stallFactor times what it was
// expected to take, and stallSlack more than that at least (so that a 1 s
// cell is not called stalled for a slow start). Without an expectation (the
// first repeat of a fixed-work cell) it is named after stallUnknown.
const (
	stallFactor  = 5
	stallSlack   = 30 * time.Second
	stallUnknown = 10 * time.Minute
)

// stallDiagnosis is how long the watchdog samples the stalled cell's
// threads from the host to say whether they are getting any CPU.
const stallDiagnosis = time.Second

// Stall is a cell run going far past what it was expected to take: the
// watchdog's line on the terminal.
type Stall struct {
	Cell    PlannedRun
	Elapsed time.Duration
	// Expected is what the cell was expected to take and Basis why: its
	// duration, or the median of its earlier repeats; 0 when nothing said.
	Expected time.Duration
	Basis    string
	// Cause is the likely cause, where one is known.
	Cause string
}

func (s Stall) String() string {
	line := fmt.Sprintf("stall: %s has run %s", s.Cell.label(), s.Elapsed.Round(time.Second))
	if s.Expected > 0 {
		line += fmt.Sprintf(", %.0fx the %s expected (%s)", float64(s.Elapsed)/float64(s.Expected), shortDuration(s.Expected), s.Basis)
	} else {
		line += " (" + s.Basis + ")"
	}
	if s.Cause != "" {
		line += "; likely cause: " + s.Cause
	}
	return line
}

// cellTimeoutError is a cell run ended by the cell timeout: the run stops
// there, and what finished before it is kept.
type cellTimeoutError struct {
	Index, Total int
	Cell         PlannedRun
	Limit        time.Duration
	Cause        string
}

func (e *cellTimeoutError) Error() string {
	msg := fmt.Sprintf("cell %d/%d (%s) ran past the cell timeout of %s (--cell-timeout, or the spec's cell_timeout) and was ended", e.Index+1, e.Total, e.Cell.label(), e.Limit)
	if e.Cause != "" {
		msg += "; likely cause: " + e.Cause
	}
	return msg
}

// errCellTimeout is the cause of a cell run's context when its timeout ends it.
var errCellTimeout = errors.New("cell timeout")

// expectation is what a cell run should take: a fixed-duration cell its
// duration, else the median wall time of the cell's earlier repeats in
// this session; 0 when there is neither.
func expectation(c PlannedRun, earlier []time.Duration) (time.Duration, string) {
	if c.Duration > 0 {
		return c.Duration, "its duration"
	}
	if len(earlier) == 0 {
		return 0, "no earlier repeat to compare with"
	}
	s := slices.Sorted(slices.Values(earlier))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return m, fmt.Sprintf("the median of its %d earlier repeats", len(s))
}

// stallAfter is when a cell run expected to take expected is stalled.
func stallAfter(expected time.Duration) time.Duration {
	if expected <= 0 {
		return stallUnknown
	}
	return max(stallFactor*expected, expected+stallSlack)
}

// watchdog names a cell run that goes far past its expectation, while the
// controller waits on the agent's stream: nothing of it runs on the
// target, and nothing at all until the cell is already late. It reports
// once at the stall threshold and again each time the elapsed time
// doubles, diagnosing each time.
type watchdog struct {
	done    chan struct{}
	stopped chan struct{}
	cancel  context.CancelFunc // ends a diagnosis under way
	cause   string             // the last diagnosis, read after stop
}

func (r *runner) watch(ctx context.Context, c PlannedRun, began time.Time, expected time.Duration, basis string) *watchdog {
	ctx, cancel := context.WithCancel(ctx)
	w := &watchdog{done: make(chan struct{}), stopped: make(chan struct{}), cancel: cancel}
	if r.OnStall == nil && r.Diagnose == nil {
		close(w.stopped)
		return w
	}
	go func() {
		defer close(w.stopped)
		next := stallAfter(expected)
		if r.StallAfter != nil {
			next = r.StallAfter(expected)
		}
		for {
			t := time.NewTimer(time.Until(began.Add(next)))
			select {
			case <-w.done:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			stall := Stall{Cell: c, Elapsed: time.Since(began), Expected: expected, Basis: basis}
			if r.Diagnose != nil {
				stall.Cause = r.Diagnose(ctx, c)
			}
			select {
			case <-w.done:
				return
			default:
			}
			w.cause = stall.Cause
			if r.OnStall != nil {
				r.OnStall(stall)
			}
			next *= 2
		}
	}()
	return w
}

// stop ends the watch (and a diagnosis under way) and waits until no line
// of it can still come.
func (w *watchdog) stop() string {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.cancel()
	<-w.stopped
	return w.cause
}

// agentThreads lists the threads of the process pid (Linux: its
// /proc/PID/task); nil where they cannot be listed.
func agentThreads(pid int) []int {
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out
}

// diagnoseStall says what likely keeps cell c from finishing, from what
// the run set up (a VM whose vCPU threads run at background beside
// contention spinners) and from the host's own telemetry of the cell's
// threads over a second (the VM's vCPU threads, or the host agent's
// threads): whether they get any CPU. Empty when nothing is known.
func diagnoseStall(ctx context.Context, c PlannedRun, s spec.Spec, spinners int, target Target) string {
	var causes []string
	if c.Target == spec.TargetVM && s.VM.HostQoS == qos.Background && spinners > 0 {
		causes = append(causes, fmt.Sprintf("the VM's vCPU threads run at host_qos background beside %s on every CPU they may use, which leaves them next to no CPU (drop vm.host_qos, or contention)",
			units.Plural(spinners, "contention spinner")))
	}
	var refs []telemetry.ThreadRef
	what := "the host agent's threads (its workers among them)"
	switch t := target.(type) {
	case inVM:
		mi := t.Machine()
		refs = telemetry.VCPURefs(mi.PID, mi.VCPUThreads)
		what = fmt.Sprintf("the VM's %s", units.Plural(len(refs), "vCPU thread"))
	case interface{ Pid() int }:
		for _, tid := range agentThreads(t.Pid()) {
			refs = append(refs, telemetry.ThreadRef{PID: t.Pid(), TID: tid, Role: "agent"})
		}
	}
	if busy, ok := threadsBusy(ctx, refs); ok {
		line := fmt.Sprintf("the host's telemetry has the busiest of %s on a CPU %.1f%% of the last second", what, 100*busy)
		if busy < 0.05 {
			line += ": they are waiting for a CPU"
		}
		causes = append(causes, line)
	}
	return strings.Join(causes, "; ")
}

// threadsBusy samples refs from the host twice, stallDiagnosis apart, and
// returns their busiest share of one CPU over that time; ok false when the
// host cannot say (no thread to follow, no per-thread telemetry).
func threadsBusy(ctx context.Context, refs []telemetry.ThreadRef) (float64, bool) {
	if len(refs) == 0 {
		return 0, false
	}
	probe, err := telemetry.NewLocalProbe(ctx, stallDiagnosis)
	if err != nil {
		return 0, false
	}
	defer probe.Close()
	if _, err := probe.Sample(ctx, refs); err != nil {
		return 0, false
	}
	select {
	case <-ctx.Done():
		return 0, false
	case <-time.After(stallDiagnosis):
	}
	smp, err := probe.Sample(ctx, refs)
	if err != nil {
		return 0, false
	}
	busiest, seen := 0.0, false
	for _, th := range smp.Threads {
		if th.Busy != nil {
			busiest, seen = max(busiest, *th.Busy), true
		}
	}
	return busiest, seen
}
