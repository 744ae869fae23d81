package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/runtrace"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// fakeCPUNs is the CPU time of a fakeTarget's thread 0 (thread i: + i).
const fakeCPUNs = 750_000_000

// fakeTarget answers each cell with one record per thread: loops in 1 s.
type fakeTarget struct {
	calls  []*agentpb.RunRequest
	failAt int // 1-based call that fails; 0 never
}

func (f *fakeTarget) Info(context.Context) (*agentpb.InfoReply, error) {
	return &agentpb.InfoReply{Os: "linux", Arch: "amd64", Codecs: []string{"zstd"}}, nil
}

func (f *fakeTarget) Close() error { return nil }

func (f *fakeTarget) Run(_ context.Context, req *agentpb.RunRequest, _ func(*agentpb.Progress)) (*agentpb.Result, error) {
	f.calls = append(f.calls, req)
	if len(f.calls) == f.failAt {
		return nil, errors.New("channel closed")
	}
	res := &agentpb.Result{Unit: "loops", Metrics: map[string]float64{"x": 1}}
	for i := uint32(0); i < req.Threads; i++ {
		res.Records = append(res.Records, &agentpb.ThreadRecord{Index: i, StartNs: int64(i), EndNs: 1e9, Work: float64(req.Loops), Rate: float64(req.Loops),
			Qos: &agentpb.QoSApplied{Asked: req.Qos, Applied: req.Qos, Full: true}, CpuNs: fakeCPUNs + int64(i)})
	}
	return res, nil
}

func testCells() []PlannedRun {
	return []PlannedRun{
		{Target: spec.TargetHost, Workload: "fp", QoS: qos.Background, Threads: 1, Warmup: 1, Params: catalog.Params{Loops: 10}},
		{Target: spec.TargetHost, Workload: "fp", QoS: qos.Background, Threads: 1, Repeat: 1, Params: catalog.Params{Loops: 10}},
		{Target: spec.TargetHost, Workload: "fp", QoS: qos.Background, Threads: 2, Repeat: 1, Params: catalog.Params{Loops: 10}},
		{Target: spec.TargetHost, Workload: "fp", QoS: qos.Background, Threads: 1, Repeat: 2, Params: catalog.Params{Loops: 10}},
	}
}

func openLog(t *testing.T, path string) *results.SampleLog {
	t.Helper()
	l, _, err := results.OpenSampleLog(path)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

func TestRunnerLogsTimedRunsAndResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), results.SamplesFile)
	target := &fakeTarget{failAt: 4}
	var steps []Step
	r := &runner{Cells: testCells(), Targets: map[string]Target{spec.TargetHost: target}, Log: openLog(t, path), Contention: 2,
		OnStep: func(s Step) { steps = append(steps, s) }}
	st, err := r.Run(context.Background())
	require.Error(t, err)
	assert.ErrorContains(t, err, "cell 4/4 (")
	assert.ErrorContains(t, err, "channel closed")
	assert.Equal(t, 2, st.Runs)
	assert.Equal(t, 1, st.Warmups)
	assert.Len(t, steps, 4)
	assert.Zero(t, target.calls[0].ProgressIntervalMs, "no progress events unless asked: nothing else runs while measuring")

	recs, torn, err := results.ReadSamples(path)
	require.NoError(t, err)
	require.Nil(t, torn)
	assert.Len(t, recs, 3, "the warm-up is not a sample; repeat 1 at 1 and 2 threads are")
	for _, rec := range recs {
		assert.Equal(t, 1, rec.Repeat)
		assert.Equal(t, 2, rec.Contention)
		assert.Equal(t, fakeCPUNs+int64(rec.Index), rec.CPUNs, "the record's CPU time reaches samples.jsonl")
		assert.Equal(t, map[string]float64{"x": 1}, rec.Metrics)
	}

	// Resume: only the failed repeat runs again (and the warm-up, which is never recorded).
	again := &fakeTarget{}
	r2 := &runner{Cells: testCells(), Targets: map[string]Target{spec.TargetHost: again}, Log: openLog(t, path),
		Finished: results.FinishedRuns(recs)}
	st, err = r2.Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, st.Skipped)
	assert.Equal(t, 1, st.Runs)
	assert.Len(t, again.calls, 2)
	recs, _, err = results.ReadSamples(path)
	require.NoError(t, err)
	assert.Len(t, recs, 4)
	assert.Positive(t, st.MeasuredNs)
}

