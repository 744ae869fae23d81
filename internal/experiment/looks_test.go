package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// rateTarget answers each cell with one record per thread at a rate its
// function gives for the class, thread count and the how-manyth call of
// that cell it is (from 1): a target whose repeats are as wide or as
// tight as a test needs.
type rateTarget struct {
	rate   func(class, threads, call int) float64
	calls  map[[2]int]int
	failAt int // 1-based call (of all) that fails; 0 never
	all    int
	// runs are the requests answered, in order.
	runs []*agentpb.RunRequest
}

func (f *rateTarget) Info(context.Context) (*agentpb.InfoReply, error) {
	return &agentpb.InfoReply{Os: "linux", Arch: "amd64"}, nil
}

func (f *rateTarget) Close() error { return nil }

func (f *rateTarget) Run(_ context.Context, req *agentpb.RunRequest, _ func(*agentpb.Progress)) (*agentpb.Result, error) {
	f.all++
	if f.all == f.failAt {
		return nil, errors.New("channel closed")
	}
	f.runs = append(f.runs, req)
	if f.calls == nil {
		f.calls = map[[2]int]int{}
	}
	k := [2]int{int(req.Qos), int(req.Threads)}
	f.calls[k]++
	rate := f.rate(int(req.Qos), int(req.Threads), f.calls[k])
	res := &agentpb.Result{Unit: "loops"}
	for i := uint32(0); i < req.Threads; i++ {
		res.Records = append(res.Records, &agentpb.ThreadRecord{Index: i, StartNs: 0, EndNs: 1e9, Work: rate, Rate: rate,
			Qos: &agentpb.QoSApplied{Asked: req.Qos, Applied: req.Qos, Full: true}, CpuNs: 1e9})
	}
	return res, nil
}

// jitter is a small spread, distinct per call, so no two repeats tie.
func jitter(class, threads, call int) float64 {
	return 1 + 0.002*float64(call) + 0.0003*float64(threads) + 0.00001*float64(class)
}

// hostRate shows a 10x QoS effect.
func hostRate(class, threads, call int) float64 {
	r := 100 * jitter(class, threads, call)
	if class == 9 {
		r /= 10
	}
	return r
}

// vmRate has no QoS effect; at 2 threads the first six repeats of each
// class are wide (the second far off, one class each way), the later ones
// tight.
func vmRate(class, threads, call int) float64 {
	return vmRateWide(class, threads, call, func(call int) bool { return call == 2 })
}

// vmRateAlwaysWide is vmRate with every sixth call from the second far off:
// repeats never narrow the 2-thread interval enough.
func vmRateAlwaysWide(class, threads, call int) float64 {
	return vmRateWide(class, threads, call, func(call int) bool { return call%6 == 2 })
}

// vmRateTight is vmRate with no call far off.
func vmRateTight(class, threads, call int) float64 {
	return vmRateWide(class, threads, call, func(int) bool { return false })
}

func vmRateWide(class, threads, call int, off func(int) bool) float64 {
	r := 50 * jitter(class, threads, call)
	if threads == 2 && off(call) {
		if class == 33 {
			r *= 1.6
		} else {
			r *= 0.6
		}
	}
	return r
}

func looksSpec(t *testing.T, extra string) spec.Spec {
	t.Helper()
	s, err := spec.ParseSpec([]byte("name: looks\ntargets: [host, vm]\nmatrix: [{workload: fp, qos: [9, 33], threads: [1, 2], loops: 10}]\nrepeats: 6\nseed: 1\ntelemetry_ms: 0\n"+extra), "looks")
	require.NoError(t, err)
	return s
}

func looksEnv(host, vm *rateTarget, log io.Writer) Env {
	return Env{Log: log, StartTarget: func(_ context.Context, name string, _ spec.Spec, _ io.Writer) (Target, []string, error) {
		if name == spec.TargetHost {
			return host, nil, nil
		}
		return vm, nil, nil
	}}
}

