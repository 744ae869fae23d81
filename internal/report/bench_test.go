package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/results"
)

func benchDoc(targets ...string) *Bench {
	b := &Bench{}
	for _, t := range targets {
		for rep := 1; rep <= 3; rep++ {
			b.Samples = append(b.Samples,
				results.Sample{Target: t, Workload: "pi", QoS: 33, Threads: 1, Repeat: rep, EndNs: 1e9, Work: 1e6, Unit: "iterations", Rate: 1e6, QoSApplied: 33, QoSFull: true},
				results.Sample{Target: t, Workload: "compress", Phase: "compress", QoS: 33, Threads: 1, Repeat: rep, EndNs: 2e9, Work: 8e6, Unit: "bytes", Rate: 4e6, QoSApplied: 33, QoSFull: true})
			b.Runs = append(b.Runs,
				BenchRun{Target: t, Workload: "pi", QoS: 33, Threads: 1, Repeat: rep, Metrics: map[string]float64{"pi_estimate": 3.1415 + float64(rep)*1e-4, "pi_error": float64(rep) * 1e-4}},
				BenchRun{Target: t, Workload: "compress", QoS: 33, Threads: 1, Repeat: rep, Metrics: map[string]float64{"compression_ratio": 3 + float64(rep)/100}})
		}
	}
	return b
}

func TestBenchTableShowsPiAndRatio(t *testing.T) {
	for _, format := range []string{"table", "markdown"} {
		var out strings.Builder
		require.NoError(t, WriteBench(&out, format, benchDoc("host")))
		assert.Contains(t, out.String(), "pi 3.141700 (error 0.0002)", format+": the median estimate and error")
		assert.Contains(t, out.String(), "ratio 3.02:1", format)
	}
	var out strings.Builder
	require.NoError(t, WriteBench(&out, "table", benchDoc("host", "vm")))
	assert.Contains(t, out.String(), "host pi 3.141700 (error 0.0002), vm pi 3.141700 (error 0.0002)", "side by side, each target's")
}

func TestBenchIncompleteDoesNotRepeatTheError(t *testing.T) {
	b := benchDoc("host")
	b.Error = "cell 7/8 (host: fp qos=background threads=1 repeat=2) failed: agent channel closed"
	var out strings.Builder
	require.NoError(t, WriteBench(&out, "table", b))
	assert.Contains(t, out.String(), "incomplete: 6 cell runs finished before the run stopped")
	assert.NotContains(t, out.String(), "agent channel closed", "qoslab prints the error once, on stderr")
	out.Reset()
	require.NoError(t, WriteBench(&out, "json", b))
	assert.Contains(t, out.String(), "agent channel closed", "the JSON keeps it")
}

// bench shows each cell's CV beside its total rate, marks a cell whose
// repeats disagree with "!", and names it in a warning under the table.
func TestBenchFlagsDisagreeingRepeats(t *testing.T) {
	b := &Bench{}
	for rep, bg := range []float64{1.6e6, 527e6, 1.7e6} {
		b.Samples = append(b.Samples,
			results.Sample{Target: "host", Workload: "fp", QoS: 9, Threads: 1, Repeat: rep + 1, EndNs: 1e9, Work: bg, Unit: "loops", Rate: bg, QoSApplied: 9, QoSFull: true},
			results.Sample{Target: "host", Workload: "fp", QoS: 33, Threads: 1, Repeat: rep + 1, EndNs: 1e9, Work: 300e6, Unit: "loops", Rate: 300e6, QoSApplied: 33, QoSFull: true})
	}
	want := "warning: host fp qos=9 threads=1: repeats range 1.6M..527M loops/s (329x apart); the machine was busy or contention did not hold"
	for _, format := range []string{"table", "markdown"} {
		var out strings.Builder
		require.NoError(t, WriteBench(&out, format, b))
		// mean 176.77M, sd sqrt(183995/2) = 303.3M: cv 171.6%.
		assert.Contains(t, out.String(), "1.7M [1.6M..527M] cv 171.6% !", format)
		assert.Contains(t, out.String(), "300M [300M..300M] cv 0.0%", format)
		assert.NotContains(t, out.String(), "300M [300M..300M] cv 0.0% !", format)
		assert.Contains(t, out.String(), want, format)
		assert.Equal(t, 1, strings.Count(out.String(), "warning:"), format)
	}
}

// compare marks only the rows whose sample sizes cannot reach p < 0.05,
// whatever the change, and its footer names each such pair of sizes once.
func TestWriteChangesMarksRowsThatCannotBeSignificant(t *testing.T) {
	cell := func(q, threads int, rates ...float64) analysis.Cell {
		var obs []analysis.Observation
		for i, r := range rates {
			obs = append(obs, analysis.Observation{CellKey: analysis.CellKey{Target: "host", Workload: "fp", QoS: q, Threads: threads},
				Repeat: i + 1, Unit: "loops", EndNs: 1e9, Work: r, Rate: r})
		}
		return analysis.Cells(obs)[0]
	}
	old := []analysis.Cell{
		cell(9, 1, 100, 101, 99),                 // 3 vs 3: smallest p 0.1
		cell(9, 2, 100, 101, 99, 98, 102, 100.5), // 6 vs 6: 0.0022
		cell(9, 3, 1e6, 1.01e6, 0.99e6),          // 3 vs 5: 2/56 = 0.036
		cell(9, 4, 100, 101),                     // 2 vs 3: 0.2
	}
	new := []analysis.Cell{
		cell(9, 1, 300, 303, 297),
		cell(9, 2, 300, 303, 297, 301, 299, 298),
		cell(9, 3, 4e3, 4.1e3, 3.9e3, 4.05e3, 3.95e3),
		cell(9, 4, 300, 303, 297),
	}
	var out strings.Builder
	require.NoError(t, WriteChanges(&out, "old", "new", analysis.Changes(old, new)))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 7, out.String())
	assert.Regexp(t, `\s~\s+p=0\.1 \*$`, lines[1], "3 vs 3: a 3x change cannot be significant, and the row says so")
	assert.Regexp(t, `\s\+198\.8%\s+p=0\.0022$`, lines[2], "6 vs 6 reaches it: medians 100.25 and 299.5")
	assert.Regexp(t, `\s-99\.6%\s+p=0\.036$`, lines[3], "3 vs 5 reaches it (2/56) when every new repeat is below every old one")
	assert.Regexp(t, `\s~\s+p=0\.2 \*$`, lines[4])
	assert.Equal(t, "rows marked * cannot reach p<0.05 with these repeats (2 vs 3: smallest p 0.2; 3 vs 3: smallest p 0.1), however large the change: use 6 or more repeats", lines[6])
}
