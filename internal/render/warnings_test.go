package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/hostview"
)

// A flag says why, with the range in SI, the two groups, or the repeats
// that did no work.
func TestFlag(t *testing.T) {
	assert.Equal(t, "repeats range 1.6M..527M loops/s (329x apart)", Flag(analysis.Disperse([]float64{1.6e6, 527e6, 2.1e6}, "loops/s")))
	assert.Equal(t, "repeats fall in two groups: 3 near 1.55M and 3 near 527M loops/s",
		Flag(analysis.Disperse([]float64{1.50e6, 527e6, 1.55e6, 530e6, 1.61e6, 525e6}, "loops/s")))
	assert.Equal(t, "repeats range 100..800 loops/s (8x apart)", Flag(analysis.Disperse([]float64{100, 150, 220, 330, 500, 800}, "loops/s")))
	var two []float64
	for i := range 10 {
		two = append(two, 100+float64(i), 400+float64(i)*4)
	}
	assert.Equal(t, "repeats fall in two groups: 10 near 104.5 and 10 near 418 loops/s", Flag(analysis.Disperse(two, "loops/s")))
	assert.Equal(t, "2 of 6 repeats did no work (rate 0)", Flag(analysis.Disperse([]float64{0, 5e6, 5.1e6, 0, 4.9e6, 5e6}, "loops/s")))
	assert.Empty(t, Flag(analysis.Disperse([]float64{1, 2.9}, "loops/s")), "under 3x")
}

// A verdict resting on a flagged cell names its flag in short.
func TestFlagText(t *testing.T) {
	c := analysis.Cell{CellKey: analysis.CellKey{Target: "vm", Workload: "fp", QoS: 9, Threads: 1},
		Dispersion: analysis.Disperse([]float64{0, 5e6, 5.1e6, 0, 4.9e6, 5e6}, "loops/s")}
	assert.Equal(t, "did no work in 2 of 6 repeats", FlagText(c))
	c.Dispersion = analysis.Disperse([]float64{1e6, 77e6, 1.5e6}, "loops/s")
	assert.Equal(t, "repeats 77x apart", FlagText(c))
	c.Dispersion = analysis.Disperse([]float64{1e6, 1.5e6, 1e6, 50e6, 52e6, 51e6}, "loops/s")
	assert.Equal(t, "repeats fall in two groups (3 near 1M, 3 near 51M)", FlagText(c))
	c.Dispersion = analysis.Disperse([]float64{1e6, 1.1e6, 1.05e6}, "loops/s")
	assert.Empty(t, FlagText(c))
}

// A document writes each dispersion's flag in words, and leaves the cells
// it was given as they were.
func TestWithFlags(t *testing.T) {
	sd := analysis.Disperse([]float64{1.29, 5.2, 1.3}, "s")
	cells := []analysis.Cell{{Dispersion: analysis.Disperse([]float64{1, 5}, "loops/s"), SecondsDispersion: &sd}}
	got := WithFlags(cells)
	assert.Equal(t, "repeats range 1..5 loops/s (5x apart)", got[0].Dispersion.FlagWords)
	assert.Equal(t, "repeats range 1.29..5.2 s (4.03x apart)", got[0].SecondsDispersion.FlagWords)
	assert.Empty(t, cells[0].Dispersion.FlagWords)
	assert.Empty(t, sd.FlagWords)
	assert.Nil(t, WithFlags(nil))
}

