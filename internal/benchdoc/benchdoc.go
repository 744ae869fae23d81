// Package benchdoc is bench's output document: what was asked and applied,
// on what, every record, and the cells summarized from them; and its
// formats, through package render (text fitted to a terminal, Markdown,
// JSON, the tidy CSV). A saved bench is a results directory like a run's,
// whose report is package report's.
package benchdoc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/version"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// resultsSchema versions bench's JSON with the results files'.
const resultsSchema = results.SchemaVersion

// Bench is bench's JSON output: what was asked, on what, and every record.
type Bench struct {
	SchemaVersion string                    `json:"schema_version"`
	ToolVersion   string                    `json:"tool_version"`
	Started       time.Time                 `json:"started"`
	Finished      time.Time                 `json:"finished"`
	Targets       map[string]any            `json:"targets"`            // target name -> agent Info
	Machines      map[string]hv.MachineInfo `json:"machines,omitempty"` // target name -> VM as the host sees it
	Request       BenchRequest              `json:"request"`
	// Spec is the experiment the flags described, as run.
	Spec       spec.Spec              `json:"spec"`
	Contention *contention.Contention `json:"contention,omitempty"`
	Runs       []BenchRun             `json:"runs"`
	// Cells summarize the samples per cell as summary.json's cells do:
	// n, median, min, max and the median's interval of the total and
	// per-thread rates and of the times, and the repeats' dispersion (cv,
	// max_min, flag); Warnings name the flagged ones.
	Cells    []analysis.Cell  `json:"cells"`
	Warnings []string         `json:"warnings"`
	Samples  []results.Sample `json:"samples"`
	// Results is the results directory of a saved run.
	Results string   `json:"results,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Error   string   `json:"error,omitempty"`

	// warnings are the session's notes that are warnings (their text
	// alone), which the table says under it.
	warnings []string
}

// BenchRequest records the settings as they were applied.
type BenchRequest struct {
	Targets   []string          `json:"targets"`
	VM        *BenchVM          `json:"vm,omitempty"`
	Workloads []string          `json:"workloads"`
	QoS       []int             `json:"qos"`
	Threads   []int             `json:"threads"`
	Loops     map[string]uint64 `json:"loops"`
	// Params are the cells' parameters, in their JSON names, but loops,
	// which Loops holds per workload (the shallower field wins in JSON):
	// Duration is that of the cells that ran for one (fp, int, mmul with
	// --duration), 0 when they ran loops; the compression parameters are
	// those of the compress and decompress cells.
	catalog.Params
	Warmup     int                     `json:"warmup,omitempty"`
	Repeat     int                     `json:"repeat"`
	Contention contention.SpinnerCount `json:"contention"`
	Seed       uint64                  `json:"seed"`
}

// BenchVM is the VM of a vm target as applied.
type BenchVM struct {
	Name      string `json:"name,omitempty"`
	Image     string `json:"image"`
	Store     string `json:"store"`
	CPUs      int    `json:"cpus"`
	MemoryMiB int    `json:"memory_mib"`
	DiskBytes int64  `json:"disk_bytes"`
	Accel     string `json:"accel,omitempty"`
	Backend   string `json:"backend"`
	// Model is the device model asked for, "" for the backend's own.
	Model string `json:"model,omitempty"`
}

// newBenchRequest records a bench spec's settings as applied; name and
// store say which named VM and image store the vm target used.
func newBenchRequest(s spec.Spec, name, store string) BenchRequest {
	r := BenchRequest{Targets: s.Targets, Loops: map[string]uint64{}, Repeat: s.Repeats, Warmup: s.Warmup, Contention: s.Contention, Seed: s.DataSeed}
	if slices.Contains(s.Targets, spec.TargetVM) {
		mem, disk := spec.VMSize(s)
		r.VM = &BenchVM{Name: name, Image: s.VM.Image, Store: store, CPUs: s.VM.CPUs, MemoryMiB: mem, DiskBytes: disk, Accel: s.VM.Accel, Backend: s.VM.Backend, Model: s.VM.Model}
	}
	for _, e := range s.Matrix {
		r.Workloads = append(r.Workloads, e.Workload)
		r.Threads = e.Threads
		r.QoS = r.QoS[:0]
		for _, c := range e.QoS {
			r.QoS = append(r.QoS, int(c))
		}
		switch {
		case e.Duration > 0:
			r.Duration = e.Duration
		case e.Loops == 0:
			for _, k := range catalog.ParamKeys() {
				if k.TakenBy(e.Workload) {
					k.Copy(&r.Params, e.Params)
				}
			}
		default:
			r.Loops[e.Workload] = e.Loops
		}
	}
	return r
}

// NewBench starts bench's document for spec s, as started now; name and
// store say which named VM and image store the vm target uses; results is
// the results directory of a saved run ("" for none).
func NewBench(s spec.Spec, name, store, results string) *Bench {
	return &Bench{SchemaVersion: resultsSchema, ToolVersion: version.String(), Started: time.Now().UTC(), Targets: map[string]any{},
		Request: newBenchRequest(s, name, store), Spec: s, Results: results}
}

// Add records what a session measured and on what.
func (b *Bench) Add(res *experiment.Session) {
	for name, info := range res.Infos {
		b.Targets[name] = agent.InfoJSON(info)
	}
	if len(res.Machines) > 0 {
		b.Machines = res.Machines
	}
	b.Contention = res.Contention
	b.Notes, b.warnings = nil, nil
	for _, n := range res.Notes {
		b.Notes = append(b.Notes, n.String())
		if n.Kind.Warning() {
			b.warnings = append(b.warnings, n.Text)
		}
	}
	for _, r := range res.Runs {
		c := r.Cell
		b.Runs = append(b.Runs, BenchRun{Target: c.Target, Workload: c.Workload, QoS: int(c.QoS), Threads: c.Threads,
			Repeat: c.Repeat, Metrics: r.Metrics, Notes: r.Notes})
		b.Samples = append(b.Samples, r.Samples...)
	}
}

// Finish records when the session ended and the error that stopped it.
func (b *Bench) Finish(err error) {
	b.Finished = time.Now().UTC()
	if err != nil {
		b.Error = err.Error()
	}
}

// BenchRun is one run of a cell: its metrics and notes (the samples carry
// the records).
type BenchRun struct {
	Target   string             `json:"target"`
	Workload string             `json:"workload"`
	QoS      int                `json:"qos"`
	Threads  int                `json:"threads"`
	Repeat   int                `json:"repeat"`
	Metrics  map[string]float64 `json:"metrics,omitempty"`
	Notes    []string           `json:"notes,omitempty"`
}

// RunText is one cell run's elapsed time and total rate, for a log line:
// "0.512 s, 3.9M loops/s" (each phase of compression).
func RunText(samples []results.Sample) string {
	var parts []string
	for _, c := range results.Cells(samples) {
		unit, scale := units.RateUnit(c.Unit)
		p := fmt.Sprintf("%.3f s, %s %s", float64(c.Seconds.Median), units.SI(float64(c.TotalRate.Median)/scale), unit)
		if c.Phase != "" {
			p = c.Phase + " " + p
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "no records"
	}
	return strings.Join(parts, "; ")
}

// CheckWritable fails when a file cannot be created at path, so that a
// run is not measured for an output it cannot keep.
func CheckWritable(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// WriteBenchFile writes b in format to path, whole or not at all (text
// as off a terminal: TextWidth columns, no colour), then the text to out,
// fitted to term; when path cannot be written, the format goes to out
// instead, so nothing measured is lost, and log says so.
func WriteBenchFile(out, log io.Writer, path, format string, b *Bench, term Terminal) error {
	var buf bytes.Buffer
	err := WriteBench(&buf, format, b, Terminal{Width: TextWidth})
	if err == nil {
		err = atomicfile.Write(path, buf.Bytes())
	}
	if err != nil {
		fmt.Fprintf(log, "qoslab: --out %s failed (%v); writing %s to stdout instead\n", path, err, format)
		if _, werr := out.Write(buf.Bytes()); werr != nil {
			return fmt.Errorf("%w; and stdout: %w", err, werr)
		}
		return err
	}
	fmt.Fprintf(log, "wrote %s (%s, %d records)\n", path, format, len(b.Samples))
	return WriteBench(out, render.FormatText, b, term)
}
