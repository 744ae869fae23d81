package analysis

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func all(Observation) bool { return true }

// The findings state the articles' patterns from their published numbers:
// a straggler of [allocation], the batches of [processes], the 4-thread
// optimum of [m1-qos].
func TestFindingsReproduceThePublishedPatterns(t *testing.T) {
	ref := loadFindingsRef(t)
	for _, s := range ref.Stragglers {
		var obs []Observation
		for _, e := range s.Ends {
			obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: s.Threads}, Repeat: 1,
				StartNs: 0, EndNs: int64(e * 1e9), Work: 1e7, Rate: 1e7 / e, Unit: "mmul"})
		}
		f := Stragglers(obs, all, StragglerThreshold)
		require.Len(t, f, 1, s.Source)
		require.NotNil(t, f[0].Stragglers, s.Source)
		assert.Equal(t, [2]int{1, 1}, [2]int{f[0].Stragglers.Repeats, f[0].Stragglers.Of}, s.Source)
	}
	for _, b := range ref.Batches {
		var obs []Observation
		for _, e := range b.Ends {
			obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "procs", QoS: b.QoS, Threads: b.Processes}, Repeat: 1,
				EndNs: int64(e * 1e9), Work: 1e8, Rate: 1e8 / e, Unit: "loops"})
		}
		f := Batches(obs, all)
		require.Len(t, f, 1)
		require.NotNil(t, f[0].Batches)
		assert.Equal(t, 1, f[0].Batches.Fit)
	}
	var obs []Observation
	for i, n := range ref.Pi.Threads {
		for range n {
			obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "pi", QoS: 33, Threads: n}, Repeat: 1,
				EndNs: int64(ref.Pi.Seconds[i] * 1e9), Work: 1e9 / float64(n), Rate: 1e9 / float64(n) / ref.Pi.Seconds[i], Unit: "iterations"})
		}
	}
	f := Scaling(Cells(obs), func(w string) bool { return w == "pi" })
	require.Len(t, f, 1)
	// The published pattern as one run per thread count can show it (4
	// threads the shortest, untested), then what qoslab derives: the rate
	// each added thread brought up to the best (1e9 iterations over 89.47,
	// 56.00 and 40.34 s at 1, 2 and 4 threads), and the steps past it.
	fit := f[0].Scaling
	require.NotNil(t, fit)
	assert.Equal(t, "scaling", f[0].Kind)
	assert.True(t, fit.TotalWork)
	assert.Equal(t, 4, fit.Best.Threads)
	assert.False(t, fit.Shown, "one run per count: untested")
	assert.Equal(t, 4, fit.Paying)
	assert.True(t, fit.Sloped)
	assert.InDelta(t, 4.54e6, float64(fit.Slope.Slope), 0.005e6)
	assert.Equal(t, []int{8, 10}, fit.StepThreads)
}

// What is not a pattern is not called one: threads finishing together, one
// batch, a series whose every added thread pays.
func TestFindingsStayQuietWithoutAPattern(t *testing.T) {
	var obs []Observation
	for _, e := range []float64{2.03, 2.05, 2.10} {
		obs = append(obs, Observation{CellKey: CellKey{Target: "vm", Workload: "mmul", QoS: 33, Threads: 3}, Repeat: 1, EndNs: int64(e * 1e9)})
	}
	assert.Empty(t, Stragglers(obs, all, StragglerThreshold), "3% apart is no straggler")

	obs = obs[:0]
	for i := range 8 {
		obs = append(obs, Observation{CellKey: CellKey{Target: "vm", Workload: "procs", QoS: 9, Threads: 8}, Repeat: 1, EndNs: int64((4 + 0.05*float64(i)) * 1e9)})
	}
	assert.Empty(t, Batches(obs, all), "all finished together: one batch")

	obs = obs[:0]
	for _, n := range []int{1, 2, 3} {
		for r, w := range []float64{0.99, 1.01, 0.995, 1.005, 0.985, 1.015} {
			for range n {
				obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: n}, Repeat: r + 1, EndNs: 1e9, Work: w * 1e8, Rate: w * 1e8, Unit: "loops"})
			}
		}
	}
	f := Scaling(Cells(obs), func(string) bool { return false })
	require.Len(t, f, 1)
	assert.Equal(t, 3, f[0].Scaling.Best.Threads)
	assert.True(t, f[0].Scaling.Shown)
	assert.Equal(t, TailStillPaid, f[0].Scaling.Tail)
}

