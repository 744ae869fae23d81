package render

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
)

type findingsRef struct {
	Stragglers []struct {
		Source  string    `json:"source"`
		Threads int       `json:"threads"`
		Ends    []float64 `json:"ends_s"`
		Want    string    `json:"want"`
	} `json:"stragglers"`
	Batches []struct {
		Processes int       `json:"processes"`
		QoS       int       `json:"qos"`
		Ends      []float64 `json:"ends_s"`
		Want      string    `json:"want"`
	} `json:"batches"`
	Pi struct {
		Threads []int     `json:"threads"`
		Seconds []float64 `json:"seconds"`
		Want    string    `json:"want"`
	} `json:"pi"`
}

func loadFindingsRef(t *testing.T) findingsRef {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "analysis", "findings-reference.json"))
	require.NoError(t, err)
	var ref findingsRef
	require.NoError(t, json.Unmarshal(b, &ref))
	return ref
}

func all(analysis.Observation) bool { return true }

// The findings state the articles' patterns from their published numbers:
// a straggler of [allocation], the batches of [processes], the 4-thread
// optimum of [m1-qos].
func TestFindingsReproduceThePublishedPatterns(t *testing.T) {
	ref := loadFindingsRef(t)
	for _, s := range ref.Stragglers {
		var obs []analysis.Observation
		for _, e := range s.Ends {
			obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: s.Threads}, Repeat: 1,
				StartNs: 0, EndNs: int64(e * 1e9), Work: 1e7, Rate: 1e7 / e, Unit: "mmul"})
		}
		f := analysis.Stragglers(obs, all, analysis.StragglerThreshold)
		require.Len(t, f, 1, s.Source)
		assert.Equal(t, s.Want, FindingText(f[0]))
	}
	for _, b := range ref.Batches {
		var obs []analysis.Observation
		for _, e := range b.Ends {
			obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "procs", QoS: b.QoS, Threads: b.Processes}, Repeat: 1,
				EndNs: int64(e * 1e9), Work: 1e8, Rate: 1e8 / e, Unit: "loops"})
		}
		f := analysis.Batches(obs, all)
		require.Len(t, f, 1)
		assert.Equal(t, b.Want, FindingText(f[0]))
	}
	var obs []analysis.Observation
	for i, n := range ref.Pi.Threads {
		for range n {
			obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "pi", QoS: 33, Threads: n}, Repeat: 1,
				EndNs: int64(ref.Pi.Seconds[i] * 1e9), Work: 1e9 / float64(n), Rate: 1e9 / float64(n) / ref.Pi.Seconds[i], Unit: "iterations"})
		}
	}
	f := analysis.Scaling(analysis.Cells(obs), func(w string) bool { return w == "pi" })
	require.Len(t, f, 1)
	// The published pattern as one run per thread count can show it (4
	// threads the shortest, untested), then what qoslab derives: the rate
	// each added thread brought up to the best (1e9 iterations over 89.47,
	// 56.00 and 40.34 s at 1, 2 and 4 threads), and the steps past it.
	assert.Equal(t, ref.Pi.Want+"; up to 4 threads each added thread brought 4.54e+06 iterations/s [3.47e+06..6.68e+06] (Theil-Sen); past 4, the steps to 8, 10 threads changed it by -6.6e+06, +1.3e+05 iterations/s", FindingText(f[0]))
	assert.True(t, strings.HasPrefix(Finding(f[0]), "host pi qos=33: "+ref.Pi.Want))
}

// What is not a pattern is not called one: threads finishing together, one
// batch, a series whose every added thread pays.
func TestFindingsStayQuietWithoutAPattern(t *testing.T) {
	var obs []analysis.Observation
	for _, e := range []float64{2.03, 2.05, 2.10} {
		obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "vm", Workload: "mmul", QoS: 33, Threads: 3}, Repeat: 1, EndNs: int64(e * 1e9)})
	}
	assert.Empty(t, analysis.Stragglers(obs, all, analysis.StragglerThreshold), "3% apart is no straggler")

	obs = obs[:0]
	for i := range 8 {
		obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "vm", Workload: "procs", QoS: 9, Threads: 8}, Repeat: 1, EndNs: int64((4 + 0.05*float64(i)) * 1e9)})
	}
	assert.Empty(t, analysis.Batches(obs, all), "all finished together: one batch")

	obs = obs[:0]
	for _, n := range []int{1, 2, 3} {
		for r, w := range []float64{0.99, 1.01, 0.995, 1.005, 0.985, 1.015} {
			for range n {
				obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: n}, Repeat: r + 1, EndNs: 1e9, Work: w * 1e8, Rate: w * 1e8, Unit: "loops"})
			}
		}
	}
	f := analysis.Scaling(analysis.Cells(obs), func(string) bool { return false })
	require.Len(t, f, 1)
	assert.Contains(t, FindingText(f[0]), "best at 3 threads")
	assert.Contains(t, FindingText(f[0]), "every added thread still paid")
}