// A run whose verdict is undecided at 2 threads (the VM's repeats there
// are wide) adds repeats 7-12 of the VM's cells at 2 threads, both
// classes, interleaved, records the look before it runs it, and stops when
// the second look decides; the block's cell runs count as planned.
func TestLooksAddRepeatsUntilDecided(t *testing.T) {
	dir, s, err := CreateRun(t.TempDir(), looksSpec(t, ""), time.Now())
	require.NoError(t, err)
	defer dir.Unlock()
	assert.Equal(t, 18, s.MaxRepeats, "3 times repeats when the spec leaves it out")
	var log bytes.Buffer
	host, vm := &rateTarget{rate: hostRate}, &rateTarget{rate: vmRate}
	env := looksEnv(host, vm, &log)
	var steps []Step
	env.OnStep = func(st Step) { steps = append(steps, st) }
	out, err := Execute(context.Background(), s, dir, env)
	require.NoError(t, err)
	require.Len(t, steps, 60)
	assert.Equal(t, 48, steps[47].Total)
	assert.Equal(t, 48, steps[48].Index, "the block's steps count on through the plan as it grew")
	assert.Equal(t, 60, steps[48].Total)

	assert.Len(t, host.runs, 24, "the host's cells are not repeated: only the VM's interval is too wide")
	require.Len(t, vm.runs, 36)
	block := out.Runs[48:]
	require.Len(t, block, 12)
	var got []string
	for _, cr := range block {
		c := cr.Cell
		assert.Equal(t, spec.TargetVM, c.Target)
		assert.Equal(t, 2, c.Threads)
		got = append(got, fmt.Sprintf("%d/%d", c.QoS, c.Repeat))
	}
	assert.ElementsMatch(t, []string{"9/7", "33/7", "9/8", "33/8", "9/9", "33/9", "9/10", "33/10", "9/11", "33/11", "9/12", "33/12"}, got,
		"repeats 7..12 of both classes, each once")
	for i := 0; i < len(block); i += 2 {
		assert.Equal(t, block[i].Cell.Repeat, block[i+1].Cell.Repeat, "repeats are outermost, as in the plan")
	}
	want := lookCells(s, results.Look{Seed: lookSeed(*s.Seed, 2), Blocks: []results.LookBlock{{Workload: "fp", QoS: []int{33, 9}, Threads: []int{2}, Targets: []string{spec.TargetVM}, From: 7, To: 12}}})
	require.Len(t, want, 12)
	for i, cr := range block {
		assert.Equal(t, want[i].Key(), cr.Cell.Key(), "the block is laid out by the plan's own ordering")
	}
	assert.Contains(t, log.String(), "\nlook 2 of 3, 12 cell runs: 6 more repeats of vm fp at 2 threads, repeats 7-12 (fp undecided: the vm ratio at 2 threads")
	assert.NotContains(t, log.String(), "look 3", "the second look decided")
	assert.Contains(t, log.String(), "\nlooks: fp yes after 12 repeats at 2 threads, 2 looks of 3\n", "what it took")
	assert.Equal(t, analysis.Subsumed, decide(s, out.Samples(), analysis.Schedule(6, 18))[0].Outcome)

	d, err := results.Open(dir.Path)
	require.NoError(t, err)
	recorded := d.Run.Spec.Value()
	assert.Equal(t, 18, recorded.MaxRepeats, "run.json's spec carries the cap applied")
	require.Len(t, d.Run.Looks, 1)
	lk := d.Run.Looks[0]
	assert.Equal(t, 2, lk.Index)
	assert.Equal(t, 3, lk.Of)
	assert.Equal(t, 12, lk.Added)
	assert.Equal(t, 60, lk.Planned)
	assert.Equal(t, 60, d.Run.Planned)
	assert.Contains(t, d.Run.Notes, "looks: fp yes after 12 repeats at 2 threads, 2 looks of 3", "run.json's notes, which the report shows, say what it took")
	assert.False(t, lk.At.IsZero())
	assert.Equal(t, []results.LookBlock{{Workload: "fp", QoS: []int{33, 9}, Threads: []int{2}, Targets: []string{spec.TargetVM}, From: 7, To: 12, Reason: lk.Blocks[0].Reason}}, lk.Blocks)
	recs, torn, err := d.ReadSamples()
	require.NoError(t, err)
	held := results.Assess(PlannedOf(d), d.Run.Planned, recs, torn, nil)
	assert.Equal(t, results.StateComplete, held.State, "the block's runs are planned: %s", held.Text())
	assert.Equal(t, 60, held.Planned)
	assert.Equal(t, results.StateComplete, results.Assess(nil, d.Run.Planned, recs, torn, nil).State, "by run.json's count too")
}

