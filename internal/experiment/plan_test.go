package experiment

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/workload/catalog"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/spec"
)

func defaultSpec(t *testing.T, seed *uint64) spec.Spec {
	t.Helper()
	s, err := spec.DefaultSpec("subsumption")
	require.NoError(t, err)
	s.Seed = seed
	return s
}

func seedOf(v uint64) *uint64 { return &v }

func keys(cells []PlannedRun) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.Key()
	}
	return out
}

func TestPlanSameSeedSamePlan(t *testing.T) {
	s := defaultSpec(t, seedOf(42))
	a, seedA := Plan(s)
	b, seedB := Plan(s)
	assert.Equal(t, uint64(42), seedA)
	assert.Equal(t, seedA, seedB)
	assert.Equal(t, a, b)
}

// Without a seed the plan picks one, and that seed rebuilds the plan.
func TestPlanRecordsPickedSeed(t *testing.T) {
	s := defaultSpec(t, nil)
	a, seedA := Plan(s)
	_, seedB := Plan(s)
	assert.NotEqual(t, seedA, seedB, "each unseeded plan picks its own seed")
	again, seed := Plan(defaultSpec(t, &seedA))
	assert.Equal(t, seedA, seed)
	assert.Equal(t, a, again)
}

func TestPlanSeedsShuffleDifferently(t *testing.T) {
	a, _ := Plan(defaultSpec(t, seedOf(1)))
	b, _ := Plan(defaultSpec(t, seedOf(2)))
	assert.NotEqual(t, keys(a), keys(b))
	assert.ElementsMatch(t, keys(a), keys(b), "the same runs, in another order")

	// Each repeat is shuffled on its own.
	n := len(a) / 3
	series := func(cells []PlannedRun) []string {
		var out []string
		for _, c := range cells {
			out = append(out, c.SeriesKey())
		}
		return out
	}
	assert.NotEqual(t, series(a[:n]), series(a[n:2*n]))
}

// Every (series, target, repeat) runs exactly once, repeats outermost.
func TestPlanEveryRunOnce(t *testing.T) {
	for _, order := range []string{spec.OrderInterleaved, spec.OrderSequential} {
		t.Run(order, func(t *testing.T) {
			s := defaultSpec(t, seedOf(7))
			s.Order = order
			cells, _ := Plan(s)
			// fp: 2 classes x 4 thread counts; compress, decompress: 2 classes each.
			const series = 2*4 + 2 + 2
			require.Len(t, cells, series*2*spec.DefaultRepeats)
			count := map[string]int{}
			lastRepeat := 1
			for _, c := range cells {
				require.True(t, c.Timed())
				count[c.Key()]++
				assert.GreaterOrEqual(t, c.Repeat, lastRepeat, "repeats are outermost")
				lastRepeat = c.Repeat
			}
			assert.Len(t, count, len(cells), "keys are unique")
			for i, e := range s.Matrix {
				for _, c := range entrySeries(e, i) {
					for _, target := range s.Targets {
						for r := 1; r <= s.Repeats; r++ {
							c.Target, c.Repeat = target, r
							assert.Equal(t, 1, count[c.Key()], c.Key())
						}
					}
				}
			}
		})
	}
}

// Interleaved: each cell runs on both targets back to back, the first
// target alternating in pairs (host vm, vm host, ...) and starting the
// other way on the next repeat.
func TestPlanInterleavedTargetsAlternate(t *testing.T) {
	cells, _ := Plan(defaultSpec(t, seedOf(3)))
	require.Zero(t, len(cells)%2)
	first := map[string]int{}
	for i := 0; i < len(cells); i += 2 {
		a, b := cells[i], cells[i+1]
		require.Equal(t, a.SeriesKey()[len(a.Target):], b.SeriesKey()[len(b.Target):], "a pair is one cell on two targets")
		require.Equal(t, a.Repeat, b.Repeat)
		require.NotEqual(t, a.Target, b.Target)
		pos := (i / 2) % 12
		want := spec.TargetHost
		if (pos+a.Repeat-1)%2 == 1 {
			want = spec.TargetVM
		}
		assert.Equal(t, want, a.Target, "pair %d of repeat %d", pos, a.Repeat)
		first[a.Target]++
	}
	assert.Equal(t, first[spec.TargetHost], first[spec.TargetVM], "each target goes first equally often")
}