// A delay of a few hundredths is scheduler noise, whatever its share; a
// rate that levels off is said to stop paying, not to do worse.
func TestFindingsIgnoreNoise(t *testing.T) {
	var obs []analysis.Observation
	for _, e := range []float64{0.030, 0.030, 0.050} {
		obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 3}, Repeat: 1, EndNs: int64(e * 1e9)})
	}
	assert.Empty(t, analysis.Stragglers(obs, all, analysis.StragglerThreshold), "20 ms late is 67% of 30 ms, and still noise")

	obs = obs[:0]
	for _, n := range []int{1, 2, 3, 4} {
		rate := []float64{1e8, 2e8, 2.05e8, 1.98e8}[n-1]
		for range n {
			obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: n}, Repeat: 1, EndNs: 1e9, Work: rate / float64(n), Rate: rate / float64(n), Unit: "loops"})
		}
	}
	f := analysis.Scaling(analysis.Cells(obs), func(string) bool { return false })
	require.Len(t, f, 1)
	// The slope is of the part that still pays, 1 to 2 threads, never over
	// the plateau; past it, each step's change.
	assert.Equal(t, "adding threads stopped paying at 2 threads (2e+08 loops/s, within 10% of the best, 2.05e+08 loops/s at 3); up to 2 threads each added thread brought 1e+08 loops/s [1e+08..1e+08] (Theil-Sen); past 2, the steps to 3, 4 threads changed it by +5e+06, -7e+06 loops/s", FindingText(f[0]))
}

// Steps of different sizes (2, 3, 4 processes) are not batches, even
// with one completion left out.
func TestBatchesNeedEvenSteps(t *testing.T) {
	var obs []analysis.Observation
	for _, e := range []float64{1.0, 1.01, 2.0, 2.01, 2.02, 3.0, 3.01, 3.02, 3.03} {
		obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "vm", Workload: "procs", QoS: 9, Threads: 9}, Repeat: 1, EndNs: int64(e * 1e9)})
	}
	assert.Empty(t, analysis.Batches(obs, all))
}

// repeated builds a cell's observations: every repeat's records ending at
// ends (s), started at starts (s; all at 0 when nil).
func repeated(key analysis.CellKey, repeats int, ends func(repeat int) []float64, starts []float64) []analysis.Observation {
	var obs []analysis.Observation
	for r := 1; r <= repeats; r++ {
		for i, e := range ends(r) {
			var st int64
			if starts != nil {
				st = int64(starts[i] * 1e9)
			}
			obs = append(obs, analysis.Observation{CellKey: key, Repeat: r, StartNs: st, EndNs: int64(e * 1e9), Work: 1e8, Rate: 1e8 / e, Unit: "loops"})
		}
	}
	return obs
}

func always(ends ...float64) func(int) []float64 { return func(int) []float64 { return ends } }

