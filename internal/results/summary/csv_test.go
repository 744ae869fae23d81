package summary

import (
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
)

// summary.csv, written through render.CSV from summary's table
// (CSVTable), is byte for byte what its own writer wrote before it, on
// every results directory under testdata: scripts read its columns.
func TestCSVIsAsItWas(t *testing.T) {
	n := 0
	for _, d := range testdataDirs(t) {
		l, err := results.Load(d)
		if err != nil {
			continue // a damaged run (cpu-past-interval): refused, with nothing to write
		}
		a := Of(l)
		var now, was strings.Builder
		require.NoError(t, WriteCSV(&now, a))
		require.NoError(t, csvAsItWas(&was, a.Cells))
		assert.Equal(t, was.String(), now.String(), d)
		n++
	}
	assert.Greater(t, n, 20, "the testdata's runs are there")
}

// csvAsItWas is summary.csv's writer before summary.csv went through
// render.CSV, kept as it was to hold the file to it.
func csvAsItWas(w io.Writer, cells []analysis.Cell) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader()); err != nil {
		return fmt.Errorf("write summary csv: %w", err)
	}
	for _, c := range cells {
		applied := make([]string, len(c.QoSApplied))
		for i, q := range c.QoSApplied {
			applied[i] = strconv.Itoa(q)
		}
		tr, th, s := c.TotalRate, c.ThreadRate, c.Seconds
		row := []string{
			c.Target, c.Workload, strconv.Itoa(c.QoS), strconv.Itoa(c.Threads),
			strconv.Itoa(tr.N), csvFloat(tr.Median), csvFloat(tr.Min), csvFloat(tr.Max), csvFloat(tr.CILow), csvFloat(tr.CIHigh), rateUnit(c.Unit),
			c.Phase, csvFloat(tr.CIConfidence),
			strconv.Itoa(th.N), csvFloat(th.Median), csvFloat(th.Min), csvFloat(th.Max),
			csvFloat(s.Median), csvFloat(s.Min), csvFloat(s.Max),
			strings.Join(applied, " "), strconv.Itoa(c.QoSPartial),
			csvFloat(c.Dispersion.CV), csvFloat(c.Dispersion.MaxMin), render.CellFlag(c),
			strconv.Itoa(c.Idle()),
			csvFloat(c.CPUShare.Median), csvFloat(c.CPUShare.CILow), csvFloat(c.CPUShare.CIHigh),
			csvFloat(c.Speed.Median), csvFloat(c.Speed.CILow), csvFloat(c.Speed.CIHigh), speedUnit(c.Unit),
			csvFloat(analysis.MedianOf(c.VCPUShares)), csvFloat(analysis.MedianOf(c.VCPUWaits)), csvFloat(analysis.MedianOf(c.OtherCPU)),
			c.Params,
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write summary csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write summary csv: %w", err)
	}
	return nil
}

// testdataDirs are the results directories under testdata/results and
// its constructed/ (the damaged among them too).
func testdataDirs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"*", filepath.Join("constructed", "*")} {
		found, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "results", pattern, "run.json"))
		require.NoError(t, err)
		for _, f := range found {
			out = append(out, filepath.Dir(f))
		}
	}
	return out
}