func TestRunnerNeedsItsTargets(t *testing.T) {
	cells := []PlannedRun{{Target: spec.TargetVM, Workload: "fp", QoS: qos.Default, Threads: 1, Repeat: 1, Params: catalog.Params{Loops: 1}}}
	r := &runner{Cells: cells, Targets: map[string]Target{}, Log: openLog(t, filepath.Join(t.TempDir(), "s.jsonl"))}
	_, err := r.Run(context.Background())
	assert.ErrorContains(t, err, "no vm target was started")
}

func TestCellRequest(t *testing.T) {
	c := PlannedRun{Target: spec.TargetVM, Workload: "compress", QoS: qos.UserInteractive, Threads: 2, Repeat: 1, DataSeed: 7, Params: catalog.Params{SizeBytes: 1 << 20, Ratio: 3, Codec: "zstd", Level: 3, Sink: "file"}}
	req := c.Request()
	assert.Equal(t, "compress", req.Workload)
	assert.Equal(t, int32(33), req.Qos)
	assert.Equal(t, uint32(2), req.Threads)
	assert.Equal(t, uint64(1<<20), req.SizeBytes)
	assert.Equal(t, "zstd", req.Codec)
	assert.Equal(t, uint64(7), req.Seed, "the spec's data seed")
}

func TestRunnerDiscardsACellRunWhoseConditionsFailed(t *testing.T) {
	path := filepath.Join(t.TempDir(), results.SamplesFile)
	calls := 0
	r := &runner{Cells: testCells(), Targets: map[string]Target{spec.TargetHost: &fakeTarget{}}, Log: openLog(t, path), Contention: 2,
		Conditions: func() error {
			calls++
			if calls == 3 {
				return errors.New("the 2 contention spinners (pid 7) ended mid-run")
			}
			return nil
		}}
	st, err := r.Run(context.Background())
	require.Error(t, err)
	assert.ErrorContains(t, err, "cell 3/4 (")
	assert.ErrorContains(t, err, "not saved: the 2 contention spinners (pid 7) ended mid-run")
	assert.Equal(t, 1, st.Runs, "the warm-up and one timed run passed; the third was discarded")
	recs, _, err := results.ReadSamples(path)
	require.NoError(t, err)
	assert.Len(t, recs, 1, "only the cell run measured under the conditions is kept")
}

// A fixed-work host cell run shorter than minCellInterval is named once,
// with what to do; longer runs, duration cells and VM cells are not.
func TestShortCellWarning(t *testing.T) {
	cell := PlannedRun{Target: spec.TargetHost, Workload: "fp", QoS: 33, Threads: 2, Repeat: 1, Params: catalog.Params{Loops: 1e7}}
	run := func(c PlannedRun, spans ...[2]int64) CellRun {
		cr := CellRun{Cell: c}
		for _, s := range spans {
			cr.Samples = append(cr.Samples, results.Sample{StartNs: s[0], EndNs: s[1]})
		}
		return cr
	}
	warned := map[string]bool{}
	w := shortCellWarning(run(cell, [2]int64{1e6, 20e6}, [2]int64{2e6, 22.3e6}), warned)
	assert.Equal(t, "host fp qos=user-interactive threads=2 ran 21.3ms (< 250ms): scheduler placement can decide a cell this short; use duration: 1s (bench: --duration 1s) or more loops", w)
	assert.Empty(t, shortCellWarning(run(cell, [2]int64{0, 5e6}), warned), "said once per cell")

	other := cell
	other.Threads = 1
	assert.Empty(t, shortCellWarning(run(other, [2]int64{0, 300e6}), warned), "long enough")
	assert.Contains(t, shortCellWarning(run(other, [2]int64{0, 3e3}), warned), "ran 3µs (< 250ms)")

	vm := cell
	vm.Target = spec.TargetVM
	assert.Empty(t, shortCellWarning(run(vm, [2]int64{0, 5e6}), warned), "a VM's cells are not decided by the host's placement alone")
	dur := cell
	dur.Loops, dur.Duration, dur.Threads = 0, 100*time.Millisecond, 4
	assert.Empty(t, shortCellWarning(run(dur, [2]int64{0, 100e6}), warned), "a duration cell lasts what it was asked")
}