// The late group is every thread past the threshold, counted and timed
// from the on-time group (issue 21's two wrong counts); a late group of
// half the threads or more is two groups, and said so.
func TestStragglersAreTheLateGroup(t *testing.T) {
	cases := []struct {
		name    string
		key     analysis.CellKey
		repeats int
		ends    func(int) []float64
		want    string
	}{
		{"two of six late", analysis.CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 6}, 6, always(2.0, 2.0, 2.01, 2.0, 3.1, 3.1),
			"in 6 of 6 repeats two threads finished 1.10 s (55%) after the other four"},
		{"three of five late: two groups", analysis.CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 5}, 6, always(2.5, 2.5, 3.06, 3.06, 3.06),
			"in 6 of 6 repeats threads finished in two groups: two at 2.50 s, three 0.56 s (22%) later"},
		{"processes", analysis.CellKey{Target: "vm", Workload: "procs", QoS: 9, Threads: 4}, 6, always(1.0, 1.0, 1.0, 1.6),
			"in 6 of 6 repeats one process finished 0.60 s (60%) after the other three"},
		{"sizes vary", analysis.CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 6}, 4, func(r int) []float64 {
			if r%2 == 0 {
				return []float64{2, 2, 2, 2, 3, 3}
			}
			return []float64{2, 2, 2, 2, 2, 3}
		}, "in 4 of 4 repeats one to two threads finished 1.00 s (50%) after the others"},
		{"sizes vary, half late in some", analysis.CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 4}, 4, func(r int) []float64 {
			if r%2 == 0 {
				return []float64{2, 2, 3, 3}
			}
			return []float64{2, 2, 2, 3}
		}, "in 4 of 4 repeats threads finished in two groups: two to three at 2.00 s, one to two 1.00 s (50%) later"},
		// The audit's case: the old split left late threads in the on-time
		// group ("three to five threads finished 0.52 s (21%) after the
		// others").
		{"two on time, five late", analysis.CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 7}, 6, func(r int) []float64 {
			j := 0.002 * float64(r%3)
			return []float64{2.0, 2.0 + j, 3.0, 3.005 + j, 3.01, 3.02 + j, 3.03}
		}, "in 6 of 6 repeats threads finished in two groups: two at 2.00 s, five 1.01 s (50%) later"},
		{"one of two", analysis.CellKey{Target: "host", Workload: "fp", QoS: 9, Threads: 2}, 3, always(0.3, 0.9),
			"in 3 of 3 repeats threads finished in two groups: one at 0.30 s, one 0.60 s (200%) later"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := analysis.Stragglers(repeated(c.key, c.repeats, c.ends, nil), all, analysis.StragglerThreshold)
			require.Len(t, f, 1)
			assert.Equal(t, c.want, FindingText(f[0]))
		})
	}
}

// A spread is not two groups: threads ending evenly from 2.0 to 3.0 s, or
// in three steps, have no gap that stands out from the spread on either
// side of it, however late the last ones are.
func TestStragglersNeedAGapAboveTheSpread(t *testing.T) {
	key := analysis.CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 11}
	even := make([]float64, 11)
	for i := range even {
		even[i] = 2 + 0.1*float64(i)
	}
	assert.Empty(t, analysis.Stragglers(repeated(key, 6, always(even...), nil), all, analysis.StragglerThreshold), "an even spread")
	key.Threads = 6
	assert.Empty(t, analysis.Stragglers(repeated(key, 6, always(2, 2, 2.5, 2.5, 3, 3), nil), all, analysis.StragglerThreshold), "three steps")
	f := analysis.Stragglers(repeated(key, 6, always(2, 2.01, 2.02, 2.03, 3, 3.05), nil), all, analysis.StragglerThreshold)
	require.Len(t, f, 1, "a gap of 0.97 s beside spreads of 0.03 and 0.05 s")
	assert.Equal(t, "in 6 of 6 repeats two threads finished 1.01 s (50%) after the other four", FindingText(f[0]))
}

// A pattern in one repeat of six is not a finding.
func TestFindingsNeedMostRepeats(t *testing.T) {
	key := analysis.CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 3}
	once := func(r int) []float64 {
		if r == 1 {
			return []float64{2, 2, 3.4}
		}
		return []float64{2, 2, 2.05}
	}
	assert.Empty(t, analysis.Stragglers(repeated(key, 6, once, nil), all, analysis.StragglerThreshold))
	half := func(r int) []float64 {
		if r <= 3 {
			return []float64{2, 2, 3.4}
		}
		return []float64{2, 2, 2.05}
	}
	assert.Empty(t, analysis.Stragglers(repeated(key, 6, half, nil), all, analysis.StragglerThreshold), "3 of 6 is not most")

	procs := analysis.CellKey{Target: "host", Workload: "procs", QoS: 9, Threads: 10}
	batchOnce := func(r int) []float64 {
		if r == 1 {
			return []float64{1, 1, 1, 1, 1, 2, 2, 2, 2, 2}
		}
		return []float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9}
	}
	assert.Empty(t, analysis.Batches(repeated(procs, 6, batchOnce, nil), all))
}

