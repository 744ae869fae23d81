package render

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
)

// useObs are 6 repeats of one thread's 1 s record at share and speed
// (loops per CPU-second), with a wobble of a percent or so.
func useObs(target string, q, threads int, share, speed float64) []analysis.Observation {
	var out []analysis.Observation
	for r := 1; r <= 6; r++ {
		w := 1 + 0.004*(float64((r*5)%6)-2.5)
		sh, sp := share*w, speed/w*(1+0.001*float64(r))
		for i := 0; i < threads; i++ {
			out = append(out, analysis.Observation{CellKey: analysis.CellKey{Target: target, Workload: "fp", QoS: q, Threads: threads}, Repeat: r, Unit: "loops",
				StartNs: 0, EndNs: 1e9, Work: sh * sp, Rate: sh * sp, CPUNs: int64(sh * 1e9)})
		}
	}
	return out
}

func TestMechanismLine(t *testing.T) {
	join := func(parts ...[]analysis.Observation) []analysis.Observation {
		var out []analysis.Observation
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name string
		obs  []analysis.Observation
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
			v := analysis.Subsumption(analysis.Cells(c.obs), "fp", "", "host", "vm", analysis.DefaultMargins())
			assert.Equal(t, c.want, MechanismLine(v))
			require.Len(t, v.Mechanism, 2)
			assert.Equal(t, c.in, []string{string(v.Mechanism[0].In), string(v.Mechanism[1].In)})
			assert.Equal(t, []int{33, 9}, []int{v.Mechanism[0].Classes[0].QoS, v.Mechanism[0].Classes[1].QoS})
		})
	}

	// Records without CPU time (results schema before 1.2).
	var old []analysis.Observation
	for _, o := range join(useObs("host", 33, 1, 0.998, 1e9), useObs("host", 9, 1, 0.0024, 0.99e9), useObs("vm", 33, 1, 0.99, 3e7), useObs("vm", 9, 1, 0.99, 3e7)) {
		o.CPUNs = 0
		old = append(old, o)
	}
	v := analysis.Subsumption(analysis.Cells(old), "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, "not recorded: the records carry no CPU time (a run written before results schema 1.2), so share and speed cannot be told apart", MechanismLine(v))
	assert.Equal(t, analysis.EffectNotRecorded, v.Mechanism[0].In)
}