func TestDispersionWarnings(t *testing.T) {
	// obs is one thread's 1 s record at a CPU share and a speed (loops per
	// CPU-second): its rate is their product; share 0 records no CPU time.
	obs := func(target string, q, rep int, share, speed float64) analysis.Observation {
		rate := share * speed
		cpu := int64(share * 1e9)
		if share == 0 {
			rate = speed
		}
		return analysis.Observation{CellKey: analysis.CellKey{Target: target, Workload: "fp", QoS: q, Threads: 1}, Repeat: rep, Unit: "loops",
			StartNs: 0, EndNs: 1e9, Work: rate, Rate: rate, CPUNs: cpu, Contention: 2}
	}
	cells := func(target string, q int, shares, speeds []float64, more ...analysis.Observation) []analysis.Cell {
		out := more
		for i := range shares {
			out = append(out, obs(target, q, i+1, shares[i], speeds[i]), obs(target, 33, i+1, 0.998, 1e9))
		}
		return analysis.Cells(out)
	}
	same := func(x float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = x
		}
		return out
	}
	cases := []struct {
		name  string
		cells []analysis.Cell
		want  string
	}{
		{"not recorded", cells("host", 9, same(0, 3), []float64{1.6e6, 527e6, 1.7e6}),
			"host fp qos=9 threads=1: repeats range 1.6M..527M loops/s (329x apart): the records carry no CPU time (a run written before results schema 1.2), " +
				"so whether the threads lost CPU share or speed cannot be told"},
		{"a starved class", cells("host", 9, []float64{0.0005, 0.025, 0.005, 0.002, 0.001, 0.003}, same(1e9, 6)),
			"host fp qos=9 threads=1: repeats range 500k..25M loops/s (50x apart): a starved class: background got 0.05%..2.5% of a CPU across repeats, " +
				"against user-interactive's 99.8%, at a steady speed per CPU-second (1x apart); what a thread kept off the CPU gets varies by nature, " +
				"so under contention this is expected, not a data problem"},
		{"contention did not hold", cells("host", 9, []float64{0.002, 0.98, 0.003, 0.002, 0.97, 0.0025}, same(1e9, 6)),
			"host fp qos=9 threads=1: repeats fall in two groups: 4 near 2.25M and 2 near 975M loops/s: background got 98% and 97% of a CPU in repeats 2 and 5, " +
				"near user-interactive's 99.8%, where its other repeats got 0.2%..0.3%: contention did not hold in those repeats"},
		// The run that had its spinners stopped for one repeat.
		{"contention did not hold in one repeat", cells("host", 9, []float64{0.003, 0.005, 0.774, 0.002, 0.006, 0.004}, same(1e9, 6)),
			"host fp qos=9 threads=1: repeats range 2M..774M loops/s (387x apart): background got 77.4% of a CPU in repeat 3, " +
				"near user-interactive's 99.8%, where its other repeats got 0.2%..0.6%: contention did not hold in that repeat"},
		// At 2 threads a stopped spinner frees a thread's worth of CPU for
		// two: the share that far above the crumbs is under the starved
		// limit, and still contention failing, not a crumb.
		{"contention did not hold far above the crumbs", cells("host", 9, []float64{0.0033, 0.423, 0.004, 0.005, 0.0035, 0.006}, same(1e9, 6)),
			"host fp qos=9 threads=1: repeats range 3.3M..423M loops/s (128x apart): background got 42.3% of a CPU in repeat 2, " +
				"over 10x its median 0.45%, where its other repeats got 0.33%..0.6%: contention did not hold in that repeat"},
		// Inside a guest no spinner decides: a class the guest starved is
		// the finding.
		{"a class starved inside the guest", cells("vm", 9, []float64{0.0005, 0.025, 0.005, 0.002, 0.001, 0.003}, same(1e9, 6)),
			"vm fp qos=9 threads=1: repeats range 500k..25M loops/s (50x apart): a class starved inside the guest: background got 0.05%..2.5% of a vCPU across repeats, " +
				"against user-interactive's 99.8%: the guest's scheduler kept it off its vCPUs, which is a finding about the VM, not noise of the host's contention"},
		// CPU time in 2 of 6 repeats: their shares cannot say what happened
		// in the other 4.
		{"CPU time in some repeats only", cells("host", 9, []float64{0.972, 0.97, 0, 0, 0, 0}, []float64{1e9, 1e9, 2e6, 2.1e6, 1.9e6, 2e6}),
			"host fp qos=9 threads=1: repeats fall in two groups: 4 near 2M and 2 near 971M loops/s: CPU time is in only 2 of its 6 repeats that did work (repeats 1 and 2), " +
				"so whether the threads lost CPU share or speed cannot be told"},
		{"the high class lost share", analysis.Cells([]analysis.Observation{obs("host", 33, 1, 0.99, 1e9), obs("host", 33, 2, 0.2, 1e9), obs("host", 33, 3, 0.99, 1e9),
			obs("host", 33, 4, 0.25, 1e9), obs("host", 33, 5, 0.98, 1e9)}),
			"host fp qos=33 threads=1: repeats fall in two groups: 2 near 225M and 3 near 990M loops/s: the machine was busy: user-interactive got only 20% and 25% of a CPU in repeats 2 and 4, " +
				"where its other repeats got 98%..99%: something else took the CPU"},
		// A busy machine took most of the CPU from the high class: its
		// median share is low, and it is still not a starved class.
		{"the high class lost share on a busy machine", analysis.Cells([]analysis.Observation{obs("host", 33, 1, 0.73, 1e9), obs("host", 33, 2, 0.19, 1e9), obs("host", 33, 3, 0.26, 1e9),
			obs("host", 33, 4, 0.7, 1e9), obs("host", 33, 5, 0.21, 1e9)}),
			"host fp qos=33 threads=1: repeats range 190M..730M loops/s (3.84x apart): the machine was busy: user-interactive got only 19%, 26% and 21% of a CPU in repeats 2, 3 and 5, " +
				"where its other repeats got 70%..73%: something else took the CPU"},
		// Crumbs 28x apart at speeds 1.4x apart: the share explains it.
		{"a starved class whose speed varied less", cells("host", 9, []float64{0.0005, 0.014, 0.002, 0.006, 0.001, 0.004}, []float64{1e9, 1.1e9, 0.72e9, 1e9, 1e9, 1.02e9}),
			"host fp qos=9 threads=1: repeats range 500k..15.4M loops/s (30.8x apart): a starved class: background got 0.05%..1.4% of a CPU across repeats, " +
				"against user-interactive's 99.8%, while its speed per CPU-second varied only 1.53x; what a thread kept off the CPU gets varies by nature, " +
				"so under contention this is expected, not a data problem"},
		{"a vCPU's speed varied", cells("vm", 9, same(0.99, 3), []float64{1e9, 0.25e9, 1e9}),
			"vm fp qos=9 threads=1: repeats range 247.5M..990M loops/s (4x apart): the host was busy: its speed per vCPU-second varied 4x across repeats, " +
				"slowest in repeat 2 (250M loops/CPU-s): the host ran the vCPU less, or slower, than the guest saw"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, []string{c.want}, DispersionWarnings(c.cells, "fp", ""))
			assert.Empty(t, DispersionWarnings(c.cells, "int", ""))
		})
	}

	// Neither share nor speed: the same threads at the same share and
	// speed, but in one repeat the second started a second late.
	var late []analysis.Observation
	for r := 1; r <= 3; r++ {
		start := int64(0)
		if r == 2 {
			start = 3e9
		}
		late = append(late,
			analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: 2}, Repeat: r, Unit: "loops", StartNs: 0, EndNs: 1e9, Work: 1e9, CPUNs: 1e9},
			analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "fp", QoS: 33, Threads: 2}, Repeat: r, Unit: "loops", StartNs: start, EndNs: start + 1e9, Work: 1e9, CPUNs: 1e9})
	}
	assert.Equal(t, []string{"host fp qos=33 threads=2: repeats range 500M..2G loops/s (4x apart): neither its CPU share (100%) nor its speed per CPU-second (1x apart) explains it"},
		DispersionWarnings(analysis.Cells(late), "fp", ""))
}