// Steps no longer than the spread of the processes' own start times are
// start-up, not batches: 9 processes started over 0.15 s and ended in
// steps 0.1 s apart.
func TestBatchesAboveStartUpSpread(t *testing.T) {
	key := analysis.CellKey{Target: "host", Workload: "procs", QoS: 9, Threads: 9}
	starts := []float64{0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.15}
	ends := always(0.3, 0.3, 0.31, 0.42, 0.42, 0.43, 0.55, 0.55, 0.56)
	assert.Empty(t, analysis.Batches(repeated(key, 6, ends, starts), all))
	f := analysis.Batches(repeated(key, 6, ends, nil), all)
	require.Len(t, f, 1, "the same steps with processes started together are batches")
	assert.Equal(t, "completions come in batches of 3: steps at 0.3, 0.4, 0.6 s (every step but the last has 3; 6 of 6 repeats in batches of 3)", FindingText(f[0]))
}

// One process ending early by itself neither hides the batches nor makes
// a straggler of the rest; the finding says it was left out.
func TestBatchesTolerateOneOutlier(t *testing.T) {
	key := analysis.CellKey{Target: "host", Workload: "procs", QoS: 33, Threads: 10}
	ends := always(0.8, 2.0, 2.01, 2.02, 2.03, 4.0, 4.01, 4.02, 4.03, 6.05)
	obs := repeated(key, 6, ends, nil)
	f := analysis.Batches(obs, all)
	require.Len(t, f, 1)
	assert.Equal(t, "completions come in batches of 4: steps at 2.0, 4.0, 6.0 s (every step but the last has 4; 6 of 6 repeats in batches of 4); in 6 of them one process ended outside the steps (at 0.80 s), left out", FindingText(f[0]))
}

// A step is a gap that stands out from the gaps within steps, not one that
// crosses a fixed threshold: completions whose gaps alternate 0.20 and
// 0.26 s are one spread (a quarter of the first completion, 0.25 s, fell
// between them: "batches of 2"), and a step whose own gaps cross that
// threshold is still one step.
func TestBatchesNeedStepsAboveTheGapsWithin(t *testing.T) {
	key := analysis.CellKey{Target: "host", Workload: "procs", QoS: 9, Threads: 10}
	alternating := func(int) []float64 {
		ends := []float64{1}
		for i := 1; i < 10; i++ {
			ends = append(ends, ends[i-1]+[]float64{0.26, 0.2}[i%2])
		}
		return ends
	}
	assert.Empty(t, analysis.Batches(repeated(key, 6, alternating, nil), all), "gaps of 0.20 and 0.26 s")

	// Steps 2 s apart whose completions come 0.12 s apart inside each, past
	// a quarter of the first completion (0.1 s): batches of 4, where the
	// threshold split every completion from the next.
	spread := always(0.4, 0.52, 0.64, 0.76, 2.76, 2.88, 3, 3.12, 5.12, 5.24)
	f := analysis.Batches(repeated(key, 6, spread, nil), all)
	require.Len(t, f, 1)
	assert.Equal(t, "completions come in batches of 4: steps at 0.6, 2.9, 5.2 s (every step but the last has 4; 6 of 6 repeats in batches of 4)", FindingText(f[0]))

	// Steps that stand out, closer than a quarter of the first completion,
	// are no round of the CPUs.
	close := always(1, 1.005, 1.01, 1.015, 1.115, 1.12, 1.125, 1.13, 1.23, 1.235)
	assert.Empty(t, analysis.Batches(repeated(key, 6, close, nil), all), "0.1 s steps on 1 s completions")
}

// scalingSeries builds a fp series on the host: per thread count, the
// repeats' total rates (loops/s, 1 s each).
func scalingSeries(rates map[int][]float64) []analysis.Cell {
	var obs []analysis.Observation
	for n, rs := range rates {
		for r, rate := range rs {
			for range n {
				obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: n}, Repeat: r + 1, EndNs: 1e9,
					Work: rate / float64(n), Rate: rate / float64(n), Unit: "loops"})
			}
		}
	}
	return analysis.Cells(obs)
}

