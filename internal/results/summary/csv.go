package summary

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
)

// WriteCSV writes summary.csv's rows for a.
func WriteCSV(w io.Writer, a Summary) error { return writeCSV(w, a.Cells) }

// csvHeader returns summary.csv's columns, in order. The first eleven are a
// promise to scripts; median to ci_high are the total rate in unit.
func csvHeader() []string {
	return []string{
		"target", "workload", "qos", "threads", "n", "median", "min", "max", "ci_low", "ci_high", "unit",
		"phase", "ci_confidence",
		"thread_n", "thread_median", "thread_min", "thread_max",
		"seconds_median", "seconds_min", "seconds_max",
		"qos_applied", "qos_partial",
		"cv", "max_min", "flag",
		"idle",
		"cpu_share_median", "cpu_share_ci_low", "cpu_share_ci_high", "speed_median", "speed_ci_low", "speed_ci_high", "speed_unit",
		"vcpu_host_share_median", "vcpu_wait_median", "other_cpu_median",
		"params",
	}
}

// writeCSV writes summary.csv: one row per cell. median, min, max, ci_low
// and ci_high are the cell's total rate over its repeats (all threads' work
// from first start to last end) and unit is the rate's, such as "loops/s";
// the thread_ columns pool every thread's own rate, the seconds_ columns the
// repeats' durations; the cpu_share_ columns are the repeats' CPU share (the
// CPU time their threads consumed over their wall time: 1 is a whole CPU
// per thread) and the speed_ columns their work per CPU-second, in
// speed_unit, medians with their 95% intervals. Every one of them is of the
// repeats that did work (n); idle counts those that did none (a total rate
// of 0), left out of all. The last three are the host's view of the
// cell's repeats (schema 1.3), medians over every repeat that recorded one:
// vcpu_host_share_median the host CPUs the VM's vCPU threads got (their
// run time over the wall time, summed over vCPUs), vcpu_wait_median the
// host CPUs' worth of time they waited for one, other_cpu_median the host
// CPUs the host's other work took (not the run's own: controller, agent,
// spinners, hypervisor). A value that is not a number (a run whose records
// carry no CPU time has no share or speed; a host cell has no vCPUs; a run
// before 1.3 has no host view) is left empty. params tells apart the cells
// of a workload the run measured with more than one set of parameters
// (analysis.CellKey.Params), empty for the others.
func writeCSV(w io.Writer, cells []analysis.Cell) error {
	if err := render.CSV(w, CSVTable(cells)); err != nil {
		return fmt.Errorf("write summary csv: %w", err)
	}
	return nil
}

// CSVTable is summary.csv's table: its columns (csvHeader), a row per
// cell (writeCSV says what each holds).
func CSVTable(cells []analysis.Cell) *render.Table {
	t := &render.Table{}
	for _, h := range csvHeader() {
		t.Columns = append(t.Columns, render.Column{Head: h})
	}
	for _, c := range cells {
		t.Rows = append(t.Rows, render.TextCells(csvRow(c)...))
	}
	return t
}

// csvRow is cell c's line of summary.csv, in csvHeader's order.
func csvRow(c analysis.Cell) []string {
	applied := make([]string, len(c.QoSApplied))
	for i, q := range c.QoSApplied {
		applied[i] = strconv.Itoa(q)
	}
	tr, th, s := c.TotalRate, c.ThreadRate, c.Seconds
	return []string{
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
}

// csvFloat writes x exactly (results.FormatCSVFloat); NaN, which
// spreadsheets and pandas read as missing when empty, is empty.
func csvFloat(f analysis.Float) string {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return ""
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return results.FormatCSVFloat(x)
}

func rateUnit(unit string) string { return unit + "/s" }

// speedUnit is the unit of a cell's speed: work per CPU-second.
func speedUnit(unit string) string { return unit + "/CPU-s" }
