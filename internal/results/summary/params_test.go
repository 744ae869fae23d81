package summary

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

const (
	size4M  = 4 << 20
	size32M = 32 << 20
)

// compressRecords are the records of compress cells on targets at classes
// qs, one thread, repeats 1..n, one set per size: a cell run's time grows
// with its size, and on the host class 9 takes twice as long as 33.
func compressRecords(targets []string, qs []int, sizes []int64, n int) []results.Record {
	var out []results.Record
	for _, size := range sizes {
		p := catalog.Params{SizeBytes: size, Ratio: 3, Codec: "zstd", Sink: "null"}
		for _, target := range targets {
			for _, q := range qs {
				for rep := 1; rep <= n; rep++ {
					secs := float64(size) / 100e6 * (1 + 0.01*float64(rep))
					if target == "host" && q == 9 {
						secs *= 2
					}
					end := int64(secs * 1e9)
					k := catalog.SeriesKey{Target: target, Workload: "compress", QoS: q, Threads: 1, Params: p}
					out = append(out, results.Record{SchemaVersion: "1.1", Cell: k.String(), RunRecords: 1, Params: &p,
						Sample: results.Sample{Target: target, Workload: "compress", Phase: "compress", QoS: q, Threads: 1, Repeat: rep,
							EndNs: end, Work: float64(size), Unit: "bytes", Rate: float64(size) / secs, QoSApplied: q, QoSFull: true}})
				}
			}
		}
	}
	return out
}

// The case: two compress entries that differ only in their size,
// 3 repeats each, host only. Every record is in samples.jsonl; the summary
// once showed one row, n 3, from one of the two sizes.
func TestTwoSizesOfOneWorkloadAreTwoCells(t *testing.T) {
	recs := compressRecords([]string{"host"}, []int{33}, []int64{size4M, size32M}, 3)
	a := analyze(results.CellsOf(recs), results.Samples(recs))
	require.Len(t, a.Cells, 2, "one cell per size")
	for i, size := range []string{"size=4194304", "size=33554432"} {
		c := a.Cells[i]
		assert.Equal(t, 3, c.TotalRate.N, "n of %s", c.Params)
		assert.True(t, strings.HasPrefix(c.Params, size), "cells in size order: %q", c.Params)
	}
	assert.Greater(t, float64(a.Cells[0].TotalRate.Median), 0.0)
	assert.InDelta(t, 8, float64(a.Cells[1].Seconds.Median)/float64(a.Cells[0].Seconds.Median), 0.01, "each cell holds its own size's repeats")

	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, a))
	assert.Contains(t, md.String(), "compress size=4194304 ratio=3 codec=zstd level=0 sink=null")
	assert.Contains(t, md.String(), "compress size=33554432 ratio=3 codec=zstd level=0 sink=null")

	var buf bytes.Buffer
	require.NoError(t, writeCSV(&buf, a.Cells))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3, "header and a row per size")
	last := len(rows[0]) - 1
	assert.Equal(t, "params", rows[0][last])
	assert.Equal(t, a.Cells[0].Params, rows[1][last])
	assert.Equal(t, a.Cells[1].Params, rows[2][last])
	for _, row := range rows[1:] {
		assert.Equal(t, "3", row[4], "n")
	}
}

// A run that measured each workload one way names its cells as it always
// did: no parameters in their keys, whatever they were.
func TestOneSizeLeavesTheKeyAsItWas(t *testing.T) {
	recs := compressRecords([]string{"host"}, []int{33, 9}, []int64{size32M}, 3)
	for _, p := range results.CellParams(recs) {
		assert.Empty(t, p)
	}
	// Parameters that change only with the thread count tell no two cells
	// apart either.
	more := compressRecords([]string{"host"}, []int{33, 9}, []int64{size4M}, 3)
	for i := range more {
		more[i].Threads = 2
	}
	for _, p := range results.CellParams(append(recs, more...)) {
		assert.Empty(t, p)
	}
	cells := results.CellsOf(recs)
	require.Len(t, cells, 2)
	assert.Equal(t, "host compress qos=33 threads=1", render.CellText(cells[0].CellKey))
}

// A verdict compares classes and targets at equal parameters: with two
// sizes of one workload each size is judged alone, and its verdict line
// names it; judged together they are refused, not mixed.
func TestVerdictPerSetOfParameters(t *testing.T) {
	recs := compressRecords([]string{"host", "vm"}, []int{33, 9}, []int64{size4M, size32M}, 6)
	cells := analysis.SortCells(results.CellsOf(recs))
	require.Len(t, cells, 8, "2 sizes x 2 targets x 2 classes")
	vs := Verdicts(cells, "host", "vm", analysis.DefaultMargins(), nil)
	require.Len(t, vs, 2, "a verdict per size")
	for i, size := range []string{"size=4194304", "size=33554432"} {
		v := vs[i]
		assert.True(t, strings.HasPrefix(v.Host.Params, size), v.Host.Params)
		assert.Equal(t, v.Host.Params, v.VM.Params)
		assert.Equal(t, []int{1}, v.Threads)
		assert.True(t, strings.HasPrefix(VerdictText(v), "compress "+size+" ratio=3 codec=zstd level=0 sink=null: QoS subsumed in VM: "), VerdictText(v))
		assert.NotEqual(t, analysis.Inconclusive, v.Outcome, render.VerdictText(v))
	}

	mixed := analysis.Subsumption(cells, "compress", "compress", "host", "vm", analysis.DefaultMargins())
	assert.Equal(t, analysis.Inconclusive, mixed.Outcome)
	assert.Contains(t, render.VerdictReason(mixed), "ran with 2 sets of parameters")
}
