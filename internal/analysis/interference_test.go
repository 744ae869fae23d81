package analysis

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hostview"
)

func TestInterferenceRuleOneRun(t *testing.T) {
	r := DefaultInterferenceRule()
	norm := InterferenceNorm{Share: 1.9} // an online check's norm: no spread yet, so the minimum margin
	nan := math.NaN()
	for _, tc := range []struct {
		name          string
		share, others float64
		norm          InterferenceNorm
		want          bool
	}{
		{"half a CPU less while python3 took half a CPU", 1.1, 0.5, norm, true},
		{"just past the minimum margin", 1.9 - 0.16, 0.2, norm, true},
		{"within the minimum margin", 1.9 - 0.14, 0.9, norm, false},
		{"less host CPU, but no other work: the run's own spinners took it", 1.1, 0.05, norm, false},
		{"other work at the floor counts", 1.1, InterferenceOtherFloor, norm, true},
		{"other work took an idle CPU, the vCPUs got their norm", 1.9, 1.0, norm, false},
		{"more than the norm", 2.0, 1.0, norm, false},
		{"a wide spread widens the margin", 1.5, 1.0, InterferenceNorm{Share: 1.9, Margin: 0.6}, false},
		{"below a wide margin", 1.2, 1.0, InterferenceNorm{Share: 1.9, Margin: 0.6}, true},
		{"a margin under the minimum is the minimum", 1.8, 1.0, InterferenceNorm{Share: 1.9, Margin: 0.01}, false},
		{"vCPU share not recorded", nan, 1.0, norm, false},
		{"other work not recorded", 1.1, nan, norm, false},
		{"no norm", 1.1, 1.0, InterferenceNorm{Share: Float(nan)}, false},
	} {
		assert.Equal(t, tc.want, r.InterferedBeside(tc.share, tc.others, tc.norm), tc.name)
		if tc.norm.Margin == 0 {
			assert.Equal(t, tc.want, r.Interfered(tc.share, tc.others, float64(tc.norm.Share)), "%s: with the norm as a share alone", tc.name)
		}
	}
}

func TestInterferenceNorm(t *testing.T) {
	r := DefaultInterferenceRule()
	for _, tc := range []struct {
		name                  string
		shares                []float64
		share, spread, margin float64
		runs                  int
	}{
		{"alike runs: the minimum margin", []float64{1.9, 1.9, 1.9, 1.9}, 1.9, 0, InterferenceMinDeficit, 4},
		{"a minority far below moves neither median nor spread much", []float64{1.9, 1.92, 1.88, 1.9, 1.1, 1.05}, 1.89, 1.4826 * 0.02, InterferenceMinDeficit, 6},
		{"runs that vary widely by themselves: three spreads", []float64{1.0, 1.2, 1.4, 1.6, 1.8}, 1.4, 1.4826 * 0.2, 3 * 1.4826 * 0.2, 5},
		{"NaN (not recorded) left out", []float64{1.9, math.NaN(), 1.9}, 1.9, 0, InterferenceMinDeficit, 2},
	} {
		n := r.NormOf(tc.shares)
		assert.InDelta(t, tc.share, float64(n.Share), 1e-9, tc.name)
		assert.InDelta(t, tc.spread, float64(n.Spread), 1e-9, tc.name)
		assert.InDelta(t, tc.margin, float64(n.Margin), 1e-9, tc.name)
		assert.Equal(t, tc.runs, n.Runs, tc.name)
	}
	assert.True(t, r.NormOf(nil).Share.IsNaN())
}

// interferedObs are the observations of a VM run of fp at two classes and
// two threads, 6 repeats each, the host view on each: the repeats in hit
// (by class) got share 1.1 host CPUs while python3 (pid 30353) took 0.5
// CPU and ran at rate slow; the others got 1.9 at rate 37e6, with 0.02 CPU
// of other work.
func interferedObs(hit map[int][]int, slow float64) []Observation {
	var out []Observation
	for _, q := range []int{9, 33} {
		for rep := 1; rep <= 6; rep++ {
			share, other, rate := 1.9, 0.02, 37e6*(1+0.001*float64(rep)+0.0005*float64(q%2))
			if slices.Contains(hit[q], rep) {
				share, other, rate = 1.1, 0.5, slow*(1+0.001*float64(rep))
			}
			u := &hostview.Use{WallNs: 1e9, HostCPUs: 2, VCPUs: []hostview.VCPU{{Index: 0, RunNs: int64(share / 2 * 1e9)}, {Index: 1, RunNs: int64(share / 2 * 1e9)}},
				OtherCPUNs: int64(other * 1e9), Processes: 80, Others: []hostview.Process{{PID: 30353, Name: "python3", CPUNs: int64(other * 0.9e9)}, {PID: 1, Name: "systemd", CPUNs: 1e6}}}
			for range 2 {
				out = append(out, Observation{CellKey: CellKey{Target: "vm", Workload: "fp", QoS: q, Threads: 2}, Repeat: rep, Unit: "loops",
					StartNs: 0, EndNs: 1e9, Work: rate / 2, Rate: rate / 2, CPUNs: 9e8, QoSApplied: q, QoSFull: true, HostView: u})
			}
		}
	}
	return out
}