// The cap stops the looks: with repeats that never narrow, a run takes
// every look its max_repeats allows and no more, and the verdict stays
// undecided.
func TestLooksStopAtTheCap(t *testing.T) {
	for _, c := range []struct {
		max   string
		looks []int
		runs  int
	}{
		{"max_repeats: 12\n", []int{2}, 36},
		{"", []int{2, 3}, 48},
		{"max_repeats: 9\n", []int{2}, 30},
		{"max_repeats: 0\n", nil, 24},
		{"max_repeats: 6\n", nil, 24},
	} {
		t.Run(strings.TrimSpace(c.max), func(t *testing.T) {
			dir, s, err := CreateRun(t.TempDir(), looksSpec(t, c.max), time.Now())
			require.NoError(t, err)
			defer dir.Unlock()
			host, vm := &rateTarget{rate: hostRate}, &rateTarget{rate: vmRateAlwaysWide}
			var log bytes.Buffer
			out, err := Execute(context.Background(), s, dir, looksEnv(host, vm, &log))
			require.NoError(t, err)
			if len(c.looks) > 0 {
				assert.Contains(t, log.String(), fmt.Sprintf("\nlooks: fp inconclusive after %d repeats at 2 threads, %d looks of %d: ", s.MaxRepeats, len(c.looks)+1, len(c.looks)+1))
			} else {
				assert.NotContains(t, log.String(), "\nlook", "no look, and nothing said of looks")
			}
			assert.Len(t, vm.runs, c.runs)
			var looks []int
			for _, lk := range dir.Run.Looks {
				looks = append(looks, lk.Index)
			}
			assert.Equal(t, c.looks, looks)
			for _, lk := range dir.Run.Looks {
				for _, b := range lk.Blocks {
					assert.LessOrEqual(t, b.To, s.MaxRepeats, "no block goes past the cap")
				}
			}
			for _, cr := range out.Runs {
				assert.LessOrEqual(t, cr.Cell.Repeat, max(s.MaxRepeats, s.Repeats))
			}
			v := decide(s, out.Samples(), analysis.Schedule(s.Repeats, s.MaxRepeats))[0]
			assert.Equal(t, analysis.Inconclusive, v.Outcome, v.Reason)
		})
	}
}

// A run that fails in a block is resumed from run.json: the resume measures
// what the block lacks, nothing it has, then decides again.
func TestLooksResumeFinishesTheBlock(t *testing.T) {
	dir, s, err := CreateRun(t.TempDir(), looksSpec(t, ""), time.Now())
	require.NoError(t, err)
	host, vm := &rateTarget{rate: hostRate}, &rateTarget{rate: vmRate, failAt: 24 + 5}
	_, err = Execute(context.Background(), s, dir, looksEnv(host, vm, io.Discard))
	require.Error(t, err)
	assert.ErrorContains(t, err, "channel closed")
	require.Len(t, dir.Run.Looks, 1, "the look is recorded before its first cell run")
	dir.Unlock()

	d, s2, err := ResumeRun(dir.Path, time.Now())
	require.NoError(t, err, "a run with its block unfinished is partial, not complete")
	defer d.Unlock()
	host2, vm2 := &rateTarget{rate: hostRate}, &rateTarget{rate: vmRateTight}
	var log bytes.Buffer
	out, err := Execute(context.Background(), s2, d, looksEnv(host2, vm2, &log))
	require.NoError(t, err)
	assert.Empty(t, host2.runs, "the host's cells were all measured")
	assert.Len(t, vm2.runs, 8, "the 8 of the block's 12 runs that failed or had not run")
	for _, cr := range out.Runs {
		assert.Equal(t, 2, cr.Cell.Threads)
		assert.GreaterOrEqual(t, cr.Cell.Repeat, 7)
	}
	assert.Contains(t, log.String(), "resume: look 2 of 3, 12 cell runs: 6 more repeats of vm fp at 2 threads, repeats 7-12")
	assert.Len(t, d.Run.Looks, 1, "the block decided it")
	recs, torn, err := d.ReadSamples()
	require.NoError(t, err)
	assert.Equal(t, results.StateComplete, results.Assess(PlannedOf(d), d.Run.Planned, recs, torn, nil).State)
}