// Two resumes of one directory at once: the second is refused at once,
// naming the first's pid, and neither refusal nor damage touches run.json.
func TestResumeRunLocksAndRefusesBeforeTouching(t *testing.T) {
	s, err := spec.ParseSpec([]byte("targets: [host]\nmatrix: [{workload: fp, loops: 10}]\nrepeats: 2\n"), "t")
	require.NoError(t, err)
	d, _, err := CreateRun(t.TempDir(), s, time.Now())
	require.NoError(t, err)
	assert.Equal(t, 2*2, d.Run.Planned, "2 classes x 2 repeats")
	require.NoError(t, d.Finish(time.Now(), errors.New("vm: QEMU ended")))
	d.Unlock()
	runJSON := filepath.Join(d.Path, results.RunFile)

	first, _, err := ResumeRun(d.Path, time.Now())
	require.NoError(t, err)
	before, err := os.ReadFile(runJSON)
	require.NoError(t, err)
	_, _, err = ResumeRun(d.Path, time.Now())
	var inUse *results.InUseError
	require.ErrorAs(t, err, &inUse)
	assert.Contains(t, err.Error(), fmt.Sprintf("pid %d", os.Getpid()))
	after, err := os.ReadFile(runJSON)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "a refused resume writes nothing")
	require.NoError(t, first.Finish(time.Now(), errors.New("stopped again")))
	first.Unlock()

	// A damaged samples.jsonl is refused before run.json is touched: why
	// the run stopped is kept.
	require.NoError(t, os.WriteFile(filepath.Join(d.Path, results.SamplesFile), []byte("not json\n{}\n"), 0o644))
	before, err = os.ReadFile(runJSON)
	require.NoError(t, err)
	_, _, err = ResumeRun(d.Path, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 1 is not a sample record")
	after, err = os.ReadFile(runJSON)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	assert.Contains(t, string(after), "stopped again")
	_, running := results.Running(d.Path)
	assert.False(t, running, "a refused resume lets the lock go")
}

// A traced run has a span for every cell run (warm-ups too): its steps on
// the controller add up to the span, the agent is asked for its own and
// they are kept, and a timed run's measured interval is its records'.
func TestRunnerTracesEveryCellRun(t *testing.T) {
	dir := t.TempDir()
	trace, err := runtrace.Create(filepath.Join(dir, results.TraceFile), time.Now())
	require.NoError(t, err)
	target := &tracingTarget{}
	r := &runner{Cells: testCells(), Targets: map[string]Target{spec.TargetHost: target}, Log: openLog(t, filepath.Join(dir, results.SamplesFile)), Trace: trace}
	_, err = r.Run(context.Background())
	require.NoError(t, err)
	require.NoError(t, trace.Close())
	for _, req := range target.calls {
		assert.True(t, req.Trace, "a traced run asks the agent for its steps")
	}

	spans, err := runtrace.Read(filepath.Join(dir, results.TraceFile))
	require.NoError(t, err)
	require.Len(t, spans, len(testCells()))
	for i, s := range spans {
		assert.Equal(t, runtrace.SpanCell, s.Name)
		assert.Equal(t, i+1, s.Index)
		assert.Equal(t, testCells()[i].SeriesKey(), s.Cell)
		var sum int64
		for _, k := range []string{runtrace.StepProgress, runtrace.StepPrepare, runtrace.StepCall, runtrace.StepCollect, runtrace.StepCheck} {
			require.Contains(t, s.Steps, k)
			sum += s.Steps[k]
		}
		assert.Equal(t, map[string]int64{"total": 7}, s.Agent)
		if i == 0 {
			assert.Zero(t, s.MeasuredNs, "a warm-up measures nothing")
			assert.NotContains(t, s.Steps, runtrace.StepKeep)
		} else {
			assert.Equal(t, int64(1e9), s.MeasuredNs, "first thread start to last thread end")
			for _, k := range []string{runtrace.StepKeep, runtrace.StepReport} {
				require.Contains(t, s.Steps, k)
				sum += s.Steps[k]
			}
		}
		assert.Equal(t, s.EndNs-s.StartNs, sum, "the steps make up the span")
		assert.GreaterOrEqual(t, s.Steps[runtrace.StepCall], int64(time.Millisecond), "the call's time is the call's")
	}

	// Untraced: the agent is asked for nothing.
	plain := &tracingTarget{}
	r = &runner{Cells: testCells()[:1], Targets: map[string]Target{spec.TargetHost: plain}}
	_, err = r.Run(context.Background())
	require.NoError(t, err)
	assert.False(t, plain.calls[0].Trace)
}