// "best at", "did worse" and "gained nothing" only where the rank test
// shows them; a difference it cannot tell from noise is said so, with its
// p, and repeats too few for any test say that.
func TestScalingClaimsOnlyWhatTheTestShows(t *testing.T) {
	one := []float64{0.99e8, 1.01e8, 0.995e8, 1.005e8, 0.985e8, 1.015e8}
	two := []float64{2.0e8, 2.02e8, 1.98e8, 2.01e8, 1.99e8, 2.03e8}
	cases := []struct {
		name  string
		rates map[int][]float64
		want  string
	}{
		// The audit's case: 3 threads' repeats spread from 1.3e8 to 2.3e8,
		// their median 12% below 2 threads' (p 0.59): "more threads did
		// worse" before.
		{"within noise", map[int][]float64{1: one, 2: two, 3: {1.3e8, 1.4e8, 1.5e8, 2.005e8, 2.025e8, 2.3e8}},
			"highest median at 2 threads (2e+08 loops/s); within noise of it: 3 threads (1.75e+08 loops/s, p=0.59); up to 2 threads each added thread brought 1e+08 loops/s [9.8e+07..1.03e+08] (Theil-Sen); past 2, the steps to 3 threads changed it by -2.5e+07 loops/s"},
		{"did worse", map[int][]float64{1: one, 2: two, 3: {1.5e8, 1.52e8, 1.48e8, 1.51e8, 1.49e8, 1.53e8}},
			"best at 2 threads (2e+08 loops/s); more threads did worse (3 threads: 1.5e+08 loops/s); up to 2 threads each added thread brought 1e+08 loops/s [9.8e+07..1.03e+08] (Theil-Sen); past 2, the steps to 3 threads changed it by -5e+07 loops/s"},
		{"gained nothing", map[int][]float64{1: one, 2: two, 3: {1.9e8, 1.92e8, 1.88e8, 1.91e8, 1.89e8, 1.93e8}},
			"best at 2 threads (2e+08 loops/s); more threads gained nothing (3 threads: 1.9e+08 loops/s); up to 2 threads each added thread brought 1e+08 loops/s [9.8e+07..1.03e+08] (Theil-Sen); past 2, the steps to 3 threads changed it by -1e+07 loops/s"},
		{"gained nothing within noise", map[int][]float64{1: one, 2: two, 3: {1.8e8, 1.85e8, 1.99e8, 2.0e8, 2.1e8, 2.2e8}},
			"highest median at 2 threads (2e+08 loops/s); within noise of it: 3 threads (2e+08 loops/s, p=0.79); up to 2 threads each added thread brought 1e+08 loops/s [9.8e+07..1.03e+08] (Theil-Sen); past 2, the steps to 3 threads changed it by -1e+06 loops/s"},
		{"too few repeats", map[int][]float64{1: one[:3], 2: two[:3], 3: {1.5e8, 1.52e8, 1.48e8}},
			"highest median at 2 threads (2e+08 loops/s); too few repeats to test it against 1, 3 threads (smallest reachable p 0.1 with 3 vs 3 repeats); up to 2 threads each added thread brought 1e+08 loops/s [9.7e+07..1.03e+08] (Theil-Sen); past 2, the steps to 3 threads changed it by -5e+07 loops/s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := analysis.Scaling(scalingSeries(c.rates), func(string) bool { return false })
			require.Len(t, f, 1)
			assert.Equal(t, c.want, FindingText(f[0]))
		})
	}
}

// For a fixed total of work the test is of the times, and a repeat that
// did no work is in no test.
func TestScalingTestsTimesOfATotal(t *testing.T) {
	var obs []analysis.Observation
	secs := map[int][]float64{1: {4, 4.1, 3.9, 4.05, 3.95, 4.02}, 2: {2, 2.02, 1.98, 2.01, 1.99, 2.03}, 4: {2.2, 2.3, 1.9, 3.1, 2.8, 2.6}}
	for n, ss := range secs {
		for r, s := range ss {
			for range n {
				obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "pi", QoS: 33, Threads: n}, Repeat: r + 1, EndNs: int64(s * 1e9),
					Work: 1e9 / float64(n), Rate: 1e9 / float64(n) / s, Unit: "iterations"})
			}
		}
	}
	// A seventh repeat of 2 threads that did no work.
	obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "pi", QoS: 33, Threads: 2}, Repeat: 7, EndNs: 9e9, Unit: "iterations"},
		analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "pi", QoS: 33, Threads: 2}, Repeat: 7, EndNs: 9e9, Unit: "iterations"})
	f := analysis.Scaling(analysis.Cells(obs), func(w string) bool { return w == "pi" })
	require.Len(t, f, 1)
	assert.True(t, strings.HasPrefix(FindingText(f[0]), "shortest median at 2 threads (2 s); within noise of it: 4 threads (2.45 s, p=0.065)"), FindingText(f[0]))
}

