package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// snapshot lists every file under dir with its size, to show that a
// command wrote nothing there.
func snapshot(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			out[p] = info.Size()
		}
		return err
	}))
	return out
}

// tripwire is an executable that, if anything runs it, leaves a file
// behind.
func tripwire(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\ntouch \"$0.ran\"\nexit 1\n"), 0o755))
	return p
}

// run --dry-run prints the plan and does nothing: no results directory, no
// VM (QEMU is never run), no agent, no image build or kernel fetch, no
// file written anywhere.
func TestRunDryRunHasNoSideEffects(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	qemu := tripwire(t, bin, "qemu-system-x86_64")
	tripwire(t, bin, "qemu-system-aarch64")
	agent := tripwire(t, bin, "qoslab-agent")
	t.Setenv("PATH", bin)
	work := t.TempDir()
	t.Chdir(work)
	env := map[string]string{"HOME": home, "XDG_CACHE_HOME": filepath.Join(home, "cache"), "XDG_STATE_HOME": filepath.Join(home, "state")}
	before := snapshot(t, home)

	out, stderr, code := runRoot(t, env, "run", "--default", "contention", "--quick", "--dry-run", "--agent", agent)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, before, snapshot(t, home), "nothing written, cached or fetched")
	entries, err := os.ReadDir(work)
	require.NoError(t, err)
	assert.Empty(t, entries, "no results directory")
	assert.NoFileExists(t, qemu+".ran", "no VM booted, QEMU not even asked its version")
	assert.NoFileExists(t, agent+".ran", "no agent started")

	for _, want := range []string{
		"dry run of contention (built in): nothing is measured, started or written",
		"targets:    host, vm",
		"is not built",                         // the image, which a run would need built first
		"vm size:    2 vCPUs, 1024 MiB memory", // the spec's 2 vCPUs, the default memory
		"contention: ",
		"8 cells (6 repeats), 48 timed runs",
		"250ms  6     250ms  its duration", // quick's fixed-duration cells, exactly
		"estimate:   12s measured",
		"looks:      up to 18 repeats per cell when a verdict is undecided: 3 looks",
		"longest:    every cell at 18 repeats (144 cell runs)",
		filepath.Join("qoslab-results", "contention-<UTC time>", "samples.jsonl"),
		"order of repeat 1 (each repeat is shuffled anew):",
	} {
		assert.Contains(t, out, want)
	}
}

// A fixed-work cell's time comes from an earlier run that measured it;
// without one (and no calibration) it is unknown, with the reason, never
// made up.
func TestDryRunEstimatesFromEarlierRuns(t *testing.T) {
	parent := t.TempDir()
	s := spec.Spec{Name: "cal", Targets: []string{"host"}, VM: spec.VMSpec{CPUs: 1}, Repeats: 3, Order: spec.OrderSequential,
		Matrix: []spec.MatrixEntry{{Workload: "fp", QoS: []qos.Class{qos.Background}, Threads: []int{1, 2}, Params: catalog.Params{Loops: 1e6}}}}
	require.NoError(t, s.Validate())

	d, err := experiment.PlanDryRunFrom(s, guestvm.Env{}, "", experiment.Earlier{})
	require.NoError(t, err)
	assert.Equal(t, 6, d.Estimate.Unknown)
	assert.Zero(t, d.Estimate.Known)

	// An earlier run measured threads=1 at 2 s a run (median of 1, 2, 9 s).
	dir, _, err := experiment.CreateRun(parent, s, time.Now())
	require.NoError(t, err)
	log, _, err := dir.OpenSamples()
	require.NoError(t, err)
	cells, _ := experiment.Plan(s)
	for i, secs := range []int64{1, 2, 9} {
		c := cells[2*i] // threads=1 of repeat i+1
		require.Equal(t, 1, c.Threads)
		require.NoError(t, log.Append(recordOf(c, secs)))
	}
	require.NoError(t, log.Close())
	dir.Unlock()

	d, err = experiment.PlanDryRunFrom(s, guestvm.Env{}, "", experiment.Earlier{Dirs: []string{dir.Path}})
	require.NoError(t, err)
	assert.Equal(t, 3, d.Estimate.Unknown, "threads=2 was never measured")
	assert.Equal(t, 6*time.Second, d.Estimate.Known, "3 runs of the median 2 s")
	require.Len(t, d.Series, 2)
	assert.Equal(t, 2*time.Second, d.Series[0].Each)
	assert.Equal(t, dir.Path, d.Series[0].Source)
	assert.Zero(t, d.Series[1].Each)

	streams, out, _ := testIO()
	printDryRun(streams.Out, d, "cal", d.Writes(parent, ""))
	plan := oneSpaced(out.String())
	assert.Contains(t, plan, "6s measured for the cell runs whose time is known, and 3 cell runs of unknown length")
	assert.Contains(t, plan, "3 unknown [2] [1] "+dir.Path+" [2] no earlier run here measured it without contention estimate:", "the row names its note, under the table")
}

