package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCPUUse(t *testing.T) {
	tests := []struct {
		name         string
		iv           []interval
		share, speed float64
	}{
		{"two threads with half a CPU each", []interval{{0, 1e9, 100, 5e8}, {0, 1e9, 100, 5e8}}, 0.5, 200},
		{"a starved thread beside a full one", []interval{{0, 1e9, 100, 1e9}, {0, 2e9, 1, 1e7}}, 1.01 / 3, 101 / 1.01},
		{"a record without CPU time", []interval{{0, 1e9, 100, 1e9}, {0, 1e9, 100, 0}}, math.NaN(), math.NaN()},
		{"no interval", []interval{{5, 5, 10, 3}}, math.NaN(), math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			share, speed := cpuUse(tt.iv)
			if math.IsNaN(tt.share) {
				assert.True(t, math.IsNaN(share) && math.IsNaN(speed), "share %v speed %v", share, speed)
				return
			}
			assert.InDelta(t, tt.share, share, 1e-12)
			assert.InDelta(t, tt.speed, speed, 1e-9)
		})
	}
}

// A repeat's mean thread rate, weighted by the threads' wall times, is its
// share times its speed: the two factors say where a rate came from.
func TestCPUUseFactorsTheRate(t *testing.T) {
	iv := []interval{{0, 1e9, 300, 9e8}, {1e8, 2e9, 50, 2e7}, {0, 5e8, 10, 4e8}}
	share, speed := cpuUse(iv)
	var work, wall float64
	for _, x := range iv {
		work += x.Work
		wall += float64(x.EndNs-x.StartNs) / 1e9
	}
	assert.InDelta(t, work/wall, share*speed, 1e-9)
}

func TestCellsShareAndSpeed(t *testing.T) {
	k := CellKey{Target: "host", Workload: "fp", QoS: 9, Threads: 1}
	obs := []Observation{
		{CellKey: k, Repeat: 1, Unit: "loops", StartNs: 0, EndNs: 1e9, Work: 10, Rate: 10, CPUNs: 1e7},
		{CellKey: k, Repeat: 2, Unit: "loops", StartNs: 0, EndNs: 1e9, Work: 20, Rate: 20, CPUNs: 2e7},
		{CellKey: k, Repeat: 3, Unit: "loops", StartNs: 0, EndNs: 1e9, Work: 30, Rate: 30}, // not recorded
	}
	cells := Cells(obs)
	require.Len(t, cells, 1)
	c := cells[0]
	require.Len(t, c.CPUShares, 3)
	assert.InDelta(t, 0.01, float64(c.CPUShares[0]), 1e-12)
	assert.InDelta(t, 0.02, float64(c.CPUShares[1]), 1e-12)
	assert.True(t, c.CPUShares[2].IsNaN(), "a repeat without CPU time has no share")
	assert.Equal(t, 2, c.CPUShare.N, "only the recorded repeats are summarized")
	assert.InDelta(t, 0.015, float64(c.CPUShare.Median), 1e-12)
	assert.InDelta(t, 1000, float64(c.Speed.Median), 1e-9, "10 loops per 0.01 CPU-s")
}
