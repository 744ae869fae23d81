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
	const vmAlikeText = "vm: background got 99% of a vCPU to user-interactive's 99%, at 1.00x its speed (the classes ran alike)"
	hostHigh := cellObs("host", 33, 1, rep6(0.998), 1e9)
	cases := []struct {
		name         string
		obs          []Observation
		want         string
		share, speed Reading // the host's
		brief        string  // the host's
	}{
		{"an interval across the bound cannot tell",
			join(hostHigh, cellObs("host", 9, 1, []float64{0.002, 0.98, 0.003, 0.002, 0.97, 0.0025}, 1e9), vmAlike),
			"host: background got 0.27% of a CPU to user-interactive's 99.8%, at 1.00x its speed per CPU-second (cannot tell whether the classes ran alike: " +
				"the share ratio's interval 0.00201x..0.97x reaches past 0.91x..1.10x); " + vmAlikeText,
			ReadCannotTell, ReadAlike, "cannot tell"},
		{"near-zero CPU time with work is left out",
			join(hostHigh, cellObs("host", 9, 1, []float64{0.002, 0.0021, 2e-5, 0.0019, 0.0022, 0.002}, 1e9, 1e9, 72e9, 1e9, 1e9, 1e9), vmAlike),
			"host: background got 0.2% of a CPU to user-interactive's 99.8%, at 1.00x its speed per CPU-second (the effect is in CPU share; from 11 of 12 repeats; " +
				"left out background's repeat 3: work on under 0.1 ms of CPU time a thread, too little to read a speed from); " + vmAlikeText,
			ReadDiffers, ReadAlike, "in CPU share"},
		{"repeats without CPU time like the rest: k of n",
			join(hostHigh, cellObs("host", 9, 1, []float64{nan, nan, 0.002, 0.0021, 0.0019, 0.0022}, 2e6, 2e6, 1e9, 1e9, 1e9, 1e9), vmAlike),
			"host: background got 0.2% of a CPU to user-interactive's 99.8%, at 1.00x its speed per CPU-second (the effect is in CPU share; from 10 of 12 repeats); " + vmAlikeText,
			ReadDiffers, ReadAlike, "in CPU share"},
		// 2 of 6 repeats carry CPU time, at a full CPU; the others ran at
		// crumbs' rates: a host effect of hundreds, which those 2 cannot
		// describe.
		{"a subset unlike the rest is not described",
			join(hostHigh, cellObs("host", 9, 1, []float64{0.972, 0.97, nan, nan, nan, nan}, 1e9, 1e9, 2e6, 2e6, 2e6, 2e6), vmAlike),
			"host: background's CPU time is in 2 of its 6 repeats, whose rates differ from the others': not described from them; " + vmAlikeText,
			ReadNotEnough, ReadNotEnough, "not enough"},
		{"shares and speeds that cancel",
			join(hostHigh, cellObs("host", 9, 1, rep6(0.5), 2e9), vmAlike),
			"host: background got 50% of a CPU to user-interactive's 99.8%, at 2.00x its speed per CPU-second (the effect is in both share and speed, which cancel: share 0.50x, speed 2.00x); " + vmAlikeText,
			ReadDiffers, ReadDiffers, "in share and speed"},
		{"a speed gap in the VM without the host's view",
			join(hostHigh, cellObs("host", 9, 1, rep6(0.002), 1e9), cellObs("vm", 33, 1, rep6(0.99), 3e7), cellObs("vm", 9, 1, rep6(0.99), 1.5e7)),
			"host: background got 0.2% of a CPU to user-interactive's 99.8%, at 1.00x its speed per CPU-second (the effect is in CPU share); " +
				"vm: background got 99% of a vCPU to user-interactive's 99%, at 0.50x its speed (the effect is in speed; a speed gap in the VM without the host's view: the host may have taken the vCPU)",
			ReadDiffers, ReadAlike, "in CPU share"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Subsumption(Cells(c.obs), "fp", "", "host", "vm", DefaultMargins())
			assert.Equal(t, c.want, v.MechanismLine())
			require.Len(t, v.Mechanism, 2)
			assert.Equal(t, []Reading{c.share, c.speed}, []Reading{v.Mechanism[0].Share, v.Mechanism[0].Speed})
			assert.Equal(t, c.brief, v.Mechanism[0].Brief())
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
	assert.Equal(t, "host at 1 thread: background got 0.2% of a CPU to user-interactive's 87.8%, at 1.00x its speed per CPU-second (the effect is in CPU share); "+
		"host at 2 threads: background got 0.2% of a CPU to user-interactive's 53.6%, at 1.00x its speed (the effect is in CPU share); "+
		"vm: background got 99% of a vCPU to user-interactive's 99%, at 1.00x its speed (the classes ran alike)", v.MechanismLine())
	require.Len(t, v.Mechanism[0].ByThreads, 2)
	assert.Equal(t, []int{1, 2}, []int{v.Mechanism[0].ByThreads[0].Threads, v.Mechanism[0].ByThreads[1].Threads})
	assert.Empty(t, v.Mechanism[1].ByThreads, "the VM's thread counts agree")
	assert.Equal(t, "in CPU share at 1 thread, in CPU share at 2 threads", v.Mechanism[0].Brief())

	// The VM alike at 1 thread and a speed gap at 2: not "alike" pooled.
	vm2 := join(cellObs("vm", 33, 1, rep6(0.99), 3e7), cellObs("vm", 9, 1, rep6(0.99), 3e7),
		cellObs("vm", 33, 2, rep6(0.99), 3e7), cellObs("vm", 9, 2, rep6(0.99), 1.5e7))
	obs = join(cellObs("host", 33, 1, rep6(0.998), 1e9), cellObs("host", 9, 1, rep6(0.002), 1e9),
		cellObs("host", 33, 2, rep6(0.998), 1e9), cellObs("host", 9, 2, rep6(0.002), 1e9), vm2)
	v = Subsumption(Cells(obs), "fp", "", "host", "vm", DefaultMargins())
	assert.Equal(t, "alike at 1 thread, in speed at 2 threads", v.Mechanism[1].Brief())
	assert.Contains(t, v.MechanismLine(), "; vm at 1 thread: background got 99% of a vCPU to user-interactive's 99%, at 1.00x its speed (the classes ran alike); vm at 2 threads: ")
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