// A run recorded before looks (run.json's spec without max_repeats) had
// none: its plan is the spec's, with one look.
func TestRecordedSpecWithoutMaxRepeatsHasOneLook(t *testing.T) {
	recorded, err := results.DecodeSpec([]byte(`{"name": "old", "targets": ["host", "vm"], "repeats": 6, "order": "interleaved", "seed": 1,
		"matrix": [{"workload": "fp", "qos": [9, 33], "threads": [1], "loops": 10}]}`))
	require.NoError(t, err)
	s := recorded.Value()
	assert.Zero(t, s.MaxRepeats)
	assert.Equal(t, []int{6}, analysis.Schedule(s.Repeats, s.MaxRepeats))
	assert.Len(t, plannedRunsOf(s, nil), 24)
}

func TestSchedule(t *testing.T) {
	for _, c := range []struct {
		repeats, max int
		want         []int
	}{
		{6, 18, []int{6, 12, 18}},
		{6, 15, []int{6, 12, 15}},
		{6, 7, []int{6, 7}},
		{6, 6, []int{6}},
		{6, 0, []int{6}},
	} {
		assert.Equal(t, c.want, analysis.Schedule(c.repeats, c.max), "%d..%d", c.repeats, c.max)
	}
}

// A block on the host too takes both targets, alternating as the plan
// does, and a block's cells keep their matrix entry.
func TestLookCellsOnBothTargets(t *testing.T) {
	s := looksSpec(t, "")
	s.Matrix = append([]spec.MatrixEntry{{Workload: "int", QoS: []qos.Class{9, 33}, Threads: []int{1}}}, s.Matrix...)
	lk := results.Look{Seed: 3, Blocks: []results.LookBlock{{Workload: "fp", QoS: []int{33, 9}, Threads: []int{1}, Targets: []string{spec.TargetHost, spec.TargetVM}, From: 7, To: 8}}}
	cells := lookCells(s, lk)
	require.Len(t, cells, 8)
	var targets []string
	for _, c := range cells {
		assert.Equal(t, 1, c.Entry)
		assert.Equal(t, 1, c.Threads)
		targets = append(targets, c.Target)
	}
	assert.Equal(t, 4, strings.Count(strings.Join(targets, " "), "host"))
	assert.NotEqual(t, targets[0], targets[2], "the target that goes first alternates")
}

// The constructed results recorded before looks (their specs have no
// max_repeats) load with one look, their plan the spec's alone; the one
// recorded with looks (capped) plans what its looks added.
func TestConstructedResultsHaveOneLook(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "results", "constructed", "*", results.RunFile))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, runFile := range dirs {
		d, err := results.Open(filepath.Dir(runFile))
		require.NoError(t, err, runFile)
		s := d.Run.Spec.Value()
		if looks := d.Run.Looks; len(looks) > 0 {
			assert.Len(t, looksOf(s), looks[len(looks)-1].Of, runFile)
			assert.Len(t, PlannedOf(d), looks[len(looks)-1].Planned, runFile)
			continue
		}
		assert.Zero(t, s.MaxRepeats, runFile)
		assert.Len(t, looksOf(s), 1, runFile)
		assert.Empty(t, d.Run.Looks, runFile)
		assert.Equal(t, plannedRuns(s), PlannedOf(d), runFile)
		if filepath.Base(filepath.Dir(runFile)) == "cpu-past-interval" {
			continue // damaged on purpose: its want.txt holds the error it fails with
		}
		_, err = results.Load(d.Path)
		require.NoError(t, err, runFile)
	}
}

// A run stopped after its planned cells, before it decided, is not
// complete: a resume measures nothing again, decides, and takes the look.
func TestLooksResumeDecidesAfterThePlannedCells(t *testing.T) {
	dir, s, err := CreateRun(t.TempDir(), looksSpec(t, ""), time.Now())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := looksEnv(&rateTarget{rate: hostRate}, &rateTarget{rate: vmRate}, io.Discard)
	runs := 0
	env.OnRun = func(Step, CellRun) {
		if runs++; runs == 48 {
			cancel()
		}
	}
	_, err = Execute(ctx, s, dir, env)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, dir.Run.Looks, "stopped before the first look was planned")
	dir.Unlock()

	d, s2, err := ResumeRun(dir.Path, time.Now())
	require.NoError(t, err)
	defer d.Unlock()
	host, vm := &rateTarget{rate: hostRate}, &rateTarget{rate: vmRateTight}
	out, err := Execute(context.Background(), s2, d, looksEnv(host, vm, io.Discard))
	require.NoError(t, err)
	assert.Empty(t, host.runs)
	assert.Len(t, vm.runs, 12, "the look's block alone")
	assert.Equal(t, 48, out.Stats.Skipped)
	require.Len(t, d.Run.Looks, 1)
	assert.Equal(t, 60, d.Run.Planned)
}