// repObs is one repeat's records of a cell: each of threads threads' 1 s
// record at share of a CPU and speed loops per CPU-second; share NaN
// records no CPU time (the thread's rate is then speed, in loops/s).
func repObs(target string, q, threads, rep int, share, speed float64) []analysis.Observation {
	var out []analysis.Observation
	for i := 0; i < threads; i++ {
		o := analysis.Observation{CellKey: analysis.CellKey{Target: target, Workload: "fp", QoS: q, Threads: threads}, Repeat: rep, Unit: "loops",
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
func cellObs(target string, q, threads int, shares []float64, speeds ...float64) []analysis.Observation {
	var out []analysis.Observation
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
		obs          []analysis.Observation
		want         string
		share, speed analysis.Reading // the host's
		brief        string           // the host's
	}{
		{"an interval across the bound cannot tell",
			join(hostHigh, cellObs("host", 9, 1, []float64{0.002, 0.98, 0.003, 0.002, 0.97, 0.0025}, 1e9), vmAlike),
			"host: background got 0.27% of a CPU to user-interactive's 99.8%, at 1.00x its speed per CPU-second (cannot tell whether the classes ran alike: " +
				"the share ratio's interval 0.00201x..0.97x reaches past 0.91x..1.10x); " + vmAlikeText,
			analysis.ReadCannotTell, analysis.ReadAlike, "cannot tell"},
		{"near-zero CPU time with work is left out",
			join(hostHigh, cellObs("host", 9, 1, []float64{0.002, 0.0021, 2e-5, 0.0019, 0.0022, 0.002}, 1e9, 1e9, 72e9, 1e9, 1e9, 1e9), vmAlike),
			"host: background got 0.2% of a CPU to user-interactive's 99.8%, at 1.00x its speed per CPU-second (the effect is in CPU share; from 11 of 12 repeats; " +
				"left out background's repeat 3: work on under 0.1 ms of CPU time a thread, too little to read a speed from); " + vmAlikeText,
			analysis.ReadDiffers, analysis.ReadAlike, "in CPU share"},
		{"repeats without CPU time like the rest: k of n",
			join(hostHigh, cellObs("host", 9, 1, []float64{nan, nan, 0.002, 0.0021, 0.0019, 0.0022}, 2e6, 2e6, 1e9, 1e9, 1e9, 1e9), vmAlike),
			"host: background got 0.2% of a CPU to user-interactive's 99.8%, at 1.00x its speed per CPU-second (the effect is in CPU share; from 10 of 12 repeats); " + vmAlikeText,
			analysis.ReadDiffers, analysis.ReadAlike, "in CPU share"},
		// 2 of 6 repeats carry CPU time, at a full CPU; the others ran at
		// crumbs' rates: a host effect of hundreds, which those 2 cannot
		// describe.
		{"a subset unlike the rest is not described",
			join(hostHigh, cellObs("host", 9, 1, []float64{0.972, 0.97, nan, nan, nan, nan}, 1e9, 1e9, 2e6, 2e6, 2e6, 2e6), vmAlike),
			"host: background's CPU time is in 2 of its 6 repeats, whose rates differ from the others': not described from them; " + vmAlikeText,
			analysis.ReadNotEnough, analysis.ReadNotEnough, "not enough"},
		{"shares and speeds that cancel",
			join(hostHigh, cellObs("host", 9, 1, rep6(0.5), 2e9), vmAlike),
			"host: background got 50% of a CPU to user-interactive's 99.8%, at 2.00x its speed per CPU-second (the effect is in both share and speed, which cancel: share 0.50x, speed 2.00x); " + vmAlikeText,
			analysis.ReadDiffers, analysis.ReadDiffers, "in share and speed"},
		{"a speed gap in the VM without the host's view",
			join(hostHigh, cellObs("host", 9, 1, rep6(0.002), 1e9), cellObs("vm", 33, 1, rep6(0.99), 3e7), cellObs("vm", 9, 1, rep6(0.99), 1.5e7)),
			"host: background got 0.2% of a CPU to user-interactive's 99.8%, at 1.00x its speed per CPU-second (the effect is in CPU share); " +
				"vm: background got 99% of a vCPU to user-interactive's 99%, at 0.50x its speed (the effect is in speed; a speed gap in the VM without the host's view: the host may have taken the vCPU)",
			analysis.ReadDiffers, analysis.ReadAlike, "in CPU share"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := analysis.Subsumption(analysis.Cells(c.obs), "fp", "", "host", "vm", analysis.DefaultMargins())
			assert.Equal(t, c.want, MechanismLine(v))
			require.Len(t, v.Mechanism, 2)
			assert.Equal(t, []analysis.Reading{c.share, c.speed}, []analysis.Reading{v.Mechanism[0].Share, v.Mechanism[0].Speed})
			assert.Equal(t, c.brief, MechanismBrief(v.Mechanism[0]))
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
	v := analysis.Subsumption(analysis.Cells(obs), "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, "host at 1 thread: background got 0.2% of a CPU to user-interactive's 87.8%, at 1.00x its speed per CPU-second (the effect is in CPU share); "+
		"host at 2 threads: background got 0.2% of a CPU to user-interactive's 53.6%, at 1.00x its speed (the effect is in CPU share); "+
		"vm: background got 99% of a vCPU to user-interactive's 99%, at 1.00x its speed (the classes ran alike)", MechanismLine(v))
	require.Len(t, v.Mechanism[0].ByThreads, 2)
	assert.Equal(t, []int{1, 2}, []int{v.Mechanism[0].ByThreads[0].Threads, v.Mechanism[0].ByThreads[1].Threads})
	assert.Empty(t, v.Mechanism[1].ByThreads, "the VM's thread counts agree")
	assert.Equal(t, "in CPU share", MechanismBrief(v.Mechanism[0]), "the figures differ by thread count, the words do not: said once")

	// The VM alike at 1 thread and a speed gap at 2: not "alike" pooled.
	vm2 := join(cellObs("vm", 33, 1, rep6(0.99), 3e7), cellObs("vm", 9, 1, rep6(0.99), 3e7),
		cellObs("vm", 33, 2, rep6(0.99), 3e7), cellObs("vm", 9, 2, rep6(0.99), 1.5e7))
	obs = join(cellObs("host", 33, 1, rep6(0.998), 1e9), cellObs("host", 9, 1, rep6(0.002), 1e9),
		cellObs("host", 33, 2, rep6(0.998), 1e9), cellObs("host", 9, 2, rep6(0.002), 1e9), vm2)
	v = analysis.Subsumption(analysis.Cells(obs), "fp", "", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, "alike at 1 thread, in speed at 2 threads", MechanismBrief(v.Mechanism[1]))
	assert.Contains(t, MechanismLine(v), "; vm at 1 thread: background got 99% of a vCPU to user-interactive's 99%, at 1.00x its speed (the classes ran alike); vm at 2 threads: ")
}

func join(parts ...[]analysis.Observation) []analysis.Observation {
	var out []analysis.Observation
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
