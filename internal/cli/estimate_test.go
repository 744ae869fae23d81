package cli

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// compareA is the machine testdata/results/compare-a was measured on, as
// its run.json names it.
var compareA = experiment.Machine{Hostname: "vm", CPUModel: "AMD EPYC"}

// earlierResults copies the testdata results directories names into a
// results location of their own, and returns its run directories.
func earlierResults(t *testing.T, names ...string) []string {
	t.Helper()
	parent := t.TempDir()
	for i, name := range names {
		src, err := filepath.Abs(filepath.Join("..", "..", "testdata", "results", name))
		require.NoError(t, err)
		dst := filepath.Join(parent, "contention-2026112"+string(rune('0'+i))+"T000000Z")
		require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	}
	return results.Paths(parent)
}

// loopSpec is fp of loops per thread at 1 and 2 threads, both classes, on
// targets, with spinners contention spinners.
func loopSpec(t *testing.T, loops uint64, spinners int, targets ...string) spec.Spec {
	t.Helper()
	s := spec.Spec{Name: "loops", Targets: targets, VM: spec.VMSpec{CPUs: 2}, Repeats: 3, Order: spec.OrderSequential,
		Contention: contention.SpinnerCount(spinners),
		Matrix:     []spec.MatrixEntry{{Workload: "fp", QoS: []qos.Class{qos.Background, qos.UserInteractive}, Threads: []int{1, 2}, Params: catalog.Params{Loops: loops}}}}
	require.NoError(t, s.Validate())
	return s
}

// rateRange is the slowest and fastest rate testdata's records of the host
// or VM cell of fp at class and threads hold in dir.
func rateRange(t *testing.T, dir, target string, class qos.Class, threads int) (lo, hi float64) {
	t.Helper()
	d, err := results.Open(dir)
	require.NoError(t, err)
	recs, _, err := d.ReadSamples()
	require.NoError(t, err)
	lo, hi = math.Inf(1), 0
	for _, r := range recs {
		if r.Target == target && r.Workload == "fp" && r.QoS == int(class) && r.Threads == threads {
			lo, hi = min(lo, r.Rate), max(hi, r.Rate)
		}
	}
	require.Positive(t, hi)
	return lo, hi
}

// A loop cell no earlier run measured at its loops gets its time from the
// rate an earlier run on this machine measured at the same class, threads
// and contention (compare-a's cells of 1 s), and names that run; a run on
// another machine, or at another contention, counts for nothing, and the
// plan says why the time is unknown.
func TestDryRunEstimatesLoopsFromEarlierRates(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dirs := earlierResults(t, "compare-a")
	s := loopSpec(t, 1e8, 2, spec.TargetHost, spec.TargetVM)
	env := guestvm.Env{Accel: "tcg"}

	d, err := experiment.PlanDryRunFrom(s, env, "", experiment.Earlier{Dirs: dirs, Host: compareA})
	require.NoError(t, err)
	require.Len(t, d.Series, 8)
	assert.Zero(t, d.Estimate.Unknown)
	assert.Zero(t, d.Estimate.Calibrated)
	for _, sp := range d.Series {
		c := sp.Cell
		lo, hi := rateRange(t, dirs[0], c.Target, c.QoS, c.Threads)
		assert.Equal(t, dirs[0], sp.Source, c.String())
		assert.Equal(t, "its rate in cells of 1s in "+dirs[0], sp.How, c.String())
		assert.GreaterOrEqual(t, sp.Each, time.Duration(1e8/hi*1e9), "%s: 1e8 loops at its fastest thread's rate at most", c)
		assert.LessOrEqual(t, sp.Each, time.Duration(1e8/lo*1e9), "%s: at its slowest thread's rate at least", c)
	}
	var out bytes.Buffer
	printDryRun(&out, d, "loops", nil)
	assert.Contains(t, oneSpaced(out.String()), "[1] its rate in cells of 1s in "+dirs[0]+" ")
	assert.NotContains(t, out.String(), "unknown  ", "no cell of unknown time")

	// Measured on another machine: passed over.
	d, err = experiment.PlanDryRunFrom(s, env, "", experiment.Earlier{Dirs: dirs, Host: experiment.Machine{Hostname: "vm", CPUModel: "Apple M1"}})
	require.NoError(t, err)
	assert.Equal(t, 24, d.Estimate.Unknown)
	out.Reset()
	printDryRun(&out, d, "loops", nil)
	assert.NotContains(t, out.String(), dirs[0]+"\n")
	plan := oneSpaced(out.String())
	assert.Contains(t, plan, "1 host fp 9 background 1 loops 1e8 3 unknown [1] 2 vm fp 9 background 1 loops 1e8 3 unknown [2]")
	assert.Contains(t, plan, "[1] no earlier run here measured it with 2 contention spinners, which a calibration cannot tell [2]")
	assert.Contains(t, plan, "[2] no earlier run here measured fp in a tcg VM and on the host with 2 contention spinners, to scale by ")

	// Without contention the starved background cells of compare-a tell
	// nothing: not taken.
	d, err = experiment.PlanDryRunFrom(loopSpec(t, 1e8, 0, spec.TargetHost), env, "", experiment.Earlier{Dirs: dirs, Host: compareA})
	require.NoError(t, err)
	assert.Equal(t, 12, d.Estimate.Unknown)
	assert.Equal(t, "no earlier run here measured it without contention", d.Series[0].Why)
}