// A delay of a few hundredths is scheduler noise, whatever its share; a
// rate that levels off is said to stop paying, not to do worse.
func TestFindingsIgnoreNoise(t *testing.T) {
	var obs []Observation
	for _, e := range []float64{0.030, 0.030, 0.050} {
		obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 3}, Repeat: 1, EndNs: int64(e * 1e9)})
	}
	assert.Empty(t, Stragglers(obs, all, StragglerThreshold), "20 ms late is 67% of 30 ms, and still noise")

	obs = obs[:0]
	for _, n := range []int{1, 2, 3, 4} {
		rate := []float64{1e8, 2e8, 2.05e8, 1.98e8}[n-1]
		for range n {
			obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: n}, Repeat: 1, EndNs: 1e9, Work: rate / float64(n), Rate: rate / float64(n), Unit: "loops"})
		}
	}
	f := Scaling(Cells(obs), func(string) bool { return false })
	require.Len(t, f, 1)
	// The slope is of the part that still pays, 1 to 2 threads, never over
	// the plateau; past it, each step's change.
	fit := f[0].Scaling
	assert.Equal(t, TailStopped, fit.Tail)
	assert.Equal(t, [3]int{2, 3, 2}, [3]int{fit.Plateau.Threads, fit.Best.Threads, fit.Paying})
	assert.InDelta(t, 1e8, float64(fit.Slope.Slope), 1)
	assert.Equal(t, []int{3, 4}, fit.StepThreads)
	assert.InDeltaSlice(t, []float64{5e6, -7e6}, fit.Steps, 1)
}

// Steps of different sizes (2, 3, 4 processes) are not batches, even
// with one completion left out.
func TestBatchesNeedEvenSteps(t *testing.T) {
	var obs []Observation
	for _, e := range []float64{1.0, 1.01, 2.0, 2.01, 2.02, 3.0, 3.01, 3.02, 3.03} {
		obs = append(obs, Observation{CellKey: CellKey{Target: "vm", Workload: "procs", QoS: 9, Threads: 9}, Repeat: 1, EndNs: int64(e * 1e9)})
	}
	assert.Empty(t, Batches(obs, all))
}

// repeated builds a cell's observations: every repeat's records ending at
// ends (s), started at starts (s; all at 0 when nil).
func repeated(key CellKey, repeats int, ends func(repeat int) []float64, starts []float64) []Observation {
	var obs []Observation
	for r := 1; r <= repeats; r++ {
		for i, e := range ends(r) {
			var st int64
			if starts != nil {
				st = int64(starts[i] * 1e9)
			}
			obs = append(obs, Observation{CellKey: key, Repeat: r, StartNs: st, EndNs: int64(e * 1e9), Work: 1e8, Rate: 1e8 / e, Unit: "loops"})
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
		key     CellKey
		repeats int
		ends    func(int) []float64
		want    LateGroups
	}{
		{"two of six late", CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 6}, 6, always(2.0, 2.0, 2.01, 2.0, 3.1, 3.1),
			LateGroups{Repeats: 6, Of: 6, OnTime: IntRange{4, 4}, Late: IntRange{2, 2}}},
		{"three of five late: two groups", CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 5}, 6, always(2.5, 2.5, 3.06, 3.06, 3.06),
			LateGroups{Repeats: 6, Of: 6, TwoGroups: true, OnTime: IntRange{2, 2}, Late: IntRange{3, 3}}},
		{"processes", CellKey{Target: "vm", Workload: "procs", QoS: 9, Threads: 4}, 6, always(1.0, 1.0, 1.0, 1.6),
			LateGroups{Repeats: 6, Of: 6, OnTime: IntRange{3, 3}, Late: IntRange{1, 1}}},
		{"sizes vary", CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 6}, 4, func(r int) []float64 {
			if r%2 == 0 {
				return []float64{2, 2, 2, 2, 3, 3}
			}
			return []float64{2, 2, 2, 2, 2, 3}
		}, LateGroups{Repeats: 4, Of: 4, OnTime: IntRange{4, 5}, Late: IntRange{1, 2}}},
		{"sizes vary, half late in some", CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 4}, 4, func(r int) []float64 {
			if r%2 == 0 {
				return []float64{2, 2, 3, 3}
			}
			return []float64{2, 2, 2, 3}
		}, LateGroups{Repeats: 4, Of: 4, TwoGroups: true, OnTime: IntRange{2, 3}, Late: IntRange{1, 2}}},
		// The audit's case: the old split left late threads in the on-time
		// group ("three to five threads finished 0.52 s (21%) after the
		// others").
		{"two on time, five late", CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 7}, 6, func(r int) []float64 {
			j := 0.002 * float64(r%3)
			return []float64{2.0, 2.0 + j, 3.0, 3.005 + j, 3.01, 3.02 + j, 3.03}
		}, LateGroups{Repeats: 6, Of: 6, TwoGroups: true, OnTime: IntRange{2, 2}, Late: IntRange{5, 5}}},
		{"one of two", CellKey{Target: "host", Workload: "fp", QoS: 9, Threads: 2}, 3, always(0.3, 0.9),
			LateGroups{Repeats: 3, Of: 3, TwoGroups: true, OnTime: IntRange{1, 1}, Late: IntRange{1, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Stragglers(repeated(c.key, c.repeats, c.ends, nil), all, StragglerThreshold)
			require.Len(t, f, 1)
			got := *f[0].Stragglers
			assert.Equal(t, [5]any{c.want.Repeats, c.want.Of, c.want.TwoGroups, c.want.OnTime, c.want.Late}, [5]any{got.Repeats, got.Of, got.TwoGroups, got.OnTime, got.Late})
		})
	}
}