// tracingTarget is a fakeTarget whose calls take a millisecond and whose
// agent reports its steps when asked.
type tracingTarget struct{ fakeTarget }

func (f *tracingTarget) Run(ctx context.Context, req *agentpb.RunRequest, p func(*agentpb.Progress)) (*agentpb.Result, error) {
	time.Sleep(time.Millisecond)
	res, err := f.fakeTarget.Run(ctx, req, p)
	if req.Trace {
		res.TraceNs = map[string]int64{"total": 7}
	}
	return res, err
}

// A whole last line that is not a record (it ends in its newline) is
// damage, not a crash's torn tail: a resume refuses the directory, naming
// the line, and cuts nothing off its samples (it used to cut the line off
// as torn, and measure that cell run again).
func TestResumeRefusesAWholeLastLineThatIsNotARecord(t *testing.T) {
	s, err := spec.ParseSpec([]byte("targets: [host]\nmatrix: [{workload: fp, loops: 10}]\nrepeats: 2\n"), "t")
	require.NoError(t, err)
	d, _, err := CreateRun(t.TempDir(), s, time.Now())
	require.NoError(t, err)
	log, _, err := d.OpenSamples()
	require.NoError(t, err)
	require.NoError(t, log.Append(results.Record{Cell: "host fp qos=9 threads=1 loops=10", Params: &catalog.Params{Loops: 10},
		Sample: results.Sample{Target: spec.TargetHost, Workload: "fp", QoS: 9, Threads: 1, Repeat: 1, EndNs: 1e6, Work: 10, Unit: "loops", Rate: 1e4, CPUNs: 9e5}}))
	require.NoError(t, log.Close())
	require.NoError(t, d.Finish(time.Now(), errors.New("stopped")))
	d.Unlock()
	path := filepath.Join(d.Path, results.SamplesFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"schema_version":"1.2","cell":` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	_, _, err = ResumeRun(d.Path, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+" line 2, its last, is not a sample record (unexpected end of JSON input) but is whole")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing cut off a damaged file")
}

// Every timed cell run's records carry the host's view of it, read around
// the agent call (a step of the trace of its own); a warm-up's call is not
// read.
func TestRunnerRecordsTheHostView(t *testing.T) {
	dir := t.TempDir()
	trace, err := runtrace.Create(filepath.Join(dir, results.TraceFile), time.Now())
	require.NoError(t, err)
	path := filepath.Join(dir, results.SamplesFile)
	r := &runner{Cells: testCells(), Targets: map[string]Target{spec.TargetHost: &tracingTarget{}}, Log: openLog(t, path),
		Trace: trace, HostView: hostview.NewReader()}
	_, err = r.Run(context.Background())
	require.NoError(t, err)
	require.NoError(t, trace.Close())

	recs, _, err := results.ReadSamples(path)
	require.NoError(t, err)
	require.Len(t, recs, 4)
	for _, rec := range recs {
		require.NotNil(t, rec.HostView, "record %s repeat %d thread %d", rec.Cell, rec.Repeat, rec.Index)
		assert.GreaterOrEqual(t, rec.HostView.WallNs, int64(time.Millisecond), "the reads bound the call")
		assert.Positive(t, rec.HostView.HostCPUs)
		assert.Empty(t, rec.HostView.VCPUs, "a host cell run has no vCPUs")
	}
	assert.Equal(t, recs[1].HostView, recs[2].HostView, "a cell run's records carry the same view")

	spans, err := runtrace.Read(filepath.Join(dir, results.TraceFile))
	require.NoError(t, err)
	require.Len(t, spans, len(testCells()))
	assert.NotContains(t, spans[0].Steps, runtrace.StepHostView, "a warm-up is not read")
	for _, s := range spans[1:] {
		assert.Contains(t, s.Steps, runtrace.StepHostView)
	}
}