// A compression cell's repeats are also judged by their times, and its
// warning gives them in seconds; other cells have no time dispersion.
func TestCellsTimeDispersionForPhases(t *testing.T) {
	var samples []analysis.Observation
	for i, secs := range []float64{1.3, 1.32, 5.2, 1.31, 1.29, 1.3} {
		samples = append(samples,
			analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "compress", Phase: "compress", QoS: 9, Threads: 1}, Repeat: i + 1, Unit: "bytes",
				StartNs: 0, EndNs: int64(secs * 1e9), Work: 1 << 30, Rate: (1 << 30) / secs},
			analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "fp", QoS: 9, Threads: 1}, Repeat: i + 1, Unit: "loops",
				StartNs: 0, EndNs: int64(secs * 1e9), Work: 1e8, Rate: 1e8 / secs})
	}
	cells := analysis.Cells(samples)
	require.Len(t, cells, 2)
	comp, fp := cells[0], cells[1]
	require.NotNil(t, comp.SecondsDispersion)
	assert.Nil(t, fp.SecondsDispersion, "a cell without phases is judged by its rates")
	assert.InDelta(t, 5.2/1.29, float64(comp.SecondsDispersion.MaxMin), 1e-9)
	assert.InDelta(t, float64(comp.Dispersion.MaxMin), float64(comp.SecondsDispersion.MaxMin), 1e-6, "the same work: max/min of times is that of rates")
	assert.Equal(t, "repeats range 1.29..5.2 s (4.03x apart)", CellFlag(comp))
	assert.Equal(t, Flag(*comp.SecondsDispersion), CellFlag(comp))
	assert.Equal(t, Flag(fp.Dispersion), CellFlag(fp))
	assert.Contains(t, CellFlag(fp), "loops/s")
	assert.Equal(t, []string{"host compress qos=9 threads=1: repeats range 1.29..5.2 s (4.03x apart): the records carry no CPU time (a run written before results schema 1.2), " +
		"so whether the threads lost CPU share or speed cannot be told"},
		DispersionWarnings(cells, "compress", "compress"))
}