// A block goes from the fewest repeats its cells have to what the verdict
// asks, never past the spec's cap; a verdict that asks for nothing more,
// or for repeats its cells have, adds no block.
func TestNextLook(t *testing.T) {
	s := looksSpec(t, "max_repeats: 15\n")
	var samples []results.Sample
	for _, target := range s.Targets {
		for _, class := range []int{9, 33} {
			for _, threads := range []int{1, 2} {
				for r := 1; r <= 6; r++ {
					samples = append(samples, results.Sample{Target: target, Workload: "fp", QoS: class, Threads: threads, Repeat: r})
				}
			}
		}
	}
	undecided := func(m *analysis.MoreRepeats) analysis.Verdict {
		v := analysis.Verdict{MoreRepeats: m}
		v.VM = analysis.Sensitivity{Target: spec.TargetVM, Workload: "fp", High: 33, Low: 9}
		v.Reason = analysis.Reason{Kind: analysis.ReasonCrossesEdge, VM: spec.TargetVM}
		return v
	}
	// A block says why its verdict is undecided in words.
	const wide = "the vm ratio's interval crosses the band's edge: more repeats would tell"
	now := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	lk := nextLook(s, 1, 2, 3, []analysis.Verdict{undecided(&analysis.MoreRepeats{Threads: []analysis.RepeatsTo{{Threads: 2, Repeats: 30}, {Threads: 1, Repeats: 30}}, Host: true})}, samples, nil, now)
	require.NotNil(t, lk)
	assert.Equal(t, []results.LookBlock{{Workload: "fp", QoS: []int{33, 9}, Threads: []int{1, 2}, Targets: []string{spec.TargetHost, spec.TargetVM}, From: 7, To: 15, Reason: wide}}, lk.Blocks)
	assert.Equal(t, 9*8, lk.Added, "repeats 7-15 of 8 cells")
	assert.Equal(t, 48+72, lk.Planned)
	assert.Equal(t, now, lk.At)

	assert.Nil(t, nextLook(s, 1, 2, 3, []analysis.Verdict{undecided(nil)}, samples, nil, now), "decided: no block")
	apart := nextLook(s, 1, 2, 3, []analysis.Verdict{undecided(&analysis.MoreRepeats{Threads: []analysis.RepeatsTo{{Threads: 2, Repeats: 12}, {Threads: 1, Repeats: 15}}})}, samples, nil, now)
	require.NotNil(t, apart)
	assert.Equal(t, []results.LookBlock{
		{Workload: "fp", QoS: []int{33, 9}, Threads: []int{2}, Targets: []string{spec.TargetVM}, From: 7, To: 12, Reason: wide},
		{Workload: "fp", QoS: []int{33, 9}, Threads: []int{1}, Targets: []string{spec.TargetVM}, From: 7, To: 15, Reason: wide},
	}, apart.Blocks, "thread counts at different looks: a block for each")
	assert.Nil(t, nextLook(s, 1, 2, 3, []analysis.Verdict{undecided(&analysis.MoreRepeats{Threads: []analysis.RepeatsTo{{Threads: 2, Repeats: 6}}})}, samples, nil, now), "the cells have what it asks")
}

// A dry run of a resume knows the blocks the run's looks added: a run
// stopped in its block has the block's missing cell runs left to make.
func TestDryRunOfAResumeHoldsTheLooks(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir, s, err := CreateRun(t.TempDir(), looksSpec(t, ""), time.Now())
	require.NoError(t, err)
	_, err = Execute(context.Background(), s, dir, looksEnv(&rateTarget{rate: hostRate}, &rateTarget{rate: vmRate, failAt: 24 + 5}, io.Discard))
	require.Error(t, err)
	dir.Unlock()
	d, err := PlanDryRun(s, guestvm.Env{Accel: "tcg"}, dir.Path, nil)
	require.NoError(t, err)
	assert.Equal(t, 48+4, d.Done, "the planned cell runs and the block's first four")
	require.Len(t, d.Cells, 8)
	for _, c := range d.Cells {
		assert.Equal(t, spec.TargetVM, c.Target)
		assert.Equal(t, 2, c.Threads)
		assert.GreaterOrEqual(t, c.Repeat, 7)
	}
}

