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
		assert.Equal(t, s.Want, f[0].Text)
	}
	for _, b := range ref.Batches {
		var obs []Observation
		for _, e := range b.Ends {
			obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "procs", QoS: b.QoS, Threads: b.Processes}, Repeat: 1,
				EndNs: int64(e * 1e9), Work: 1e8, Rate: 1e8 / e, Unit: "loops"})
		}
		f := Batches(obs, all)
		require.Len(t, f, 1)
		assert.Equal(t, b.Want, f[0].Text)
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
	assert.Equal(t, ref.Pi.Want, f[0].Text)
	assert.Equal(t, "host pi qos=33: "+ref.Pi.Want, f[0].String())
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
		for range n {
			obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: n}, Repeat: 1, EndNs: 1e9, Work: 1e8, Rate: 1e8, Unit: "loops"})
		}
	}
	f := Scaling(Cells(obs), func(string) bool { return false })
	require.Len(t, f, 1)
	assert.Contains(t, f[0].Text, "best at 3 threads")
	assert.Contains(t, f[0].Text, "every added thread still paid")
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
	assert.Equal(t, "adding threads stopped paying at 2 threads (2e+08 loops/s, within 10% of the best, 2.05e+08 loops/s at 3)", f[0].Text)
}

// Steps of different sizes (1, 3, 2 processes) are not batches.
func TestBatchesNeedEvenSteps(t *testing.T) {
	var obs []Observation
	for _, e := range []float64{1.0, 2.0, 2.01, 2.02, 3.0, 3.01} {
		obs = append(obs, Observation{CellKey: CellKey{Target: "vm", Workload: "procs", QoS: 9, Threads: 6}, Repeat: 1, EndNs: int64(e * 1e9)})
	}
	assert.Empty(t, Batches(obs, all))
}
