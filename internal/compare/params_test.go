package compare

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// twoSizes are the cells of compress at 4 MiB and 32 MiB on host and vm at
// classes 9 and 33, one thread, 6 repeats: on the host 9 takes twice as
// long as 33, in the VM both alike.
func twoSizes() []analysis.Cell {
	var recs []results.Record
	for _, size := range []int64{32 << 20, 4 << 20} {
		p := catalog.Params{SizeBytes: size, Ratio: 3, Codec: "zstd", Sink: "null"}
		for _, target := range []string{"host", "vm"} {
			for _, q := range []int{33, 9} {
				for rep := 1; rep <= 6; rep++ {
					secs := float64(size) / 100e6 * (1 + 0.01*float64(rep))
					if target == "host" && q == 9 {
						secs *= 2
					}
					recs = append(recs, results.Record{Params: &p, Sample: results.Sample{Target: target, Workload: "compress", Phase: "compress",
						QoS: q, Threads: 1, Repeat: rep, EndNs: int64(secs * 1e9), Work: float64(size), Unit: "bytes", Rate: float64(size) / secs,
						QoSApplied: q, QoSFull: true}})
				}
			}
		}
	}
	return analysis.SortCells(results.CellsOf(recs))
}

// Two sizes of one workload are two verdicts in every run, two rows per
// machine, two findings and two tables, each named with its size; not one
// verdict over both.
func TestComparesEachSetOfParameters(t *testing.T) {
	cells := twoSizes()
	runs, common := judge([][]analysis.Cell{cells, cells}, []results.Run{{}, {}})
	require.Len(t, runs[0].verdicts, 2)
	machines := machineVerdicts([]Column{{Label: "a"}, {Label: "b"}}, runs)
	require.Len(t, machines, 4, "two sizes per run")
	for i, m := range machines {
		assert.True(t, strings.HasPrefix(m.Params, []string{"size=4194304", "size=33554432"}[i%2]), m.Params)
		assert.NotEqual(t, noOutcome, m.Outcome)
		assert.NotContains(t, m.Reason, "sets of parameters", "each set judged alone")
	}
	var subsumption []string
	for _, f := range findings(runs, common) {
		if f.Kind == KindSubsumption {
			subsumption = append(subsumption, f.Params)
		}
	}
	assert.Len(t, subsumption, 2)

	c := &Comparison{Columns: []Column{{Label: "a"}, {Label: "b"}}, Rows: rows([][]analysis.Cell{cells, cells}), Machines: machines}
	var titles []string
	for _, s := range c.Sections() {
		titles = append(titles, s.Title)
	}
	assert.Contains(t, titles, "compress size=4194304 ratio=3 codec=zstd level=0 sink=null (MB/s; median with its 95% interval)")
	assert.Contains(t, titles, "compress size=33554432 ratio=3 codec=zstd level=0 sink=null (MB/s; median with its 95% interval)")
	assert.Contains(t, c.MachineSection().Rows[0], "compress size=4194304 ratio=3 codec=zstd level=0 sink=null", "the WORKLOAD column names the size")
}

// The work row shows every parameter an entry sets, from their
// declarations: sink_path too, which it used to leave out.
func TestWorkTextShowsEveryParameter(t *testing.T) {
	assert.Equal(t, "loops 1e7", workText(spec.MatrixEntry{Workload: "fp", Params: catalog.Params{Loops: 1e7}}))
	assert.Equal(t, `size 16MiB, ratio 3, zstd level 3, sink file, sink_path "/scratch"`,
		workText(spec.MatrixEntry{Workload: "compress", Params: catalog.Params{SizeBytes: 16 << 20, Ratio: 3, Codec: "zstd", Level: 3, Sink: "file", SinkPath: "/scratch"}}))
	assert.Equal(t, "default", workText(spec.MatrixEntry{Workload: "fp"}))
}