// A spread is not two groups: threads ending evenly from 2.0 to 3.0 s, or
// in three steps, have no gap that stands out from the spread on either
// side of it, however late the last ones are.
func TestStragglersNeedAGapAboveTheSpread(t *testing.T) {
	key := CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 11}
	even := make([]float64, 11)
	for i := range even {
		even[i] = 2 + 0.1*float64(i)
	}
	assert.Empty(t, Stragglers(repeated(key, 6, always(even...), nil), all, StragglerThreshold), "an even spread")
	key.Threads = 6
	assert.Empty(t, Stragglers(repeated(key, 6, always(2, 2, 2.5, 2.5, 3, 3), nil), all, StragglerThreshold), "three steps")
	f := Stragglers(repeated(key, 6, always(2, 2.01, 2.02, 2.03, 3, 3.05), nil), all, StragglerThreshold)
	require.Len(t, f, 1, "a gap of 0.97 s beside spreads of 0.03 and 0.05 s")
	assert.Equal(t, IntRange{2, 2}, f[0].Stragglers.Late)
	assert.InDelta(t, 1.01, f[0].Stragglers.Delay, 0.005)
}

// A pattern in one repeat of six is not a finding.
func TestFindingsNeedMostRepeats(t *testing.T) {
	key := CellKey{Target: "host", Workload: "mmul", QoS: 33, Threads: 3}
	once := func(r int) []float64 {
		if r == 1 {
			return []float64{2, 2, 3.4}
		}
		return []float64{2, 2, 2.05}
	}
	assert.Empty(t, Stragglers(repeated(key, 6, once, nil), all, StragglerThreshold))
	half := func(r int) []float64 {
		if r <= 3 {
			return []float64{2, 2, 3.4}
		}
		return []float64{2, 2, 2.05}
	}
	assert.Empty(t, Stragglers(repeated(key, 6, half, nil), all, StragglerThreshold), "3 of 6 is not most")

	procs := CellKey{Target: "host", Workload: "procs", QoS: 9, Threads: 10}
	batchOnce := func(r int) []float64 {
		if r == 1 {
			return []float64{1, 1, 1, 1, 1, 2, 2, 2, 2, 2}
		}
		return []float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9}
	}
	assert.Empty(t, Batches(repeated(procs, 6, batchOnce, nil), all))
}

