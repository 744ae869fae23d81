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
		// Work on near-zero CPU time: the share stands, no speed is read.
		{"work on 20 us of CPU", []interval{{0, 1e9, 2.4e6, 20_000}}, 2e-5, math.NaN()},
		{"two threads on 150 us of CPU", []interval{{0, 1e9, 1e5, 75_000}, {0, 1e9, 1e5, 75_000}}, 7.5e-5, math.NaN()},
		{"a crumb of a CPU, read", []interval{{0, 1e9, 8.5e5, 500_000}}, 5e-4, 1.7e9},
		{"no work on near-zero CPU", []interval{{0, 1e9, 0, 2_000}}, 2e-6, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			share, speed, low := cpuUse(tt.iv)
			if math.IsNaN(tt.share) {
				assert.True(t, math.IsNaN(share) && math.IsNaN(speed), "share %v speed %v", share, speed)
				return
			}
			assert.InDelta(t, tt.share, share, 1e-12)
			if math.IsNaN(tt.speed) {
				assert.True(t, math.IsNaN(speed) && low, "no speed read from so little CPU time: %v", speed)
				return
			}
			assert.False(t, low)
			assert.InDelta(t, tt.speed, speed, 1e-9)
		})
	}
}

// A repeat's mean thread rate, weighted by the threads' wall times, is its
// share times its speed: the two factors say where a rate came from.
func TestCPUUseFactorsTheRate(t *testing.T) {
	iv := []interval{{0, 1e9, 300, 9e8}, {1e8, 2e9, 50, 2e7}, {0, 5e8, 10, 4e8}}
	share, speed, _ := cpuUse(iv)
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

// useObs are 6 repeats of one thread's 1 s record at share and speed
// (loops per CPU-second), with a wobble of a percent or so.
func useObs(target string, q, threads int, share, speed float64) []Observation {
	var out []Observation
	for r := 1; r <= 6; r++ {
		w := 1 + 0.004*(float64((r*5)%6)-2.5)
		sh, sp := share*w, speed/w*(1+0.001*float64(r))
		for i := 0; i < threads; i++ {
			out = append(out, Observation{CellKey: CellKey{Target: target, Workload: "fp", QoS: q, Threads: threads}, Repeat: r, Unit: "loops",
				StartNs: 0, EndNs: 1e9, Work: sh * sp, Rate: sh * sp, CPUNs: int64(sh * 1e9)})
		}
	}
	return out
}

func TestMechanismLine(t *testing.T) {
	join := func(parts ...[]Observation) []Observation {
		var out []Observation
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name string
		obs  []Observation
		want string
		in   []string
	}{
		{"contended Linux host", join(useObs("host", 33, 1, 0.998, 1e9), useObs("host", 9, 1, 0.0024, 0.99e9),
			useObs("vm", 33, 1, 0.99, 3e7), useObs("vm", 9, 1, 0.99, 3e7)),
			"host: background got 0.24% of a CPU to user-interactive's 99.8%, at 0.99x its speed per CPU-second (the effect is in CPU share); " +
				"vm: background got 99% of a vCPU to user-interactive's 99%, at 1.00x its speed (the classes ran alike)",
			[]string{"share", ""}},
		{"efficiency cores", join(useObs("host", 33, 1, 0.99, 3e9), useObs("host", 9, 1, 0.97, 1e9),
			useObs("vm", 33, 1, 0.99, 3e9), useObs("vm", 9, 1, 0.99, 3e9)),
			"host: background got 97% of a CPU to user-interactive's 99%, at 0.33x its speed per CPU-second (the effect is in speed); " +
				"vm: background got 99% of a vCPU to user-interactive's 99%, at 1.00x its speed (the classes ran alike)",
			[]string{"speed", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Subsumption(Cells(c.obs), "fp", "", "host", "vm", DefaultMargins())
			assert.Equal(t, c.want, v.MechanismLine())
			require.Len(t, v.Mechanism, 2)
			assert.Equal(t, c.in, []string{v.Mechanism[0].In, v.Mechanism[1].In})
			assert.Equal(t, []int{33, 9}, []int{v.Mechanism[0].Classes[0].QoS, v.Mechanism[0].Classes[1].QoS})
		})
	}

	// Records without CPU time (results schema before 1.2).
	var old []Observation
	for _, o := range join(useObs("host", 33, 1, 0.998, 1e9), useObs("host", 9, 1, 0.0024, 0.99e9), useObs("vm", 33, 1, 0.99, 3e7), useObs("vm", 9, 1, 0.99, 3e7)) {
		o.CPUNs = 0
		old = append(old, o)
	}
	v := Subsumption(Cells(old), "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, "not recorded: the records carry no CPU time (a run written before results schema 1.2), so share and speed cannot be told apart", v.MechanismLine())
	assert.Equal(t, "not recorded", v.Mechanism[0].In)
}