func TestInterfered(t *testing.T) {
	cells := Cells(interferedObs(map[int][]int{9: {1, 4}, 33: {2}}, 22e6))
	require.Len(t, cells, 2)
	assert.InDeltaSlice(t, []float64{1.1, 1.9, 1.9, 1.1, 1.9, 1.9}, floatsOf(cells[0].VCPUShares), 1e-6)
	assert.InDeltaSlice(t, []float64{0.5, 0.02, 0.02, 0.5, 0.02, 0.02}, floatsOf(cells[0].OtherCPU), 1e-6)

	rep := Interfered(cells)
	assert.Equal(t, InterferenceSome, rep.Kind)
	assert.Equal(t, 12, rep.Judged)
	require.Len(t, rep.Norms, 1, "one norm per thread count, over both classes")
	assert.InDelta(t, 1.9, float64(rep.Norms[0].Share), 1e-6)
	var got []string
	for _, r := range rep.Runs {
		got = append(got, cellText(r.CellKey)+" #"+string(rune('0'+r.Repeat)))
		assert.InDelta(t, 0.8, float64(r.Deficit), 1e-6)
		assert.InDelta(t, 0.5, float64(r.OtherCPU), 1e-6)
	}
	assert.Equal(t, []string{"vm fp qos=9 threads=2 #1", "vm fp qos=9 threads=2 #4", "vm fp qos=33 threads=2 #2"}, got)
	assert.InDelta(t, 0.5, float64(rep.OtherCPU), 1e-6)
	require.NotEmpty(t, rep.Others)
	assert.Equal(t, hostview.Process{PID: 30353, Name: "python3", CPUNs: 3 * int64(0.5*0.9e9)}, rep.Others[0], "summed over the interfered runs")

	none := Interfered(Cells(interferedObs(nil, 0)))
	assert.Equal(t, InterferenceNone, none.Kind)
	assert.Empty(t, none.Runs)

	var bare []Observation
	for _, o := range interferedObs(nil, 0) {
		o.HostView = nil
		bare = append(bare, o)
	}
	assert.Equal(t, InterferenceNotRecorded, Interfered(Cells(bare)).Kind, "a run before schema 1.3")
}

// WithoutRepeats summarizes a cell again as Cells would have, had the left
// out repeats never been recorded.
func TestWithoutRepeats(t *testing.T) {
	hit := map[int][]int{9: {1, 4}, 33: {2}}
	obs := interferedObs(hit, 22e6)
	cells := Cells(obs)
	rep := Interfered(cells)
	got := WithoutRepeats(cells, rep.Runs)
	var kept []Observation
	for _, o := range obs {
		if !slices.Contains(hit[o.QoS], o.Repeat) {
			kept = append(kept, o)
		}
	}
	want := Cells(kept)
	require.Len(t, got, 2)
	for i := range want {
		assert.Equal(t, want[i].Repeats, got[i].Repeats)
		assert.Equal(t, want[i].TotalRates, got[i].TotalRates)
		assert.Equal(t, want[i].TotalRate, got[i].TotalRate)
		assert.Equal(t, want[i].ThreadRate, got[i].ThreadRate)
		assert.Equal(t, fmt.Sprint(want[i].Dispersion), fmt.Sprint(got[i].Dispersion), "NaN fields compare as text")
		assert.Equal(t, want[i].CPUShare, got[i].CPUShare)
		assert.Equal(t, floatsOf(want[i].VCPUShares), floatsOf(got[i].VCPUShares))
	}
	assert.Equal(t, 4, got[0].TotalRate.N)
	assert.Equal(t, 6, cells[0].TotalRate.N, "the cells given are left as they were")
	same := WithoutRepeats(cells, nil)
	assert.Equal(t, fmt.Sprint(cells), fmt.Sprint(same), "no runs left out: the cells as they were")
}