// Steps no longer than the spread of the processes' own start times are
// start-up, not batches: 9 processes started over 0.15 s and ended in
// steps 0.1 s apart.
func TestBatchesAboveStartUpSpread(t *testing.T) {
	key := CellKey{Target: "host", Workload: "procs", QoS: 9, Threads: 9}
	starts := []float64{0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.15}
	ends := always(0.3, 0.3, 0.31, 0.42, 0.42, 0.43, 0.55, 0.55, 0.56)
	assert.Empty(t, Batches(repeated(key, 6, ends, starts), all))
	f := Batches(repeated(key, 6, ends, nil), all)
	require.Len(t, f, 1, "the same steps with processes started together are batches")
	assert.Equal(t, 3, f[0].Batches.Size)
	assert.InDeltaSlice(t, []float64{0.303, 0.423, 0.553}, f[0].Batches.Steps, 0.001)
}

// One process ending early by itself neither hides the batches nor makes
// a straggler of the rest; the finding says it was left out.
func TestBatchesTolerateOneOutlier(t *testing.T) {
	key := CellKey{Target: "host", Workload: "procs", QoS: 33, Threads: 10}
	ends := always(0.8, 2.0, 2.01, 2.02, 2.03, 4.0, 4.01, 4.02, 4.03, 6.05)
	obs := repeated(key, 6, ends, nil)
	f := Batches(obs, all)
	require.Len(t, f, 1)
	b := f[0].Batches
	assert.Equal(t, [4]int{4, 6, 6, 6}, [4]int{b.Size, b.Fit, b.Of, b.Outliers})
	assert.Equal(t, [2]float64{0.8, 0.8}, [2]float64{b.OutlierLow, b.OutlierHigh})
}

// A step is a gap that stands out from the gaps within steps, not one that
// crosses a fixed threshold: completions whose gaps alternate 0.20 and
// 0.26 s are one spread (a quarter of the first completion, 0.25 s, fell
// between them: "batches of 2"), and a step whose own gaps cross that
// threshold is still one step.
func TestBatchesNeedStepsAboveTheGapsWithin(t *testing.T) {
	key := CellKey{Target: "host", Workload: "procs", QoS: 9, Threads: 10}
	alternating := func(int) []float64 {
		ends := []float64{1}
		for i := 1; i < 10; i++ {
			ends = append(ends, ends[i-1]+[]float64{0.26, 0.2}[i%2])
		}
		return ends
	}
	assert.Empty(t, Batches(repeated(key, 6, alternating, nil), all), "gaps of 0.20 and 0.26 s")

	// Steps 2 s apart whose completions come 0.12 s apart inside each, past
	// a quarter of the first completion (0.1 s): batches of 4, where the
	// threshold split every completion from the next.
	spread := always(0.4, 0.52, 0.64, 0.76, 2.76, 2.88, 3, 3.12, 5.12, 5.24)
	f := Batches(repeated(key, 6, spread, nil), all)
	require.Len(t, f, 1)
	assert.Equal(t, 4, f[0].Batches.Size)
	assert.Len(t, f[0].Batches.Steps, 3)

	// Steps that stand out, closer than a quarter of the first completion,
	// are no round of the CPUs.
	close := always(1, 1.005, 1.01, 1.015, 1.115, 1.12, 1.125, 1.13, 1.23, 1.235)
	assert.Empty(t, Batches(repeated(key, 6, close, nil), all), "0.1 s steps on 1 s completions")
}