// With no earlier run to take a loop cell's time from, a brief calibration
// on this host gives it, labelled as such; a VM cell's is the host's
// times the VM's factor an earlier run on this machine measured with the
// same accelerator, naming that run, and unknown with the reason when
// none did.
func TestDryRunCalibratesWhatNoRunMeasured(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	calibrations := 0
	calibrate := func(w string) (float64, time.Duration, error) {
		calibrations++
		require.Equal(t, "fp", w)
		return 1e8, 50 * time.Millisecond, nil
	}
	s := loopSpec(t, 2e8, 0, spec.TargetHost, spec.TargetVM)
	s.Matrix[0].Threads = []int{1}
	env := guestvm.Env{Accel: "tcg"}

	d, err := experiment.PlanDryRunFrom(s, env, "", experiment.Earlier{Calibrate: calibrate})
	require.NoError(t, err)
	assert.Equal(t, 1, calibrations, "one calibration per workload")
	require.Len(t, d.Series, 4)
	host, vm := d.Series[0], d.Series[1]
	assert.Equal(t, 2*time.Second, host.Each, "2e8 loops at the calibrated 1e8 a second")
	assert.Equal(t, "calibration", host.Source)
	assert.Equal(t, "calibration: fp ran 50ms here at the default class", host.How)
	assert.Zero(t, vm.Each)
	assert.Equal(t, "no earlier run here measured fp in a tcg VM and on the host without contention, to scale by", vm.Why)
	assert.Equal(t, 6*time.Second*2, d.Estimate.Calibrated, "the host's 6 runs of 2 s at both classes")
	var out bytes.Buffer
	printDryRun(&out, d, "loops", nil)
	assert.Contains(t, out.String(), "estimate:   12s estimated (12s of it from a brief calibration on this host, not a measurement)")

	// An earlier run without contention measured fp at 1 thread on the
	// host at 4e7 a second and in the VM at 1e7: the VM takes 4 times the
	// host's time, at any loops.
	parent := t.TempDir()
	earlier := loopSpec(t, 1e6, 0, spec.TargetHost, spec.TargetVM)
	dir, _, err := experiment.CreateRun(parent, earlier, time.Now())
	require.NoError(t, err)
	dir.Run.Machines, err = results.NewRecorded(map[string]hv.MachineInfo{spec.TargetVM: {Accel: "tcg"}})
	require.NoError(t, err)
	require.NoError(t, dir.SaveRun())
	log, _, err := dir.OpenSamples()
	require.NoError(t, err)
	cells, _ := experiment.Plan(earlier)
	for _, c := range cells {
		if c.Threads == 1 {
			r := recordOf(c, 1)
			r.Rate = map[string]float64{spec.TargetHost: 4e7, spec.TargetVM: 1e7}[c.Target]
			require.NoError(t, log.Append(r))
		}
	}
	require.NoError(t, log.Close())
	dir.Unlock()

	s.Matrix[0].Threads = []int{2} // measured by none: the host's is calibrated
	d, err = experiment.PlanDryRunFrom(s, env, "", experiment.Earlier{Dirs: []string{dir.Path}, Calibrate: calibrate})
	require.NoError(t, err)
	host, vm = d.Series[0], d.Series[1]
	require.Equal(t, spec.TargetVM, vm.Cell.Target)
	assert.Equal(t, "calibration", vm.Source)
	assert.Equal(t, time.Duration(float64(host.Each)*4), vm.Each)
	assert.Equal(t, host.How+", x 4 (vm/host in "+dir.Path+")", vm.How)
	assert.Zero(t, d.Estimate.Unknown)
}