func floatsOf(v []Float) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// The verdict judges the cell runs without the interfered ones, and says
// so in its line and its warning; the same cells with the interfered runs
// in would not say yes.
func TestSubsumptionWithoutInterferedRuns(t *testing.T) {
	obs := interferedObs(map[int][]int{9: {1, 3, 5}}, 22e6)
	for _, q := range []int{9, 33} {
		for rep := 1; rep <= 6; rep++ {
			rate := 37e6 * (1 + 0.001*float64(rep))
			if q == 9 {
				rate = 1e5 * (1 + 0.002*float64(rep))
			}
			obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: q, Threads: 2}, Repeat: rep, Unit: "loops",
				StartNs: 0, EndNs: 1e9, Work: rate, Rate: rate, CPUNs: 9e8, QoSApplied: q, QoSFull: true})
		}
	}
	cells := SortCells(Cells(obs))
	v := Subsumption(cells, "fp", "", "host", "vm", DefaultMargins())
	require.NotNil(t, v.Interference)
	assert.Equal(t, InterferenceSome, v.Interference.Kind)
	assert.Len(t, v.Interference.Runs, 3)
	assert.Equal(t, Subsumed, v.Outcome, v.Reason)
	assert.Equal(t, 3, v.VM.ByThreads[0].Test.N2, "the low class judged on its 3 runs left")
	ws := v.Warnings(cells)
	require.NotNil(t, ws.Interference)
	assert.True(t, ws.Judged, "the verdict judges without the interfered runs")
	got := ws.Interference.Got()
	require.Len(t, got, 1)
	assert.InDelta(t, 1.1, got[0].Got, 0.05)
	assert.InDelta(t, 1.9, float64(got[0].Norm.Share), 0.05)
	assert.Equal(t, 2, got[0].Norm.Threads)
	vm := v.Mechanism[1]
	require.NotEmpty(t, vm.HostCPUs)
	assert.Equal(t, 2, vm.VCPUs)
	assert.InDelta(t, 1.9, float64(vm.HostCPUs[0].High), 0.05)

	var bare []Observation
	for _, o := range obs {
		o.HostView = nil
		bare = append(bare, o)
	}
	old := Subsumption(SortCells(Cells(bare)), "fp", "", "host", "vm", DefaultMargins())
	assert.Nil(t, old.Interference, "no host view: nothing to say")
	assert.NotEqual(t, Subsumed, old.Outcome, "with the interfered runs in, the slow low class is not subsumed: %s", old)
}

// A cell every run of which was interfered leaves nothing to judge: the
// verdict says so, with the cell, not a reason about missing repeats.
func TestSubsumptionWithEveryRunOfACellInterfered(t *testing.T) {
	obs := interferedObs(map[int][]int{9: {1, 2, 3, 4, 5, 6}}, 22e6)
	// more quiet runs at this thread count, so that the norm stays theirs
	for _, o := range interferedObs(nil, 0) {
		if o.QoS == 33 {
			o.QoS, o.QoSApplied = 20, 20
			obs = append(obs, o)
		}
	}
	for _, q := range []int{9, 33} {
		for rep := 1; rep <= 6; rep++ {
			rate := 37e6 * (1 + 0.001*float64(rep))
			if q == 9 {
				rate = 1e5 * (1 + 0.002*float64(rep))
			}
			obs = append(obs, Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: q, Threads: 2}, Repeat: rep, Unit: "loops",
				StartNs: 0, EndNs: 1e9, Work: rate, Rate: rate, CPUNs: 9e8, QoSApplied: q, QoSFull: true})
		}
	}
	v := Subsumption(SortCells(Cells(obs)), "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, Inconclusive, v.Outcome)
	assert.Equal(t, Reason{Kind: ReasonInterferedCells, VM: "vm", OtherCPU: 0.5, Cells: []CellKey{{Target: "vm", Workload: "fp", QoS: 9, Threads: 2}}}, v.Reason)
	require.NotNil(t, v.Interference)
	assert.Len(t, v.Interference.Runs, 6)
}

// What other work took is summed beside the verdict whether or not it
// took a VM cell run below the run's norm: a steady load takes from all
// alike.
func TestOtherWork(t *testing.T) {
	steady := Cells(interferedObs(nil, 37e6)) // other work 0.02 CPU throughout: under the floor
	v := Subsumption(steady, "fp", "", "host", "vm", DefaultMargins())
	require.NotNil(t, v.OtherWork)
	assert.Equal(t, 12, v.OtherWork.Runs, "the VM cell runs (these cells have no host ones)")
	assert.Zero(t, v.OtherWork.Busy)

	hit := Cells(interferedObs(map[int][]int{9: {1, 4}, 33: {2}}, 22e6))
	v = Subsumption(hit, "fp", "", "host", "vm", DefaultMargins())
	w := v.OtherWork
	assert.Equal(t, [2]int{12, 3}, [2]int{w.Runs, w.Busy})
	assert.InDelta(t, 0.02, float64(w.Median), 1e-9)
	assert.InDelta(t, 0.5, float64(w.Max), 1e-9)
	require.NotEmpty(t, w.Others)
	assert.Equal(t, "python3", w.Others[0].Name)
	assert.Len(t, v.Interference.Runs, 3)
}

// The rule among one workload's cells (the warning of cells no verdict
// judges) reads those cells only.
func TestInterferedAmong(t *testing.T) {
	cells := Cells(interferedObs(map[int][]int{9: {1, 3, 5}}, 22e6))
	rep := InterferedAmong(cells, "fp", "")
	assert.Equal(t, InterferenceSome, rep.Kind)
	assert.Len(t, rep.Runs, 3)
	assert.Equal(t, 12, rep.Judged)
	assert.Equal(t, InterferenceNotRecorded, InterferedAmong(cells, "int", "").Kind, "no cells of int")
}