// scalingSeries builds a fp series on the host: per thread count, the
// repeats' total rates (loops/s, 1 s each).
func scalingSeries(rates map[int][]float64) []Cell {
	var obs []Observation
	for n, rs := range rates {
		for r, rate := range rs {
			for range n {
				obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: n}, Repeat: r + 1, EndNs: 1e9,
					Work: rate / float64(n), Rate: rate / float64(n), Unit: "loops"})
			}
		}
	}
	return Cells(obs)
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
		want  ScalingFit
	}{
		// The audit's case: 3 threads' repeats spread from 1.3e8 to 2.3e8,
		// their median 12% below 2 threads' (p 0.59): "more threads did
		// worse" before.
		{"within noise", map[int][]float64{1: one, 2: two, 3: {1.3e8, 1.4e8, 1.5e8, 2.005e8, 2.025e8, 2.3e8}},
			ScalingFit{Best: ScalingPoint{Threads: 2}, Noise: []ScalingNoise{{ScalingPoint: ScalingPoint{Threads: 3}}}}},
		{"did worse", map[int][]float64{1: one, 2: two, 3: {1.5e8, 1.52e8, 1.48e8, 1.51e8, 1.49e8, 1.53e8}},
			ScalingFit{Best: ScalingPoint{Threads: 2}, Shown: true, Tail: TailWorse}},
		{"gained nothing", map[int][]float64{1: one, 2: two, 3: {1.9e8, 1.92e8, 1.88e8, 1.91e8, 1.89e8, 1.93e8}},
			ScalingFit{Best: ScalingPoint{Threads: 2}, Shown: true, Tail: TailGainedNothing}},
		{"gained nothing within noise", map[int][]float64{1: one, 2: two, 3: {1.8e8, 1.85e8, 1.99e8, 2.0e8, 2.1e8, 2.2e8}},
			ScalingFit{Best: ScalingPoint{Threads: 2}, Noise: []ScalingNoise{{ScalingPoint: ScalingPoint{Threads: 3}}}}},
		{"too few repeats", map[int][]float64{1: one[:3], 2: two[:3], 3: {1.5e8, 1.52e8, 1.48e8}},
			ScalingFit{Best: ScalingPoint{Threads: 2}, Few: []int{1, 3}, FewSizes: [][2]int{{3, 3}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Scaling(scalingSeries(c.rates), func(string) bool { return false })
			require.Len(t, f, 1)
			got := f[0].Scaling
			var noise []int
			for _, n := range got.Noise {
				noise = append(noise, n.Threads)
			}
			var want []int
			for _, n := range c.want.Noise {
				want = append(want, n.Threads)
			}
			assert.Equal(t, [4]any{c.want.Best.Threads, c.want.Shown, c.want.Tail, want}, [4]any{got.Best.Threads, got.Shown, got.Tail, noise})
			assert.Equal(t, c.want.Few, got.Few)
			assert.Equal(t, c.want.FewSizes, got.FewSizes)
		})
	}
}

// For a fixed total of work the test is of the times, and a repeat that
// did no work is in no test.
func TestScalingTestsTimesOfATotal(t *testing.T) {
	var obs []Observation
	secs := map[int][]float64{1: {4, 4.1, 3.9, 4.05, 3.95, 4.02}, 2: {2, 2.02, 1.98, 2.01, 1.99, 2.03}, 4: {2.2, 2.3, 1.9, 3.1, 2.8, 2.6}}
	for n, ss := range secs {
		for r, s := range ss {
			for range n {
				obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "pi", QoS: 33, Threads: n}, Repeat: r + 1, EndNs: int64(s * 1e9),
					Work: 1e9 / float64(n), Rate: 1e9 / float64(n) / s, Unit: "iterations"})
			}
		}
	}
	// A seventh repeat of 2 threads that did no work.
	obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "pi", QoS: 33, Threads: 2}, Repeat: 7, EndNs: 9e9, Unit: "iterations"},
		Observation{CellKey: CellKey{Target: "host", Workload: "pi", QoS: 33, Threads: 2}, Repeat: 7, EndNs: 9e9, Unit: "iterations"})
	f := Scaling(Cells(obs), func(w string) bool { return w == "pi" })
	require.Len(t, f, 1)
	fit := f[0].Scaling
	assert.Equal(t, 2, fit.Best.Threads)
	assert.InDelta(t, 2.005, fit.Best.Seconds, 1e-9, "the idle repeat is in no median")
	require.Len(t, fit.Noise, 1)
	assert.Equal(t, 4, fit.Noise[0].Threads)
	assert.InDelta(t, 0.065, float64(fit.Noise[0].P), 0.0005)
}

// A repeat that did no work is no point of the slope either.
func TestScalingSlopeLeavesIdleRepeatsOut(t *testing.T) {
	rates := map[int][]float64{1: {0.99e8, 1.01e8, 0.995e8, 1.005e8}, 2: {2.0e8, 2.02e8, 1.98e8, 2.01e8}, 3: {3e8, 3.03e8, 2.97e8, 3.01e8}}
	want := Scaling(scalingSeries(rates), func(string) bool { return false })
	rates[1] = append(rates[1], 0)
	rates[3] = append(rates[3], 0, 0)
	got := Scaling(scalingSeries(rates), func(string) bool { return false })
	require.Len(t, want, 1)
	assert.Equal(t, want, got)
}
