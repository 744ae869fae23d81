// Package results defines qoslab's measured records and the files they are
// written to.
package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/hostview"
)

// Sample is one thread's (or process's) record in one repeat of one cell on
// one target: the tidy unit every output is built from.
type Sample struct {
	Target     string  `json:"target"` // host or vm
	Workload   string  `json:"workload"`
	QoS        int     `json:"qos"` // the class asked for
	Threads    int     `json:"threads"`
	Repeat     int     `json:"repeat"` // 1-based
	Index      int     `json:"index"`
	Phase      string  `json:"phase,omitempty"`
	StartNs    int64   `json:"start_ns"` // since the cell began, target's monotonic clock
	EndNs      int64   `json:"end_ns"`
	Work       float64 `json:"work"`
	Unit       string  `json:"unit"`
	Rate       float64 `json:"rate"` // unit per second
	QoSApplied int     `json:"qos_applied"`
	QoSFull    bool    `json:"qos_full"`
	QoSReason  string  `json:"qos_reason,omitempty"`
	QoSDetail  string  `json:"qos_detail,omitempty"`
	CPUs       []int   `json:"cpus,omitempty"`
	PID        int     `json:"pid,omitempty"`
	Contention int     `json:"contention"` // spinner threads running on the host
	// DurationNs is a fixed-duration cell's length (0: a fixed amount of
	// work): every thread ran until the cell's clock reached it, so its
	// Work is what it got done and its end time says nothing.
	DurationNs int64 `json:"duration_ns,omitempty"`
	// CPUNs is the CPU time the thread (for procs, the process) consumed
	// inside its measured interval, read by the worker itself just outside
	// it (schema 1.2); 0 where it was not recorded (older runs).
	CPUNs int64 `json:"cpu_ns,omitempty"`
	// HostView is its record's Record.HostView, carried to the statistics
	// (Observation); samples.jsonl holds it on the record, not here.
	HostView *hostview.Use `json:"-"`
	// CellParams is what tells its cell apart from another of its workload
	// measured with other parameters (CellParams of its records, set by
	// Samples), carried to the statistics; "" where nothing needs to.
	CellParams string `json:"-"`
}

// damage says why s cannot be what a thread measured, "" when it can be:
// an interval that ends before it starts, work, rate or CPU time below
// zero or not a finite number, or more CPU time than one thread gets in
// the interval (MaxCPUNs). A thread that did no work records 0, never
// less, so a record like that was changed after it was written; read as it
// is, it would pass for a thread that did no work.
func (s Sample) damage() string {
	var why []string
	if s.EndNs < s.StartNs {
		why = append(why, fmt.Sprintf("it ends before it starts (start_ns %d, end_ns %d)", s.StartNs, s.EndNs))
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"work", s.Work}, {"rate", s.Rate}} {
		switch {
		case math.IsNaN(v.x) || math.IsInf(v.x, 0):
			why = append(why, fmt.Sprintf("its %s is %v", v.name, v.x))
		case v.x < 0:
			why = append(why, fmt.Sprintf("its %s is negative (%v)", v.name, v.x))
		}
	}
	if s.CPUNs < 0 {
		why = append(why, fmt.Sprintf("its CPU time is negative (cpu_ns %d)", s.CPUNs))
	}
	if wall := s.EndNs - s.StartNs; wall >= 0 && s.CPUNs > MaxCPUNs(wall) {
		why = append(why, fmt.Sprintf("its CPU time is more than its own interval (cpu_ns %d, end_ns - start_ns %d; one thread gets at most %d there)",
			s.CPUNs, wall, MaxCPUNs(wall)))
	}
	return strings.Join(why, "; ")
}

