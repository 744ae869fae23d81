package compare

import (
	"fmt"
	"io"
	"strconv"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
)

// csvHeader is the header of WriteCSV: one line per run per cell or
// finding, and first a line per run and judged workload, whose machine
// and verdict take the columns after outcome (verdictFields).
func csvHeader() []string {
	h := []string{"kind", "workload", "phase", "target", "qos", "threads", "run", "label", "dir", "present", "n", "value", "low", "high", "unit", "ratio", "p", "significant", "outcome"}
	for _, f := range verdictFields {
		h = append(h, f.csv...)
	}
	return h
}

// KindVerdict is the CSV's kind of a machine's verdict line.
const KindVerdict = "verdict"

// WriteCSV writes the comparison long-form (CSVTable), as render.CSV
// encodes a table: compare.csv.
func WriteCSV(w io.Writer, c *Comparison) error { return render.CSV(w, c.CSVTable()) }

// CSVTable is the comparison long-form, one table whose columns are
// csvHeader's. First a line per run and judged workload (kind verdict, in
// the per-machine table's order): the classes compared in qos ("33/9"),
// the thread counts in threads ("1,2"), the subsumption index in value,
// low and high, the verdict in outcome (empty when the run has none), and
// the machine and both ratios in the columns after it. Then a line per
// run for every cell (kind cell; value the median total rate, low and
// high its interval), geometric mean (kind geomean; n the cells it is
// over), subsumption index and QoS sensitivity (qos "high/low"); ratio
// and p compare with the baseline (run 1), empty for it; a sensitivity's
// unit is ratio_hl, the Hodges-Lehmann ratio, and its interval the
// verdict's where the run's verdict has it (FindingRow). A run that did
// not come back is a line of kind missing: its label, and why in outcome.
// The columns after outcome are empty but on verdict lines. Its numbers
// are written exactly (num), its cells never keyed or shortened.
func (c *Comparison) CSVTable() *render.Table {
	t := &render.Table{}
	for _, h := range csvHeader() {
		t.Columns = append(t.Columns, render.Column{Head: h})
	}
	add := func(rec []string) { t.Rows = append(t.Rows, render.TextCells(rec...)) }
	for _, m := range c.Machines {
		add(c.verdictRecord(m))
	}
	for _, r := range c.Rows {
		for i, v := range r.Values {
			add(c.csvRecord("cell", r.Workload, r.Phase, r.Target, strconv.Itoa(r.QoS), strconv.Itoa(r.Threads), i, v, r.Unit+"/s", ""))
		}
	}
	for _, g := range c.Geomeans {
		for i, v := range g.Values {
			v.N = g.Cells
			add(c.csvRecord("geomean", g.Workload, "", g.Target, "", "", i, v, g.Unit+"/s", ""))
		}
	}
	for _, m := range c.Missing {
		// A run that is not there: its label, and why in outcome.
		add([]string{"missing", "", "", "", "", "", "", m.Label, "", "false", "", "", "", "", "", "", "", "", m.Reason})
	}
	for _, f := range c.Findings {
		q, unit := "", ""
		if f.Kind == KindSensitivity {
			q, unit = fmt.Sprintf("%d/%d", f.High, f.Low), "ratio_hl"
		}
		for i, v := range f.Values {
			add(c.csvRecord(f.Kind, f.Workload, f.Phase, f.Target, q, "", i, v.Value, unit, v.Outcome))
		}
	}
	return t
}

// verdictRecord is the CSV's line of a machine's verdict (KindVerdict).
func (c *Comparison) verdictRecord(m MachineVerdict) []string {
	col := c.Columns[m.Run]
	rec := []string{KindVerdict, m.Workload, m.Phase, "", m.classesText(), threadsList(m.Threads), strconv.Itoa(m.Run + 1), col.Label, col.Dir,
		strconv.FormatBool(m.Outcome != ""), "", num(m.SI), num(m.SILow), num(m.SIHigh), "index", "", "", "", m.Outcome}
	for _, f := range verdictFields {
		if f.value != nil {
			rec = append(rec, f.value(m)...)
		}
	}
	return rec
}

// csvRecord is the CSV's line of run i's value v of a cell, geometric mean
// or finding, of kind, its change against the baseline in ratio, p and
// significant.
func (c *Comparison) csvRecord(kind, workload, phase, target, q, threads string, i int, v Value, unit, outcome string) []string {
	col := c.Columns[i]
	rec := []string{kind, workload, phase, target, q, threads, strconv.Itoa(i + 1), col.Label, col.Dir, strconv.FormatBool(v.Present), "", "", "", "", unit, "", "", "", outcome}
	if v.Present {
		rec[10] = strconv.Itoa(v.N)
		rec[11], rec[12], rec[13] = num(v.Median), num(v.Low), num(v.High)
	}
	if v.Delta != nil {
		rec[15], rec[16], rec[17] = num(v.Delta.Ratio), num(v.Delta.P), strconv.FormatBool(v.Delta.Significant)
	}
	return rec
}

// num writes a number exactly (the shortest digits that read back as it),
// so a CSV round trip loses nothing; NaN is empty.
func num(f analysis.Float) string {
	if f.IsNaN() {
		return ""
	}
	return results.FormatCSVFloat(float64(f))
}
