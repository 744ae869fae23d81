package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hostview"
)

func TestHostUseOfOneView(t *testing.T) {
	const s = int64(1e9)
	vm := &hostview.Use{WallNs: 2 * s, HostCPUs: 2, Processes: 90, OtherCPUNs: s,
		VCPUs: []hostview.VCPU{{Index: 0, RunNs: s, WaitNs: s / 2}, {Index: 1, RunNs: s / 2, WaitNs: s}}}
	for _, tc := range []struct {
		name                string
		u                   *hostview.Use
		share, wait, others float64
	}{
		{"a VM cell run", vm, 0.75, 0.75, 0.5},
		{"not recorded", nil, math.NaN(), math.NaN(), math.NaN()},
		{"a host cell run: no vCPUs", &hostview.Use{WallNs: s, HostCPUs: 2, Processes: 90, OtherCPUNs: s / 4}, math.NaN(), math.NaN(), 0.25},
		{"processes not read: other work not recorded, not none", &hostview.Use{WallNs: s, HostCPUs: 2}, math.NaN(), math.NaN(), math.NaN()},
		{"no interval", &hostview.Use{Processes: 3, VCPUs: []hostview.VCPU{{RunNs: 1}}}, math.NaN(), math.NaN(), math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertFloat(t, tc.share, VCPUShare(tc.u), "vCPU share")
			assertFloat(t, tc.wait, VCPUWait(tc.u), "vCPU wait")
			assertFloat(t, tc.others, OtherCPU(tc.u), "other CPU")
		})
	}
}

func assertFloat(t *testing.T, want, got float64, what string) {
	t.Helper()
	if math.IsNaN(want) {
		assert.True(t, math.IsNaN(got), "%s: got %v, want NaN", what, got)
		return
	}
	assert.InDelta(t, want, got, 1e-12, what)
}

// A cell's host views are per repeat in repeat order, whatever order its
// observations came in, NaN where a repeat has none (an older record).
func TestCellsCarryTheHostViewPerRepeat(t *testing.T) {
	const s = int64(1e9)
	v1 := &hostview.Use{WallNs: s, HostCPUs: 2, Processes: 5, OtherCPUNs: s / 2, VCPUs: []hostview.VCPU{{RunNs: s / 2}, {RunNs: s / 4, WaitNs: s / 4}}}
	v3 := &hostview.Use{WallNs: s, HostCPUs: 2, Processes: 5, OtherCPUNs: s / 10, VCPUs: []hostview.VCPU{{RunNs: s}, {RunNs: s}}}
	key := CellKey{Target: "vm", Workload: "fp", QoS: 9, Threads: 2}
	obs := func(repeat, index int, v *hostview.Use) Observation {
		return Observation{CellKey: key, Repeat: repeat, Unit: "loops", StartNs: 0, EndNs: s, Work: 1e6, Rate: 1e6, QoSApplied: 9, QoSFull: true, HostView: v}
	}
	cells := Cells([]Observation{obs(3, 0, v3), obs(3, 1, v3), obs(1, 0, v1), obs(1, 1, v1), obs(2, 0, nil), obs(2, 1, nil)})
	require.Len(t, cells, 1)
	c := cells[0]
	assert.Equal(t, []int{1, 2, 3}, c.Repeats)
	assert.Equal(t, []*hostview.Use{v1, nil, v3}, c.HostViews)
	for i, want := range []float64{0.75, math.NaN(), 2} {
		assertFloat(t, want, float64(c.VCPUShares[i]), "vCPU share")
	}
	for i, want := range []float64{0.25, math.NaN(), 0} {
		assertFloat(t, want, float64(c.VCPUWaits[i]), "vCPU wait")
	}
	for i, want := range []float64{0.5, math.NaN(), 0.1} {
		assertFloat(t, want, float64(c.OtherCPU[i]), "other CPU")
	}
	assertFloat(t, 1.375, float64(MedianOf(c.VCPUShares)), "the median of the repeats recorded")
	assertFloat(t, math.NaN(), float64(MedianOf([]Float{Float(math.NaN())})), "none recorded")
}