// interferenceReport is three interfered runs of a VM's 12 at 2 threads,
// as the interference rule reports them.
func interferenceReport() analysis.InterferenceReport {
	k := analysis.CellKey{Target: "vm", Workload: "fp", QoS: 9, Threads: 2}
	py := []hostview.Process{{PID: 30353, Name: "python3", CPUNs: 5e8}, {PID: 7, Name: "mds", CPUNs: 1e8}}
	var runs []analysis.InterferedRun
	for _, r := range []int{1, 3, 5} {
		runs = append(runs, analysis.InterferedRun{CellKey: k, Repeat: r, VCPUShare: 1.1, Norm: 1.9, Deficit: 0.8, OtherCPU: 0.5, Others: py})
	}
	return analysis.InterferenceReport{Kind: analysis.InterferenceSome, Rule: analysis.DefaultInterferenceRule(), Judged: 12, Runs: runs,
		Norms: []analysis.InterferenceNorm{{Target: "vm", Workload: "fp", Threads: 2, Share: 1.9, Runs: 12}}, OtherCPU: 0.5, Others: py}
}

// The interference warning says how much, during how many, who, what the
// vCPUs got against the norm, which runs, the rule, and what the verdict
// does with them.
func TestInterference(t *testing.T) {
	rep := interferenceReport()
	assert.Equal(t, "other work on the host took 0.5 CPU during 3 of 12 vm cell runs (python3, pid 30353): their vCPUs got 1.1 host CPUs against the run's 1.9 at 2 threads "+
		"(vm fp qos=9 threads=2 repeats 1, 3 and 5); a VM cell run counts as interfered when its vCPUs got more than 0.15 host CPU (or 3 robust spreads of the run's cell runs) "+
		"below the run's median at its thread count while other work took 0.1 CPU or more; the verdict judges the cell runs without them; "+
		"measured again with the host otherwise idle, they would count", Interference(rep, true))
	assert.NotContains(t, Interference(rep, false), "the verdict judges")
	assert.Empty(t, Interference(analysis.InterferenceReport{Kind: analysis.InterferenceNone, Judged: 12}, false), "none interfered: nothing to say")
}