// How far a thread's CPU time may pass its own interval before the record
// is damage. The worker reads the thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID) just before it reads the cell's clock
// (CLOCK_MONOTONIC) at the interval's start, and again just after its last
// read of the cell's clock at its end (internal/workload's begin and
// record), so the CPU time spans the interval plus those few clock reads;
// and the two clocks come from different sources. One thread can never
// run more than the wall time it spans, so beyond these a record's
// cpu_ns was changed after it was written.
const (
	// CPUTimeSlack covers the clock reads outside the interval (about a
	// microsecond on a host, more under emulation) and the CPU clock's
	// resolution: where a kernel has no usable TSC its sched_clock, which
	// the CPU clock counts in, falls back to jiffies, 10 ms at HZ=100.
	CPUTimeSlack int64 = 10_000_000 // ns
	// CPUTimeTolerance covers the two clocks' rates: the CPU clock runs at
	// sched_clock's (the raw TSC), the cell's clock at CLOCK_MONOTONIC's,
	// which NTP slews by at most 500 ppm; 1% is twenty times that.
	CPUTimeTolerance = 0.01
)

// MaxCPUNs is the most CPU time one thread's record may carry over an
// interval of wall ns: wall*(1+CPUTimeTolerance)+CPUTimeSlack.
func MaxCPUNs(wall int64) int64 {
	return int64(float64(wall)*(1+CPUTimeTolerance)) + CPUTimeSlack
}

// Observation is the sample as the statistics see it.
func (s Sample) Observation() analysis.Observation {
	return analysis.Observation{
		CellKey: analysis.CellKey{Target: s.Target, Workload: s.Workload, QoS: s.QoS, Threads: s.Threads, Phase: s.Phase, Params: s.CellParams},
		Repeat:  s.Repeat, Unit: s.Unit, StartNs: s.StartNs, EndNs: s.EndNs, Work: s.Work, Rate: s.Rate,
		QoSApplied: s.QoSApplied, QoSFull: s.QoSFull, QoSReason: s.QoSReason, CPUNs: s.CPUNs, Contention: s.Contention,
		HostView: s.HostView,
	}
}

// Observations are samples as the statistics see them.
func Observations(samples []Sample) []analysis.Observation {
	out := make([]analysis.Observation, len(samples))
	for i, s := range samples {
		out[i] = s.Observation()
	}
	return out
}

// Cells summarizes samples into cells (see analysis.Cells).
func Cells(samples []Sample) []analysis.Cell { return analysis.Cells(Observations(samples)) }

// CellsOf summarizes records into cells: their samples' (Samples), which
// carry each cell run's host view and the parameters that tell two cells
// apart.
func CellsOf(records []Record) []analysis.Cell { return Cells(Samples(records)) }

// csvHeader is the tidy CSV's columns, in order. Scripts depend on these
// names; a new column goes at the end. cpu_ns (schema 1.2) is the record's
// CPU time in its interval, empty where it was not recorded.
var csvHeader = append(slices.Clone(csvHeader11), "cpu_ns")

// csvHeader11 is the tidy CSV's columns up to schema 1.1, which ReadCSV
// still reads (every CPU time not recorded).
var csvHeader11 = []string{
	"target", "workload", "qos", "threads", "repeat", "index", "phase",
	"start_ns", "end_ns", "work", "unit", "rate",
	"qos_applied", "qos_full", "qos_reason", "qos_detail", "cpus", "pid", "contention",
}

func (s Sample) csvRow() []string {
	cpus := make([]string, len(s.CPUs))
	for i, c := range s.CPUs {
		cpus[i] = strconv.Itoa(c)
	}
	return []string{
		s.Target, s.Workload, strconv.Itoa(s.QoS), strconv.Itoa(s.Threads), strconv.Itoa(s.Repeat),
		strconv.Itoa(s.Index), s.Phase,
		strconv.FormatInt(s.StartNs, 10), strconv.FormatInt(s.EndNs, 10),
		decimal(s.Work), s.Unit, decimal(s.Rate),
		strconv.Itoa(s.QoSApplied), strconv.FormatBool(s.QoSFull), s.QoSReason, s.QoSDetail,
		strings.Join(cpus, " "), strconv.Itoa(s.PID), strconv.Itoa(s.Contention),
		cpuNsText(s.CPUNs),
	}
}

