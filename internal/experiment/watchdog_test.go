package experiment

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

func TestExpectationAndStallThreshold(t *testing.T) {
	cases := []struct {
		name     string
		cell     PlannedRun
		earlier  []time.Duration
		expected time.Duration
		basis    string
		after    time.Duration
	}{
		{"duration cell", PlannedRun{Params: catalog.Params{Duration: time.Second}}, nil, time.Second, "its duration", 31 * time.Second},
		{"earlier repeats", PlannedRun{Params: catalog.Params{Loops: 10}}, []time.Duration{20 * time.Second, 12 * time.Second, 30 * time.Second}, 20 * time.Second, "the median of its 3 earlier repeats", 100 * time.Second},
		{"even count", PlannedRun{Params: catalog.Params{Loops: 10}}, []time.Duration{2 * time.Second, 4 * time.Second}, 3 * time.Second, "the median of its 2 earlier repeats", 33 * time.Second},
		{"first repeat", PlannedRun{Params: catalog.Params{Loops: 10}}, nil, 0, "no earlier repeat to compare with", stallUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, basis := expectation(c.cell, c.earlier)
			assert.Equal(t, c.expected, e)
			assert.Equal(t, c.basis, basis)
			assert.Equal(t, c.after, stallAfter(e))
		})
	}
}

func TestStallLine(t *testing.T) {
	c := PlannedRun{Target: spec.TargetVM, Workload: "fp", QoS: qos.Background, Threads: 1, Repeat: 2, Params: catalog.Params{Duration: time.Second}}
	s := Stall{Cell: c, Elapsed: 2 * time.Minute, Expected: time.Second, Basis: "its duration", Cause: "the VM's vCPU threads starve"}
	assert.Equal(t, "stall: vm: fp qos=background threads=1 repeat=2 has run 2m0s, 120x the 1s expected (its duration); likely cause: the VM's vCPU threads starve", s.String())
	s = Stall{Cell: c, Elapsed: 10 * time.Minute, Basis: "no earlier repeat to compare with"}
	assert.Equal(t, "stall: vm: fp qos=background threads=1 repeat=2 has run 10m0s (no earlier repeat to compare with)", s.String())
}

// hangingTarget answers like fakeTarget, except that its hang-th call
// never finishes on its own: it waits for its context.
type hangingTarget struct {
	fakeTarget
	hang int
	mu   sync.Mutex
}

func (h *hangingTarget) Run(ctx context.Context, req *agentpb.RunRequest, p func(*agentpb.Progress)) (*agentpb.Result, error) {
	h.mu.Lock()
	n := len(h.calls) + 1
	h.mu.Unlock()
	if n == h.hang {
		h.mu.Lock()
		h.calls = append(h.calls, req)
		h.mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fakeTarget.Run(ctx, req, p)
}

// A cell that never finishes is named while it runs, with the likely
// cause, and the cell timeout ends it with an error that says so; what
// finished before it stays in the log.
func TestRunnerNamesAStallAndEndsItAtTheTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), results.SamplesFile)
	target := &hangingTarget{hang: 3}
	cells := []PlannedRun{
		{Target: spec.TargetVM, Workload: "fp", QoS: qos.Background, Threads: 1, Repeat: 1, Params: catalog.Params{Duration: 10 * time.Millisecond}},
		{Target: spec.TargetVM, Workload: "fp", QoS: qos.UserInteractive, Threads: 1, Repeat: 1, Params: catalog.Params{Duration: 10 * time.Millisecond}},
		{Target: spec.TargetVM, Workload: "fp", QoS: qos.Background, Threads: 1, Repeat: 2, Params: catalog.Params{Duration: 10 * time.Millisecond}},
	}
	var mu sync.Mutex
	var stalled []Stall
	r := &runner{Cells: cells, Targets: map[string]Target{spec.TargetVM: target}, Log: openLog(t, path),
		CellTimeout: 2 * time.Second,
		StallAfter:  func(time.Duration) time.Duration { return time.Millisecond },
		Diagnose:    func(context.Context, PlannedRun) string { return "the VM's vCPU threads got no CPU" },
		OnStall: func(s Stall) {
			mu.Lock()
			defer mu.Unlock()
			stalled = append(stalled, s)
		},
	}
	st, err := r.Run(context.Background())
	var timeout *cellTimeoutError
	require.True(t, errors.As(err, &timeout), "want a *cellTimeoutError, got %v", err)
	assert.Equal(t, "cell 3/3 (vm: fp qos=background threads=1 repeat=2) ran past the cell timeout of 2s (--cell-timeout, or the spec's cell_timeout) and was ended; likely cause: the VM's vCPU threads got no CPU", err.Error())
	assert.Equal(t, 2, st.Runs)
	require.NotEmpty(t, stalled, "the watch has stopped: no lock needed")
	s := stalled[0]
	assert.Equal(t, cells[2], s.Cell, "the hanging cell is the one named")
	assert.Equal(t, "its duration", s.Basis)
	assert.Equal(t, "the VM's vCPU threads got no CPU", s.Cause)

	recs, _, err := results.ReadSamples(path)
	require.NoError(t, err)
	assert.Len(t, results.FinishedRepeats(recs), 2, "both finished cells are kept, to resume from")
}

// The watchdog says nothing about a cell that finishes before it is late.
func TestRunnerQuietWhenCellsFinish(t *testing.T) {
	var stalls int
	r := &runner{Cells: testCells(), Targets: map[string]Target{spec.TargetHost: &fakeTarget{}},
		OnStall: func(Stall) { stalls++ }, Diagnose: func(context.Context, PlannedRun) string { return "x" }}
	_, err := r.Run(context.Background())
	require.NoError(t, err)
	assert.Zero(t, stalls)
}

// A VM whose vCPU threads run at background beside contention spinners is
// the known cause of a starved guest.
func TestDiagnoseStallFromTheSpec(t *testing.T) {
	c := PlannedRun{Target: spec.TargetVM, Workload: "fp", QoS: qos.Background, Threads: 1, Repeat: 1, Params: catalog.Params{Duration: time.Second}}
	s := spec.Spec{VM: spec.VMSpec{HostQoS: qos.Background}}
	got := diagnoseStall(context.Background(), c, s, 16, nil)
	assert.Equal(t, "the VM's vCPU threads run at host_qos background beside 16 contention spinners on every CPU they may use, which leaves them next to no CPU (drop vm.host_qos, or contention)", got)
	assert.Empty(t, diagnoseStall(context.Background(), c, spec.Spec{}, 16, nil), "no known cause, no guess")
	assert.Empty(t, diagnoseStall(context.Background(), c, s, 0, nil), "without contention background vCPU threads get the idle CPUs")
}