// What other work took is said beside the verdict with what it did to the
// VM's cell runs, and nothing where the host was idle or not read.
func TestOtherWorkLine(t *testing.T) {
	rep := interferenceReport()
	w := &analysis.OtherWork{Runs: 12, Busy: 3, Median: 0.02, Max: 0.5, Others: rep.Others}
	v := analysis.Verdict{OtherWork: w, Interference: &rep}
	assert.Equal(t, "other work on the host took 0.02 CPU in the median cell run (0.5 CPU at most), 0.1 CPU or more in 3 of 12 (python3, pid 30353); "+
		"3 of 12 VM cell runs got clearly less of the host than the run's norm (see the warning)", OtherWorkLine(v))
	v.Interference = &analysis.InterferenceReport{Kind: analysis.InterferenceNone, Judged: 12}
	assert.Contains(t, OtherWorkLine(v), "; none of the 12 VM cell runs got clearly less of the host than the run's norm, so none was left out")
	v.Interference = nil
	assert.Contains(t, OtherWorkLine(v), "; the VM's vCPU threads were not read")
	v.OtherWork = &analysis.OtherWork{Runs: 12, Median: 0.02, Max: 0.05}
	assert.Empty(t, OtherWorkLine(v), "an idle host: nothing to say")
	v.OtherWork = nil
	assert.Empty(t, OtherWorkLine(v), "not recorded: nothing said")
}

// A flagged cell's warning ends with what it does to the verdict.
func TestCellWarningEffects(t *testing.T) {
	c := analysis.Cell{CellKey: analysis.CellKey{Target: "host", Workload: "fp", QoS: 9, Threads: 1}, Unit: "loops",
		Dispersion: analysis.Disperse([]float64{975e3, 77.38e6, 2e6}, "loops/s")}
	w := analysis.CellWarning{Cell: c, Cause: analysis.FlagCause{Kind: analysis.CauseNoCPUTime}}
	head := "host fp qos=9 threads=1: repeats range 975k..77.38M loops/s (79.4x apart): the records carry no CPU time " +
		"(a run written before results schema 1.2), so whether the threads lost CPU share or speed cannot be told"
	assert.Equal(t, head, CellWarning(w))
	w.Effect = analysis.EffectCannotChange
	assert.Equal(t, head+"; it cannot change this verdict: at its most adverse repeats the answer stays yes", CellWarning(w))
	w.Effect = analysis.EffectBlocks
	assert.Equal(t, head+"; at its most adverse repeats the answer would not be yes, so it keeps this verdict inconclusive", CellWarning(w))
	w.Effect, w.LeftOut = analysis.EffectLeftOut, []int{2, 4}
	assert.Equal(t, head+"; the verdict leaves out its interfered cell runs (repeats 2 and 4)", CellWarning(w))
}

// A verdict's warnings are the interference warning first, then its
// workload's flagged cells, each with what it does to the verdict: here the
// cell whose interfered runs the verdict leaves out.
func TestVerdictWarnings(t *testing.T) {
	rep := interferenceReport()
	k := rep.Runs[0].CellKey
	flagged := analysis.Cell{CellKey: k, Unit: "loops", Repeats: []int{1, 2, 3, 4, 5, 6},
		Dispersion: analysis.Disperse([]float64{1e6, 77e6, 1.5e6, 1.2e6, 1.1e6, 1.3e6}, "loops/s")}
	other := flagged
	other.Workload = "int"
	v := analysis.Verdict{Host: analysis.Sensitivity{Workload: "fp"}, Interference: &rep}
	got := VerdictWarnings(v, []analysis.Cell{flagged, other})
	require.Len(t, got, 2, "the interference warning and the fp cell's; the int cell is another verdict's")
	assert.Equal(t, Interference(rep, true), got[0])
	assert.Equal(t, "vm fp qos=9 threads=2: repeats range 1M..77M loops/s (77x apart): the records carry no CPU time (a run written before results schema 1.2), "+
		"so whether the threads lost CPU share or speed cannot be told; the verdict leaves out its interfered cell runs (repeats 1, 3 and 5)", got[1])

	v.Interference = nil
	assert.Equal(t, []string{strings.TrimSuffix(got[1], "; the verdict leaves out its interfered cell runs (repeats 1, 3 and 5)")},
		VerdictWarnings(v, []analysis.Cell{flagged}), "nothing interfered: the cell alone, nothing left out")
}