func TestPlanSequential(t *testing.T) {
	s := spec.Spec{Name: "seq", Targets: []string{spec.TargetVM, spec.TargetHost}, VM: spec.VMSpec{CPUs: 1}, Repeats: 2, Order: spec.OrderSequential,
		Matrix: []spec.MatrixEntry{{Workload: "int", QoS: []qos.Class{qos.Utility, qos.Background}, Threads: []int{2, 1}, Params: catalog.Params{Loops: 5}}}}
	require.NoError(t, s.Validate())
	cells, seed := Plan(s)
	assert.Zero(t, seed, "a sequential plan draws nothing")
	var got []string
	for _, c := range cells {
		got = append(got, fmt.Sprintf("%s %d %d r%d", c.Target, c.QoS, c.Threads, c.Repeat))
	}
	assert.Equal(t, []string{
		"vm 17 2 r1", "host 17 2 r1", "vm 17 1 r1", "host 17 1 r1", "vm 9 2 r1", "host 9 2 r1", "vm 9 1 r1", "host 9 1 r1",
		"vm 17 2 r2", "host 17 2 r2", "vm 17 1 r2", "host 17 1 r2", "vm 9 2 r2", "host 9 2 r2", "vm 9 1 r2", "host 9 1 r2",
	}, got)

	s.Seed = seedOf(9)
	again, seed := Plan(s)
	assert.Equal(t, uint64(9), seed)
	assert.Equal(t, cells, again, "sequential order ignores the seed")
}

// Warm-ups run just before a cell's first timed run on the same target,
// once per cell and target, and are marked as untimed.
func TestPlanWarmups(t *testing.T) {
	s := defaultSpec(t, seedOf(5))
	s.Warmup = 2
	cells, _ := Plan(s)
	require.Len(t, cells, 12*2*spec.DefaultRepeats+12*2*2)
	warm := 0
	for i, c := range cells {
		if c.Timed() {
			continue
		}
		warm++
		assert.Zero(t, c.Repeat)
		assert.True(t, strings.HasSuffix(c.Key(), fmt.Sprintf(" warmup=%d", c.Warmup)), c.Key())
		// The timed run it warms up follows, after the remaining warm-ups.
		next := cells[i+1+s.Warmup-c.Warmup]
		assert.True(t, next.Timed())
		assert.Equal(t, 1, next.Repeat)
		assert.Equal(t, c.SeriesKey(), next.SeriesKey())
	}
	assert.Equal(t, 12*2*2, warm)
	for _, c := range cells[len(cells)-12*2*(spec.DefaultRepeats-1):] {
		assert.True(t, c.Timed(), "no warm-ups after the first repeat")
	}

	unique := map[string]bool{}
	for _, k := range keys(cells) {
		unique[k] = true
	}
	assert.Len(t, unique, len(cells))
}

func TestPlanSingleTarget(t *testing.T) {
	s := defaultSpec(t, seedOf(1))
	s.Targets = []string{spec.TargetVM}
	cells, _ := Plan(s)
	require.Len(t, cells, 12*spec.DefaultRepeats)
	for _, c := range cells {
		assert.Equal(t, spec.TargetVM, c.Target)
	}
}

// Keys are part of the results files: their format must not drift.
func TestCellKey(t *testing.T) {
	fp := PlannedRun{Target: "host", Workload: "fp", QoS: qos.Background, Threads: 4, Repeat: 2, Entry: 3, Params: catalog.Params{Loops: 2e8}}
	assert.Equal(t, "host fp qos=9 threads=4 loops=200000000", fp.SeriesKey())
	assert.Equal(t, "host fp qos=9 threads=4 loops=200000000 repeat=2", fp.Key())
	assert.Equal(t, "host: fp qos=background threads=4 repeat 2", fp.String())

	z := PlannedRun{Target: "vm", Workload: "compress", QoS: qos.UserInteractive, Threads: 1, Warmup: 1, Params: catalog.Params{SizeBytes: 1 << 30, Ratio: 2.5, Codec: "zstd", Level: 3, Sink: "block", SinkPath: "/dev/vd b"}}
	assert.False(t, z.Timed())
	assert.Equal(t, `vm compress qos=33 threads=1 size=1073741824 ratio=2.5 codec=zstd level=3 sink=block sink_path="/dev/vd b" warmup=1`, z.Key())
	assert.Equal(t, "vm: compress qos=user-interactive threads=1 warm-up 1", z.String())

	fp.Entry = 0
	assert.Equal(t, "host fp qos=9 threads=4 loops=200000000 repeat=2", fp.Key(), "the entry's index is not part of the key")
}

