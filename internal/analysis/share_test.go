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

// Where the effect is: in CPU share on a contended Linux host, in speed on
// efficiency cores, nowhere in the VM (render.MechanismLine words it).
func TestMechanismIn(t *testing.T) {
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
		in   []string
	}{
		{"contended Linux host", join(useObs("host", 33, 1, 0.998, 1e9), useObs("host", 9, 1, 0.0024, 0.99e9),
			useObs("vm", 33, 1, 0.99, 3e7), useObs("vm", 9, 1, 0.99, 3e7)),
			[]string{"share", ""}},
		{"efficiency cores", join(useObs("host", 33, 1, 0.99, 3e9), useObs("host", 9, 1, 0.97, 1e9),
			useObs("vm", 33, 1, 0.99, 3e9), useObs("vm", 9, 1, 0.99, 3e9)),
			[]string{"speed", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Subsumption(Cells(c.obs), "fp", "", "host", "vm", DefaultMargins())
			require.Len(t, v.Mechanism, 2)
			assert.Equal(t, c.in, []string{string(v.Mechanism[0].In), string(v.Mechanism[1].In)})
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
	assert.False(t, v.Mechanism[0].Recorded())
	assert.Equal(t, ReadNotRecorded, v.Mechanism[0].Share)
	assert.Equal(t, EffectNotRecorded, v.Mechanism[0].In)
}

// repObs is one repeat's records of a cell: each of threads threads' 1 s
// record at share of a CPU and speed loops per CPU-second; share NaN
// records no CPU time (the thread's rate is then speed, in loops/s).
func repObs(target string, q, threads, rep int, share, speed float64) []Observation {
	var out []Observation
	for i := 0; i < threads; i++ {
		o := Observation{CellKey: CellKey{Target: target, Workload: "fp", QoS: q, Threads: threads}, Repeat: rep, Unit: "loops",
			StartNs: 0, EndNs: 1e9, Contention: 2}
		if math.IsNaN(share) {
			o.Work, o.Rate = speed, speed
		} else {
			o.Work, o.Rate, o.CPUNs = share*speed, share*speed, int64(share*1e9)
		}
		out = append(out, o)
	}
	return out
}

// cellObs are a cell's repeats at shares and speeds (one each per repeat;
// a single speed for all), with a wobble of a few per mille on the speed.
func cellObs(target string, q, threads int, shares []float64, speeds ...float64) []Observation {
	var out []Observation
	for r, sh := range shares {
		sp := speeds[0]
		if len(speeds) > 1 {
			sp = speeds[r]
		}
		out = append(out, repObs(target, q, threads, r+1, sh, sp*(1+0.002*float64((r*5)%6)))...)
	}
	return out
}

// rep6 is x in each of 6 repeats, with a wobble of a few per mille.
func rep6(x float64) []float64 {
	out := make([]float64, 6)
	for i := range out {
		out[i] = x * (1 + 0.003*(float64((i*5)%6)-2.5))
	}
	return out
}

// The mechanism's rules, one case each: what it reads from each ratio
// (alike only within the bound, cannot tell across it), from which
// repeats (k of n; a subset unlike the rest is not described; near-zero
// CPU time with work left out), per thread count where the counts differ,
// effects that cancel, and a speed gap in the VM without the host's view.
func TestMechanismRules(t *testing.T) {
	nan := math.NaN()
	vmAlike := append(cellObs("vm", 33, 1, rep6(0.99), 3e7), cellObs("vm", 9, 1, rep6(0.99), 3e7)...)
	hostHigh := cellObs("host", 33, 1, rep6(0.998), 1e9)
	cases := []struct {
		name         string
		obs          []Observation
		share, speed Reading // the host's
	}{
		{"an interval across the bound cannot tell",
			join(hostHigh, cellObs("host", 9, 1, []float64{0.002, 0.98, 0.003, 0.002, 0.97, 0.0025}, 1e9), vmAlike),
			ReadCannotTell, ReadAlike},
		{"near-zero CPU time with work is left out",
			join(hostHigh, cellObs("host", 9, 1, []float64{0.002, 0.0021, 2e-5, 0.0019, 0.0022, 0.002}, 1e9, 1e9, 72e9, 1e9, 1e9, 1e9), vmAlike),
			ReadDiffers, ReadAlike},
		{"repeats without CPU time like the rest: k of n",
			join(hostHigh, cellObs("host", 9, 1, []float64{nan, nan, 0.002, 0.0021, 0.0019, 0.0022}, 2e6, 2e6, 1e9, 1e9, 1e9, 1e9), vmAlike),
			ReadDiffers, ReadAlike},
		// 2 of 6 repeats carry CPU time, at a full CPU; the others ran at
		// crumbs' rates: a host effect of hundreds, which those 2 cannot
		// describe.
		{"a subset unlike the rest is not described",
			join(hostHigh, cellObs("host", 9, 1, []float64{0.972, 0.97, nan, nan, nan, nan}, 1e9, 1e9, 2e6, 2e6, 2e6, 2e6), vmAlike),
			ReadNotEnough, ReadNotEnough},
		{"shares and speeds that cancel",
			join(hostHigh, cellObs("host", 9, 1, rep6(0.5), 2e9), vmAlike),
			ReadDiffers, ReadDiffers},
		{"a speed gap in the VM without the host's view",
			join(hostHigh, cellObs("host", 9, 1, rep6(0.002), 1e9), cellObs("vm", 33, 1, rep6(0.99), 3e7), cellObs("vm", 9, 1, rep6(0.99), 1.5e7)),
			ReadDiffers, ReadAlike},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Subsumption(Cells(c.obs), "fp", "", "host", "vm", DefaultMargins())
			require.Len(t, v.Mechanism, 2)
			assert.Equal(t, []Reading{c.share, c.speed}, []Reading{v.Mechanism[0].Share, v.Mechanism[0].Speed})
		})
	}
}