// cpuNsText is a CSV's cpu_ns: empty when the CPU time was not recorded (0),
// so a script reads it as missing, not as a thread that got no CPU.
func cpuNsText(ns int64) string {
	if ns == 0 {
		return ""
	}
	return strconv.FormatInt(ns, 10)
}

// decimal writes x in the shortest form that reads back as exactly x
// (FormatCSVFloat).
func decimal(x float64) string { return FormatCSVFloat(x) }

// FormatCSVFloat writes x as every CSV qoslab writes numbers: the shortest
// digits that read back as exactly x (strconv's 'g' with precision -1), so
// a round trip through a CSV loses nothing: 2079123.5 is "2.0791235e+06",
// never a rounded "2.079e+06".
func FormatCSVFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// CSVHeader is the tidy CSV's columns, in order (a copy).
func CSVHeader() []string { return slices.Clone(csvHeader) }

// CSVRow is s as a row of the tidy CSV, under CSVHeader: every number in
// the shortest form that reads back exactly, cpu_ns empty when not
// recorded.
func (s Sample) CSVRow() []string { return s.csvRow() }

// WriteCSV writes the header and one row per sample.
func WriteCSV(w io.Writer, samples []Sample) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, s := range samples {
		if err := cw.Write(s.csvRow()); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// ReadCSV reads samples written by WriteCSV, or by a qoslab of schema 1.1
// (no cpu_ns column: CPU time not recorded), refusing a header it does not
// know and a row no measurement gives (see Sample.damage).
func ReadCSV(r io.Reader) ([]Sample, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("read csv header: %w", err)
	}
	if !slices.Equal(head, csvHeader) && !slices.Equal(head, csvHeader11) {
		return nil, fmt.Errorf("csv header %q is not qoslab's sample header %q (nor that of schema 1.1, without cpu_ns)", strings.Join(head, ","), strings.Join(csvHeader, ","))
	}
	var out []Sample
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("csv line %d: %w", line, err)
		}
		s, err := parseRow(rec)
		if err != nil {
			return nil, fmt.Errorf("csv line %d: %w", line, err)
		}
		if why := s.damage(); why != "" {
			return nil, fmt.Errorf("csv line %d: %s %s qos=%d threads=%d repeat %d thread %d%s is damaged: %s, which no measurement gives",
				line, s.Target, s.Workload, s.QoS, s.Threads, s.Repeat, s.Index, phaseText(s.Phase), why)
		}
		out = append(out, s)
	}
}

func parseRow(r []string) (Sample, error) {
	var s Sample
	var errs []string
	atoi := func(col int) int {
		v, err := strconv.Atoi(r[col])
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q", csvHeader[col], r[col]))
		}
		return v
	}
	i64 := func(col int) int64 {
		v, err := strconv.ParseInt(r[col], 10, 64)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q", csvHeader[col], r[col]))
		}
		return v
	}
	f64 := func(col int) float64 {
		v, err := strconv.ParseFloat(r[col], 64)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q", csvHeader[col], r[col]))
		}
		return v
	}
	s.Target, s.Workload = r[0], r[1]
	s.QoS, s.Threads, s.Repeat, s.Index = atoi(2), atoi(3), atoi(4), atoi(5)
	s.Phase = r[6]
	s.StartNs, s.EndNs = i64(7), i64(8)
	s.Work, s.Unit, s.Rate = f64(9), r[10], f64(11)
	s.QoSApplied = atoi(12)
	s.QoSFull = r[13] == "true"
	s.QoSReason, s.QoSDetail = r[14], r[15]
	for _, f := range strings.Fields(r[16]) {
		c, err := strconv.Atoi(f)
		if err != nil {
			errs = append(errs, fmt.Sprintf("cpus=%q", r[16]))
			break
		}
		s.CPUs = append(s.CPUs, c)
	}
	s.PID, s.Contention = atoi(17), atoi(18)
	if len(r) > 19 && r[19] != "" { // cpu_ns; empty, or a 1.1 row: not recorded
		s.CPUNs = i64(19)
	}
	if len(errs) > 0 {
		return s, fmt.Errorf("bad values %s", strings.Join(errs, ", "))
	}
	return s, nil
}