// tcgSeconds estimates a plan's wall time on this project's 2-core machine
// whose VM runs under TCG with 2 vCPUs, from what was measured there (the
// specs' comments and Quick's): guest fp and int 1.3e7 loops/s on one
// thread, 2.3e7 on more; mmul 1.8e4 a second per vCPU; pi 1.5e7 iterations
// a second per vCPU; procs the fp rate plus 0.16 s to start each process;
// host fp 2.8e8 per thread on up to 2 cores; wall seconds per MiB (codec
// work plus input generation and verification) of 0.22 compressing and
// 0.12 decompressing in the guest, 0.02 either way on the host; 0.4 s of
// orchestration per cell run (request, telemetry); 5 s to boot.
func tcgSeconds(cells []PlannedRun) float64 {
	total := 5.0
	for _, c := range cells {
		total += 0.4
		if c.Duration > 0 {
			total += c.Duration.Seconds()
			continue
		}
		mib := float64(c.SizeBytes) / (1 << 20)
		work := float64(c.Loops) * float64(c.Threads)
		vcpus := float64(min(c.Threads, 2))
		guest := c.Target == spec.TargetVM
		switch {
		case c.Workload == "pi" && guest:
			total += float64(c.Loops) / (vcpus * 1.5e7)
		case c.Workload == "mmul" && guest:
			total += work / (vcpus * 1.8e4)
		case c.Workload == "procs" && guest:
			total += work/2.3e7 + 0.16*float64(c.Threads)
		case (c.Workload == "fp" || c.Workload == "int") && guest && c.Threads == 1:
			total += work / 1.3e7
		case (c.Workload == "fp" || c.Workload == "int") && guest:
			total += work / 2.3e7
		case catalog.IsCompression(c.Workload) && !guest:
			total += mib * 0.02
		case c.Workload == "compress":
			total += mib * 0.22
		case c.Workload == "decompress":
			total += mib * 0.12
		default:
			total += work / (vcpus * 2.8e8) // host compute
		}
	}
	return total
}

// The default runs within two hours on this machine under TCG (6 repeats
// of 1 GiB compression in an emulated guest; minutes with KVM or hvf).
func TestDefaultSpecBudget(t *testing.T) {
	s := defaultSpec(t, seedOf(1))
	full, _ := Plan(s)
	assert.Less(t, tcgSeconds(full), 2*60*60.0)
	assert.Greater(t, tcgSeconds(full), 60*60.0, "the model is off, or the default measures too little")
	t.Logf("estimated under TCG: full %.0f min", tcgSeconds(full)/60)
}

// --quick means minutes: every built-in spec's --quick is estimated well
// under 2 minutes on a 2-CPU machine with a TCG guest (the specs' comments
// give the times measured), with the shape kept: every class, the repeats.
func TestQuickBudgetOfEveryBuiltInSpec(t *testing.T) {
	for _, name := range spec.DefaultSpecNames() {
		s, err := spec.DefaultSpec(name)
		require.NoError(t, err)
		s.Seed = seedOf(1)
		s.VM.CPUs = min(s.VM.CPUs, 2) // the qemu backend gives at most the host's CPUs
		q := spec.Shrink(s)
		cells, _ := Plan(q)
		est := tcgSeconds(cells)
		t.Logf("%s --quick: %d cell runs, estimated %.0f s under TCG", name, len(cells), est)
		assert.Less(t, est, 100.0, "%s --quick must stay well under 2 minutes", name)
		assert.Equal(t, s.Repeats, q.Repeats, name)
		for i, e := range q.Matrix {
			assert.Equal(t, s.Matrix[i].QoS, e.QoS, "%s keeps its classes", name)
		}
	}
}