// Where the thread counts differ the mechanism gives each count's figures:
// user-interactive's 87.8% of a CPU at 1 thread and 53.6% at 2 are not
// one pooled share; where they agree, one line.
func TestMechanismByThreadCount(t *testing.T) {
	vm := join(cellObs("vm", 33, 1, rep6(0.99), 3e7), cellObs("vm", 9, 1, rep6(0.99), 3e7),
		cellObs("vm", 33, 2, rep6(0.99), 3e7), cellObs("vm", 9, 2, rep6(0.99), 3e7))
	obs := join(cellObs("host", 33, 1, rep6(0.878), 1e9), cellObs("host", 9, 1, rep6(0.002), 1e9),
		cellObs("host", 33, 2, rep6(0.536), 1e9), cellObs("host", 9, 2, rep6(0.002), 1e9), vm)
	v := Subsumption(Cells(obs), "fp", "", "host", "vm", DefaultMargins())
	require.Len(t, v.Mechanism[0].ByThreads, 2)
	assert.Equal(t, []int{1, 2}, []int{v.Mechanism[0].ByThreads[0].Threads, v.Mechanism[0].ByThreads[1].Threads})
	assert.Empty(t, v.Mechanism[1].ByThreads, "the VM's thread counts agree")
	for _, m := range v.Mechanism[0].ByThreads {
		assert.Equal(t, ReadDiffers, m.Share)
	}
	assert.InDelta(t, 0.878, float64(v.Mechanism[0].ByThreads[0].Classes[0].CPUShare.Median), 0.005)
	assert.InDelta(t, 0.536, float64(v.Mechanism[0].ByThreads[1].Classes[0].CPUShare.Median), 0.005)

	// The VM alike at 1 thread and a speed gap at 2: not "alike" pooled.
	vm2 := join(cellObs("vm", 33, 1, rep6(0.99), 3e7), cellObs("vm", 9, 1, rep6(0.99), 3e7),
		cellObs("vm", 33, 2, rep6(0.99), 3e7), cellObs("vm", 9, 2, rep6(0.99), 1.5e7))
	obs = join(cellObs("host", 33, 1, rep6(0.998), 1e9), cellObs("host", 9, 1, rep6(0.002), 1e9),
		cellObs("host", 33, 2, rep6(0.998), 1e9), cellObs("host", 9, 2, rep6(0.002), 1e9), vm2)
	v = Subsumption(Cells(obs), "fp", "", "host", "vm", DefaultMargins())
	by := v.Mechanism[1].ByThreads
	require.Len(t, by, 2)
	assert.Equal(t, [2]Reading{ReadAlike, ReadDiffers}, [2]Reading{by[0].Speed, by[1].Speed})
}

func TestReadSpeedGap(t *testing.T) {
	fs := func(x ...float64) []Float { return floats(x) }
	for _, tc := range []struct {
		name   string
		slower int
		shares [2][]Float
		want   SpeedGap
	}{
		{"no host view", 1, [2][]Float{nil, nil}, GapNoHostView},
		{"host view not a number", 1, [2][]Float{fs(math.NaN()), fs(math.NaN())}, GapNoHostView},
		{"the slower class's vCPUs got less", 1, [2][]Float{fs(0.98, 0.99, 0.97), fs(0.5, 0.45, 0.52)}, GapHostTookVCPU},
		{"the high class slower, its vCPUs got less", 0, [2][]Float{fs(0.5, 0.45, 0.52), fs(0.98, 0.99, 0.97)}, GapHostTookVCPU},
		{"the vCPUs got alike", 1, [2][]Float{fs(0.98, 0.99, 0.97), fs(0.97, 0.98, 0.99)}, GapInGuest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ReadSpeedGap(tc.slower, tc.shares))
		})
	}
}

func join(parts ...[]Observation) []Observation {
	var out []Observation
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