// A repeat that did no work is no point of the slope either.
func TestScalingSlopeLeavesIdleRepeatsOut(t *testing.T) {
	rates := map[int][]float64{1: {0.99e8, 1.01e8, 0.995e8, 1.005e8}, 2: {2.0e8, 2.02e8, 1.98e8, 2.01e8}, 3: {3e8, 3.03e8, 2.97e8, 3.01e8}}
	want := analysis.Scaling(scalingSeries(rates), func(string) bool { return false })
	rates[1] = append(rates[1], 0)
	rates[3] = append(rates[3], 0, 0)
	got := analysis.Scaling(scalingSeries(rates), func(string) bool { return false })
	require.Len(t, want, 1)
	assert.Equal(t, want, got)
}

// Each kind of finding is worded from its values alone.
func TestFindingTextOfConstructedValues(t *testing.T) {
	cell := analysis.Finding{Target: "host", Workload: "mmul", QoS: 33, Threads: 3}
	late := cell
	late.Stragglers = &analysis.LateGroups{Repeats: 5, Of: 5, OnTime: analysis.IntRange{Low: 2, High: 2}, Late: analysis.IntRange{Low: 1, High: 1},
		At: 2.03, Delay: 1.39, Share: 0.68}
	assert.Equal(t, "host mmul qos=33 threads=3: in 5 of 5 repeats one thread finished 1.39 s (68%) after the other two", Finding(late))
	procs := analysis.Finding{Target: "vm", Workload: "procs", Threads: 10, Batches: &analysis.BatchSteps{Size: 4, Steps: []float64{2.1, 4.1, 6.2}, Fit: 5, Of: 6,
		Outliers: 2, OutlierLow: 0.8, OutlierHigh: 0.85}}
	assert.Equal(t, "vm procs threads=10: completions come in batches of 4: steps at 2.1, 4.1, 6.2 s (every step but the last has 4; 5 of 6 repeats in batches of 4); "+
		"in 2 of them one process ended outside the steps (at 0.80..0.85 s), left out", Finding(procs))
	fit := &analysis.ScalingFit{Unit: "loops", Best: analysis.ScalingPoint{Threads: 2, Rate: 2e8}, Last: analysis.ScalingPoint{Threads: 3, Rate: 1.5e8}, Shown: true,
		Tail: analysis.TailWorse, Paying: 2, First: 1, Sloped: true, Slope: analysis.TheilSen{Slope: 1e8, Low: 9.8e7, High: 1.03e8},
		Steps: []float64{-5e7}, StepThreads: []int{3}}
	scaling := analysis.Finding{Target: "host", Workload: "fp", QoS: 33, Scaling: fit}
	assert.Equal(t, "host fp qos=33: best at 2 threads (2e+08 loops/s); more threads did worse (3 threads: 1.5e+08 loops/s); "+
		"up to 2 threads each added thread brought 1e+08 loops/s [9.8e+07..1.03e+08] (Theil-Sen); past 2, the steps to 3 threads changed it by -5e+07 loops/s", Finding(scaling))
	fit.Sloped, fit.Steps, fit.StepThreads = false, nil, nil
	assert.Contains(t, FindingText(scaling), "; no thread added to 1 paid")
	share := analysis.Finding{Kind: "core-share", Target: "host", Workload: "all", CoreShare: &analysis.CoreShare{Slow: "E", Median: 0.42, Shares: []float64{0.33, 0.5}}}
	assert.Equal(t, "host: the worker most on E cores spent 42% of its busy time there (median over 2 repeats; 33%..50%; telemetry: a share of time, not of work)", Finding(share))
	share.CoreShare = &analysis.CoreShare{Unavailable: "its telemetry shows one core type"}
	assert.Equal(t, "host: core-type share not available: its telemetry shows one core type", Finding(share))
	assert.Equal(t, "host mmul qos=33 threads=3: ", Finding(cell), "a finding without values says nothing")
}