// recordOf is the one record of a one-thread run of c that lasted secs.
func recordOf(c experiment.PlannedRun, secs int64) results.Record {
	s := results.Sample{Target: c.Target, Workload: c.Workload, QoS: int(c.QoS), Threads: c.Threads, Repeat: c.Repeat,
		StartNs: 0, EndNs: secs * 1e9, Work: 1e6, Unit: "loops", Rate: 1e6 / float64(secs), QoSApplied: int(c.QoS), QoSFull: true}
	return results.Record{Cell: c.SeriesKey(), RunRecords: 1, Sample: s, RecordedAt: time.Now()}
}

// bench --dry-run starts no agent and no spinner and writes nothing.
func TestBenchDryRunStartsNothing(t *testing.T) {
	t.Chdir(t.TempDir())
	o, err := parseBench(t, nil, "--workload", "fp", "--threads", "1-2", "--duration", "1s", "--contention", "1", "--save", "--dry-run")
	require.NoError(t, err)
	streams, out, _ := testIO()
	o.IO = streams
	o.StartTarget = func(context.Context, string, spec.Spec, io.Writer) (experiment.Target, []string, error) {
		t.Fatal("a dry run started a target")
		return nil, nil, nil
	}
	o.StartContention = func(context.Context, int) (*contention.Contention, error) {
		t.Fatal("a dry run started contention")
		return nil, nil
	}
	require.NoError(t, benchRun(context.Background(), o))
	_, err = os.Stat("qoslab-results")
	assert.True(t, os.IsNotExist(err), "--save with --dry-run creates no results directory")
	assert.Contains(t, out.String(), "estimate:   24s measured", "2 cells x 2 classes x 6 repeats of 1 s")
	assert.Contains(t, out.String(), "1 spinner thread at the default class on the host")
	assert.True(t, strings.Contains(out.String(), "bench-<UTC time>"), "what --save would write")
}

// A dry run shows the cap of repeats a run may add while a verdict is
// undecided, and the longest the run could take: every cell at the cap.
func TestDryRunShowsTheLooks(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s, err := spec.DefaultSpec("contention")
	require.NoError(t, err)
	s = spec.Shrink(s)
	d, err := experiment.PlanDryRun(s, guestvm.Env{Accel: "tcg"}, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []int{6, 12, 18}, d.Looks)
	assert.Equal(t, 144, d.LongestRuns)
	var out bytes.Buffer
	printDryRun(&out, d, "contention", nil)
	assert.Contains(t, out.String(), "looks:      up to 18 repeats per cell when a verdict is undecided: 3 looks (at 6, 12, 18 repeats)\n")
	assert.Contains(t, out.String(), "estimate:   12s measured\n", "the planned estimate stays")
	assert.Contains(t, out.String(), "longest:    every cell at 18 repeats (144 cell runs): 36s measured, and what is unknown on top\n",
		"8 cells of 250ms at 18 repeats")

	s.MaxRepeats = 0
	d, err = experiment.PlanDryRun(s, guestvm.Env{Accel: "tcg"}, "", nil)
	require.NoError(t, err)
	out.Reset()
	printDryRun(&out, d, "contention", nil)
	assert.Contains(t, out.String(), "looks:      one: the planned repeats decide (max_repeats 0)\n")
	assert.NotContains(t, out.String(), "longest:")

	s.MaxRepeats, s.Targets = 18, []string{spec.TargetHost}
	d, err = experiment.PlanDryRun(s, guestvm.Env{}, "", nil)
	require.NoError(t, err)
	out.Reset()
	printDryRun(&out, d, "contention", nil)
	assert.Contains(t, out.String(), "looks:      one: no verdict to decide, the run does not measure both host and vm\n")
}

// oneSpaced is s with every run of white space one space: a plan's words
// whatever the width wrapped.
func oneSpaced(s string) string { return strings.Join(strings.Fields(s), " ") }