// A block's repeats start after the fewest its cells have, each set of a
// workload's parameters counted alone: with 6 repeats at loops 10 and 9 at
// loops 20, the block starts at 7, not at 10, which would leave repeats
// 7-9 of loops 10 unmeasured.
func TestNextLookCountsEachSetOfParameters(t *testing.T) {
	s, err := spec.ParseSpec([]byte("name: looks\ntargets: [host, vm]\nmatrix: [{workload: fp, qos: [9, 33], threads: [1], loops: 10}, {workload: fp, qos: [9, 33], threads: [1], loops: 20}]\nrepeats: 6\nmax_repeats: 15\nseed: 1\ntelemetry_ms: 0\n"), "looks")
	require.NoError(t, err)
	var recs []results.Record
	for loops, n := range map[uint64]int{10: 6, 20: 9} {
		p := catalog.Params{Loops: loops}
		for _, target := range s.Targets {
			for _, class := range []int{9, 33} {
				for r := 1; r <= n; r++ {
					recs = append(recs, results.Record{Params: &p, Sample: results.Sample{Target: target, Workload: "fp", QoS: class, Threads: 1, Repeat: r}})
				}
			}
		}
	}
	samples := results.Samples(recs)
	assert.NotEmpty(t, samples[0].CellParams, "the two sets tell the cells apart")
	v := analysis.Verdict{MoreRepeats: &analysis.MoreRepeats{Threads: []analysis.RepeatsTo{{Threads: 1, Repeats: 12}}}, Reason: analysis.Reason{Kind: analysis.ReasonCrossesEdge, VM: spec.TargetVM}}
	v.VM = analysis.Sensitivity{Target: spec.TargetVM, Workload: "fp", High: 33, Low: 9}
	lk := nextLook(s, 1, 2, 3, []analysis.Verdict{v}, samples, nil, time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC))
	require.NotNil(t, lk)
	require.Len(t, lk.Blocks, 1)
	assert.Equal(t, 7, lk.Blocks[0].From)
	assert.Equal(t, 12, lk.Blocks[0].To)
}

// TestLookEndTextCountsEachThreadCount: a run whose second look added
// repeats at 1 and 2 threads and whose third at 2 threads only says 12
// repeats at 1 thread and 18 at 2, as the verdict does, not "18 repeats at
// 1 and 2 threads" (the most any block reached, over every thread count any
// block named); a verdict no block was added for gets no line.
func TestLookEndTextCountsEachThreadCount(t *testing.T) {
	block := func(threads []int, from, to int) results.LookBlock {
		return results.LookBlock{Workload: "fp", QoS: []int{33, 9}, Threads: threads, Targets: []string{spec.TargetVM}, From: from, To: to}
	}
	looks := []results.Look{
		{Index: 2, Of: 3, Blocks: []results.LookBlock{block([]int{1, 2}, 7, 12)}},
		{Index: 3, Of: 3, Blocks: []results.LookBlock{block([]int{2}, 13, 18)}},
	}
	levels := analysis.LookLevels([]int{6, 12, 18})
	fp := analysis.Verdict{Outcome: analysis.Subsumed, Looks: []analysis.ThreadLook{
		{Threads: 1, Repeats: 12, Look: analysis.Look{Index: 2, Of: 3, Level: levels[1]}},
		{Threads: 2, Repeats: 18, Look: analysis.Look{Index: 3, Of: 3, Level: levels[2]}},
	}}
	fp.VM.Workload = "fp"
	other := fp
	other.VM.Workload = "int"
	assert.Equal(t, []string{"looks: fp yes after 12 repeats at 1 thread and 18 at 2 threads, 3 looks of 3"},
		lookEndText([]analysis.Verdict{fp, other}, looks))
	assert.Empty(t, lookEndText([]analysis.Verdict{fp}, nil), "no looks, no line")
}
