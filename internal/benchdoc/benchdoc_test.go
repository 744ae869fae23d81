package benchdoc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/results"
)

// wide is a terminal wide enough for every column and every note on one
// line, so that the content can be read whole.
var wide = Terminal{Width: 1000}

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
		require.NoError(t, WriteBench(&out, format, benchDoc("host"), wide))
		assert.Contains(t, out.String(), "pi 3.141700 (error 0.0002)", format+": the median estimate and error")
		assert.Contains(t, out.String(), "ratio 3.02:1", format)
	}
	var out strings.Builder
	require.NoError(t, WriteBench(&out, "table", benchDoc("host", "vm"), wide))
	assert.Contains(t, out.String(), "host pi 3.141700 (error 0.0002), vm pi 3.141700 (error 0.0002)", "side by side, each target's")
}

func TestBenchIncompleteDoesNotRepeatTheError(t *testing.T) {
	b := benchDoc("host")
	b.Error = "cell 7/8 (host: fp qos=background threads=1 repeat=2) failed: agent channel closed"
	var out strings.Builder
	require.NoError(t, WriteBench(&out, "table", b, wide))
	assert.Contains(t, out.String(), "incomplete: 6 cell runs finished before the run stopped")
	assert.NotContains(t, out.String(), "agent channel closed", "qoslab prints the error once, on stderr")
	out.Reset()
	require.NoError(t, WriteBench(&out, "json", b, wide))
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
	want := "host fp qos=9 threads=1: repeats range 1.6M..527M loops/s (329x apart): the records carry no CPU time (a run written before results schema 1.2), " +
		"so whether the threads lost CPU share or speed cannot be told"
	for _, format := range []string{"table", "markdown"} {
		var out strings.Builder
		require.NoError(t, WriteBench(&out, format, b, wide))
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

// bench's JSON has each cell's summary beside the samples: median and its
// interval, CV, max/min and the flag, as summary.json's cells.
func TestBenchJSONHasCellSummaries(t *testing.T) {
	b := &Bench{}
	for rep, rate := range []float64{1e6, 1.1e6, 0.9e6, 5e8, 5.1e8, 4.9e8} {
		b.Samples = append(b.Samples, results.Sample{Target: "host", Workload: "fp", QoS: 9, Threads: 1, Repeat: rep + 1, EndNs: 1e9, Work: rate, Unit: "loops", Rate: rate, QoSApplied: 9, QoSFull: true})
	}
	var out strings.Builder
	require.NoError(t, WriteBench(&out, "json", b, wide))
	var doc struct {
		Cells []struct {
			Target    string `json:"target"`
			TotalRate struct {
				N      int     `json:"n"`
				Median float64 `json:"median"`
				Min    float64 `json:"min"`
				Max    float64 `json:"max"`
				CILow  float64 `json:"ci_low"`
				CIHigh float64 `json:"ci_high"`
			} `json:"total_rate"`
			Dispersion struct {
				CV     float64 `json:"cv"`
				MaxMin float64 `json:"max_min"`
				Flag   string  `json:"flag"`
			} `json:"dispersion"`
		} `json:"cells"`
		Warnings []string         `json:"warnings"`
		Samples  []results.Sample `json:"samples"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.String()), &doc))
	require.Len(t, doc.Cells, 1)
	c := doc.Cells[0]
	assert.Equal(t, 6, c.TotalRate.N)
	assert.InDelta(t, (1.1e6+4.9e8)/2, c.TotalRate.Median, 1)
	assert.Equal(t, 0.9e6, c.TotalRate.Min)
	assert.Equal(t, 5.1e8, c.TotalRate.Max)
	assert.LessOrEqual(t, c.TotalRate.CILow, c.TotalRate.Median)
	assert.Positive(t, c.Dispersion.CV)
	assert.InDelta(t, 5.1e8/0.9e6, c.Dispersion.MaxMin, 1e-6)
	assert.Contains(t, c.Dispersion.Flag, "repeats fall in two groups", "two groups 500x apart, worded in the document")
	require.Len(t, doc.Warnings, 1)
	assert.Contains(t, doc.Warnings[0], "host fp qos=9 threads=1")
	assert.Len(t, doc.Samples, 6, "the samples stay")
}

// One symbol, one meaning: "!" marks only repeats that disagree, and its
// legend is under the table; a class not applied is said in words.
func TestBenchNotationOneSymbolPerMeaning(t *testing.T) {
	b := &Bench{}
	for rep, rate := range []float64{1e6, 1.1e6, 0.9e6, 5e8, 5.1e8, 4.9e8} {
		b.Samples = append(b.Samples,
			results.Sample{Target: "host", Workload: "fp", QoS: 9, Threads: 1, Repeat: rep + 1, EndNs: 1e9, Work: rate, Unit: "loops", Rate: rate, QoSApplied: 9, QoSFull: true},
			results.Sample{Target: "host", Workload: "fp", QoS: 33, Threads: 1, Repeat: rep + 1, EndNs: 1e9, Work: 1e8, Unit: "loops", Rate: 1e8, QoSApplied: 21, QoSFull: false, QoSReason: "no CAP_SYS_NICE"})
	}
	var out strings.Builder
	require.NoError(t, WriteBench(&out, "table", b, wide))
	text := out.String()
	assert.Contains(t, text, "cv ")
	assert.Equal(t, 1, strings.Count(text, "% !"), "the disagreeing cell is marked:\n%s", text)
	assert.Contains(t, text, "\n- !: the repeats disagree", "its legend under the table")
	assert.Contains(t, text, "default (other class)")
	assert.NotContains(t, text, "default !")
	assert.Equal(t, 1, strings.Count(text, "warning: host fp qos=9 threads=1"), "its warning once:\n%s", text)
}

// A VM in the vz model is said to be QEMU's, under the table and in the
// JSON (and in the report's platform line: report's test): never taken for
// a Mac.
func TestVZModelIsSaidToBeQEMUs(t *testing.T) {
	b := benchDoc("host", "vm")
	b.Machines = map[string]hv.MachineInfo{"vm": {Backend: "qemu", Accel: "tcg", Model: hv.ModelVZ}}
	var out strings.Builder
	require.NoError(t, WriteBench(&out, "table", b, wide))
	assert.Contains(t, out.String(), "vm: qemu (tcg), device model vz: the guest laid out as Virtualization.framework lays it out, emulated by qemu; a test of the guest a Mac boots, not a measurement of Virtualization.framework or of a Mac.")

	out.Reset()
	require.NoError(t, WriteBench(&out, "json", b, wide))
	assert.Contains(t, out.String(), `"backend": "qemu"`)
	assert.Contains(t, out.String(), `"model": "vz"`)

	b.Machines = map[string]hv.MachineInfo{"vm": {Backend: "qemu", Accel: "tcg"}}
	out.Reset()
	require.NoError(t, WriteBench(&out, "table", b, wide))
	assert.NotContains(t, out.String(), "device model", "the backend's own model needs no word")
}

// A repeat that did no work (rate 0) is left out of bench's n and rates
// alike, and counted beside n, with its legend under the table.
func TestBenchLeavesIdleRepeatsOut(t *testing.T) {
	for _, targets := range [][]string{{"host"}, {"host", "vm"}} {
		b := &Bench{}
		for _, target := range targets {
			for rep, rate := range []float64{2e6, 0, 2.2e6, 0, 2.1e6, 1.9e6} {
				b.Samples = append(b.Samples, results.Sample{Target: target, Workload: "fp", QoS: 9, Threads: 1, Repeat: rep + 1, EndNs: 1e9, Work: rate, Unit: "loops", Rate: rate, QoSApplied: 9, QoSFull: true})
			}
		}
		for _, format := range []string{"table", "markdown"} {
			var out strings.Builder
			require.NoError(t, WriteBench(&out, format, b, wide))
			assert.Contains(t, out.String(), "4 (+2 idle)", "%v %s: the idle repeats beside n", targets, format)
			assert.Contains(t, out.String(), "2.05M [1.9M..2.2M]", "%v %s: median, min and max of the 4 that did work", targets, format)
			assert.Contains(t, out.String(), "n (+k idle): k repeats did no work", "%v %s", targets, format)
		}
	}
}
