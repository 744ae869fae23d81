package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/units"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/workload"
	"github.com/qoslab/qoslab/internal/workload/codec"
)

// Output formats of bench.
var benchFormats = []string{"table", "json", "csv", "markdown"}

// defaultLoops is each workload's --loops when none is given: about a second
// per thread on a current core.
var defaultLoops = map[string]uint64{
	workload.FP: 2e8, workload.Int: 2e8, workload.Procs: 2e8,
	workload.MMul: 2e5, workload.Pi: 1e8,
}

// BenchOptions is everything bench needs, filled from flags, environment and
// config.
type BenchOptions struct {
	IO         *IOStreams
	AgentPath  string
	Workloads  []string
	QoS        []qos.Class
	Threads    []int
	Loops      uint64 // 0: each workload's default
	Repeat     int
	Contention int
	Format     string
	Out        string

	Size     int64
	Ratio    float64
	Seed     uint64
	Codec    string
	Level    int
	Sink     string
	SinkPath string

	// Targets are where cells run: "host" (a local agent) and "vm" (an agent in
	// a VM), interleaved per repeat.
	Targets []string
	VM      VMOptions

	// StartAgent starts the agent of one target; tests replace it.
	StartAgent func(ctx context.Context, o *BenchOptions, target string) (BenchAgent, error)
	// StartContention starts n spinner threads outside the agent and returns
	// how to stop them; tests replace it.
	StartContention func(ctx context.Context, n int) (*Contention, error)
}

// BenchAgent is the agent bench drives.
type BenchAgent interface {
	Info(ctx context.Context) (*agentpb.InfoReply, error)
	Run(ctx context.Context, req *agentpb.RunRequest, onProgress func(*agentpb.Progress)) (*agentpb.Result, error)
	Close() error
}

// NewCmdBench builds `qoslab bench`. runF replaces the work in tests.
func NewCmdBench(f *Factory, runF func(context.Context, *BenchOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure workloads at QoS classes and thread counts, on the host and in VMs",
		Long: `bench runs a matrix of cells (workload x QoS class x thread count), each
repeated, through the same qoslab-agent on every target: a local child for
host, the agent inside a VM for vm (booted for the run, or --vm NAME). With
--target host,vm the targets alternate within every repeat and are printed
side by side with the vm/host ratio.

  qoslab bench --workload fp --qos 9,33 --threads 1-4 --loops 2e8 --repeat 3
  qoslab bench --target host,vm --workload fp --qos background,default --contention 2
  qoslab bench --workload compress,decompress --qos background,user-interactive --size 256MiB
  qoslab bench --workload fp --qos background,default --contention 2 --format csv --out fp.csv

QoS classes by name or number: ` + qos.Allowed + `.
Workloads: ` + strings.Join(workload.Names(), ", ") + `.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := benchOptionsFrom(f)
			if err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return benchRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.String("workload", "fp", "workloads, comma-separated: "+strings.Join(workload.Names(), ", "))
	fl.String("qos", "9,33", "QoS classes, comma-separated, by name or number")
	fl.String("threads", "1", `thread counts (processes for procs): "4", "1-4" or "1,2,4"`)
	fl.String("loops", "", "loops per thread (pi: iterations in total); 2e8 style accepted (default: per workload, about 1 s)")
	fl.Int("repeat", 3, "repeats of every cell")
	fl.Int("contention", 0, "spinner threads at default priority run outside the agent for the whole run")
	fl.String("format", "table", "output: "+strings.Join(benchFormats, ", "))
	fl.String("out", "", "write the output to FILE (the table still goes to the terminal)")
	fl.String("size", "1GiB", "compress/decompress: bytes of generated input, split over the threads")
	fl.Float64("ratio", workload.DefaultRatio, "compress/decompress: compressibility of the generated input (about N:1 under zstd)")
	fl.Uint64("seed", 1, "seed of generated input and of pi's random numbers")
	fl.String("codec", workload.DefaultCodec, "compress/decompress codec: zstd, gzip, lz4, lzfse (macOS)")
	fl.Int("level", 0, "codec level (0: the codec's default)")
	fl.String("sink", workload.DefaultSink, "where compressed output goes: file (fsync'd), block (a raw device), null")
	fl.String("sink-path", "", "file sink: directory (default: a temporary one); block sink: the device")
	fl.String("target", "host", "where to measure, comma-separated: host, vm (interleaved per repeat, shown side by side)")
	addVMFlags(fl)
	f.bindFlags("bench", fl)
	return cmd
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

func oneOf(name, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return usageErrorf("%s %q: allowed %s", name, v, strings.Join(allowed, ", "))
}

// benchOptionsFrom reads and checks bench's settings; every mistake is a
// usage error naming the value and what is allowed.
func benchOptionsFrom(f *Factory) (*BenchOptions, error) {
	v := f.Config
	o := &BenchOptions{
		IO:              f.IO,
		AgentPath:       f.agentPath(),
		Repeat:          v.GetInt("bench.repeat"),
		Contention:      v.GetInt("bench.contention"),
		Format:          v.GetString("bench.format"),
		Out:             v.GetString("bench.out"),
		Ratio:           v.GetFloat64("bench.ratio"),
		Seed:            v.GetUint64("bench.seed"),
		Codec:           v.GetString("bench.codec"),
		Level:           v.GetInt("bench.level"),
		Sink:            v.GetString("bench.sink"),
		SinkPath:        v.GetString("bench.sink-path"),
		StartAgent:      startTargetAgent(f),
		StartContention: startContention,
	}
	for _, w := range strings.Split(v.GetString("bench.workload"), ",") {
		w = strings.TrimSpace(w)
		if err := workload.CheckName(w); err != nil {
			return nil, &UsageError{Err: err}
		}
		o.Workloads = append(o.Workloads, w)
	}
	var err error
	if o.Targets, err = parseTargets(v.GetString("bench.target")); err != nil {
		return nil, err
	}
	if o.VM, err = vmOptionsFrom(f, "bench"); err != nil {
		return nil, err
	}
	if o.QoS, err = qos.ParseList(v.GetString("bench.qos")); err != nil {
		return nil, &UsageError{Err: err}
	}
	maxThreads := workload.MaxThreads
	for _, w := range o.Workloads {
		if w == workload.Procs {
			maxThreads = workload.MaxProcs
		}
	}
	if o.Threads, err = units.ParseCounts("threads", v.GetString("bench.threads"), maxThreads); err != nil {
		return nil, &UsageError{Err: err}
	}
	if s := v.GetString("bench.loops"); s != "" {
		if o.Loops, err = units.ParseCount("--loops", s, workload.MaxLoops); err != nil {
			return nil, &UsageError{Err: err}
		}
	}
	if o.Size, err = units.ParseSize("--size", v.GetString("bench.size"), workload.MaxDataBytes); err != nil {
		return nil, &UsageError{Err: err}
	}
	if o.Repeat < 1 || o.Repeat > 1000 {
		return nil, usageErrorf("--repeat %d: allowed 1..1000", o.Repeat)
	}
	if o.Contention < 0 || o.Contention > 256 {
		return nil, usageErrorf("--contention %d: allowed 0..256 spinner threads", o.Contention)
	}
	if err := oneOf("--format", o.Format, benchFormats); err != nil {
		return nil, err
	}
	if err := oneOf("--sink", o.Sink, []string{"file", "block", "null"}); err != nil {
		return nil, err
	}
	if o.Sink == "block" && o.SinkPath == "" {
		return nil, usageErrorf("--sink block needs --sink-path DEVICE (a raw block device whose contents may be overwritten)")
	}
	for _, w := range o.Workloads {
		if w == workload.Compress || w == workload.Decompress {
			if err := codec.CheckLevel(o.Codec, o.Level); err != nil {
				return nil, usageErrorf("--codec %s --level %d: %w", o.Codec, o.Level, err)
			}
			break
		}
	}
	if o.Ratio < 1 {
		return nil, usageErrorf("--ratio %g: allowed 1 (incompressible) and above", o.Ratio)
	}
	return o, nil
}

// Targets qoslab can measure on.
var allTargets = []string{"host", "vm"}

func parseTargets(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if err := oneOf("--target", t, allTargets); err != nil {
			return nil, err
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// cellPlan is one Run request of the matrix.
type cellPlan struct {
	target   string
	workload string
	class    qos.Class
	threads  int
	repeat   int
}

func (c cellPlan) String() string {
	return fmt.Sprintf("%s: %s qos=%s threads=%d repeat=%d", c.target, c.workload, c.class, c.threads, c.repeat)
}

// plan lays the matrix out with repeats outermost and targets innermost, so
// slow drift (thermal, other load) spreads over every cell and both targets
// instead of landing on one.
func (o *BenchOptions) plan() []cellPlan {
	var out []cellPlan
	for r := 1; r <= o.Repeat; r++ {
		for _, w := range o.Workloads {
			for _, c := range o.QoS {
				for _, t := range o.Threads {
					for _, target := range o.Targets {
						out = append(out, cellPlan{target: target, workload: w, class: c, threads: t, repeat: r})
					}
				}
			}
		}
	}
	return out
}

func (o *BenchOptions) loopsFor(w string) uint64 {
	if o.Loops != 0 {
		return o.Loops
	}
	return defaultLoops[w]
}

func (o *BenchOptions) request(c cellPlan, progress bool) *agentpb.RunRequest {
	req := &agentpb.RunRequest{
		Workload: c.workload, Qos: int32(c.class), Threads: uint32(c.threads),
		Loops: o.loopsFor(c.workload), SizeBytes: uint64(o.Size), Ratio: o.Ratio, Seed: o.Seed,
		Codec: o.Codec, Level: int32(o.Level), Sink: o.Sink,
	}
	if o.Sink == "block" {
		req.SinkPath = o.SinkPath
	}
	if c.workload == workload.Pi && req.Loops < uint64(c.threads) {
		req.Loops = uint64(c.threads)
	}
	if progress {
		req.ProgressIntervalMs = 500
	}
	return req
}

// startTargetAgent starts the agent of a target: a local child for host, a
// VM (booted, or a named one attached) for vm.
func startTargetAgent(f *Factory) func(ctx context.Context, o *BenchOptions, target string) (BenchAgent, error) {
	return func(ctx context.Context, o *BenchOptions, target string) (BenchAgent, error) {
		if target == "vm" {
			return startVMAgent(ctx, f, o.IO, o.VM, o.vmNeeds())
		}
		return startLocalAgent(ctx, o)
	}
}

// startLocalAgent runs the agent binary as a child of this process.
func startLocalAgent(ctx context.Context, o *BenchOptions) (BenchAgent, error) {
	path, err := agent.FindAgent(o.AgentPath)
	if err != nil {
		return nil, err
	}
	lo := agent.LocalOptions{Path: path, Stderr: o.IO.ErrOut}
	if o.Sink == "file" {
		lo.ScratchDir = o.SinkPath
	}
	if o.Sink == "block" {
		lo.BlockDevices = []string{o.SinkPath}
	}
	return agent.StartLocal(ctx, lo)
}

// BenchReport is bench's JSON output: what was asked, on what, and every record.
type BenchReport struct {
	SchemaVersion string            `json:"schema_version"`
	ToolVersion   string            `json:"tool_version"`
	Started       time.Time         `json:"started"`
	Finished      time.Time         `json:"finished"`
	Targets       map[string]any    `json:"targets"`            // target name -> agent Info
	Machines      map[string]any    `json:"machines,omitempty"` // target name -> VM as the host sees it
	Request       BenchRequest      `json:"request"`
	Contention    *Contention       `json:"contention,omitempty"`
	Runs          []CellRun         `json:"runs"`
	Samples       []results.Sample  `json:"samples"`
	Error         string            `json:"error,omitempty"`
	Extra         map[string]string `json:"extra,omitempty"`
}

// BenchRequest records the settings as they were applied.
type BenchRequest struct {
	Targets    []string          `json:"targets"`
	VM         *VMOptions        `json:"vm,omitempty"`
	Workloads  []string          `json:"workloads"`
	QoS        []int             `json:"qos"`
	Threads    []int             `json:"threads"`
	Loops      map[string]uint64 `json:"loops"`
	Repeat     int               `json:"repeat"`
	Contention int               `json:"contention"`
	Size       int64             `json:"size_bytes,omitempty"`
	Ratio      float64           `json:"ratio,omitempty"`
	Seed       uint64            `json:"seed"`
	Codec      string            `json:"codec,omitempty"`
	Level      int               `json:"level,omitempty"`
	Sink       string            `json:"sink,omitempty"`
	SinkPath   string            `json:"sink_path,omitempty"`
}

// CellRun is one Run of the matrix: its metrics and notes (the samples carry
// the records).
type CellRun struct {
	Target   string             `json:"target"`
	Workload string             `json:"workload"`
	QoS      int                `json:"qos"`
	Threads  int                `json:"threads"`
	Repeat   int                `json:"repeat"`
	Metrics  map[string]float64 `json:"metrics,omitempty"`
	Notes    []string           `json:"notes,omitempty"`
}

func (o *BenchOptions) appliedRequest() BenchRequest {
	r := BenchRequest{Targets: o.Targets, Workloads: o.Workloads, Threads: o.Threads, Loops: map[string]uint64{}, Repeat: o.Repeat,
		Contention: o.Contention, Seed: o.Seed}
	for _, t := range o.Targets {
		if t == "vm" {
			vm := o.VM
			r.VM = &vm
		}
	}
	for _, c := range o.QoS {
		r.QoS = append(r.QoS, int(c))
	}
	for _, w := range o.Workloads {
		if w == workload.Compress || w == workload.Decompress {
			r.Size, r.Ratio, r.Codec, r.Level, r.Sink, r.SinkPath = o.Size, o.Ratio, o.Codec, o.Level, o.Sink, o.SinkPath
			continue
		}
		r.Loops[w] = o.loopsFor(w)
	}
	return r
}

// benchRun measures the matrix and writes the output. Whatever finished is
// written even when a later cell fails or the run is interrupted.
func benchRun(ctx context.Context, o *BenchOptions) (err error) {
	report := &BenchReport{SchemaVersion: results.SchemaVersion, ToolVersion: versionString(), Started: time.Now().UTC(),
		Request: o.appliedRequest(), Targets: map[string]any{}}

	out, err := openOutput(o.Out)
	if err != nil {
		return err
	}
	defer func() {
		report.Finished = time.Now().UTC()
		if err != nil {
			report.Error = err.Error()
		}
		if werr := writeBench(o, out, report); werr != nil && err == nil {
			err = werr
		}
	}()

	agents := map[string]BenchAgent{}
	defer func() {
		for _, t := range o.Targets {
			if ag := agents[t]; ag != nil {
				if cerr := ag.Close(); cerr != nil && err == nil {
					err = fmt.Errorf("stop %s agent: %w", t, cerr)
				}
			}
		}
	}()
	for _, t := range o.Targets {
		ag, err := o.StartAgent(ctx, o, t)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		agents[t] = ag
		info, err := ag.Info(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		report.Targets[t] = infoJSON(info)
		if m, ok := ag.(interface{ MachineInfo() any }); ok {
			if report.Machines == nil {
				report.Machines = map[string]any{}
			}
			report.Machines[t] = m.MachineInfo()
		}
		fmt.Fprintf(o.IO.ErrOut, "%s: %s\n", t, describeInfo(info))
		if err := checkAgentSupports(o, info); err != nil {
			return err
		}
	}

	if o.Contention > 0 {
		cont, err := o.StartContention(ctx, o.Contention)
		if err != nil {
			return fmt.Errorf("start %d contention threads: %w", o.Contention, err)
		}
		report.Contention = cont
		defer cont.Stop()
		fmt.Fprintf(o.IO.ErrOut, "contention: %d spinner threads at %s on the host (pid %d)\n", o.Contention, qos.Default, cont.PID)
	}

	cells := o.plan()
	prog := newProgressLine(o.IO)
	for i, c := range cells {
		prog.cell(i, len(cells), c.String())
		res, err := agents[c.target].Run(ctx, o.request(c, o.IO.Progress), prog.update)
		prog.clear()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			kept := len(res.GetRecords())
			if agent.IsBadRequest(err) {
				err = &UsageError{Err: err}
			}
			return fmt.Errorf("cell %d/%d (%s) failed: %w (its %d finished records are not reported; the %d cells before it are)", i+1, len(cells), c, err, kept, i)
		}
		if report.Contention != nil {
			if err := report.Contention.Running(); err != nil {
				return fmt.Errorf("cell %d/%d (%s) not reported: %w (the %d cells before it are)", i+1, len(cells), c, err, i)
			}
		}
		report.Samples = append(report.Samples, experiment.SamplesFrom(c.target, c.workload, int(c.class), c.threads, c.repeat, o.Contention, res)...)
		report.Runs = append(report.Runs, CellRun{Target: c.target, Workload: c.workload, QoS: int(c.class), Threads: c.threads,
			Repeat: c.repeat, Metrics: res.GetMetrics(), Notes: res.GetNotes()})
	}
	return nil
}

// checkAgentSupports refuses, before anything is measured, a codec the agent's OS lacks.
func checkAgentSupports(o *BenchOptions, info *agentpb.InfoReply) error {
	for _, w := range o.Workloads {
		if w != workload.Compress && w != workload.Decompress {
			continue
		}
		for _, c := range info.GetCodecs() {
			if c == o.Codec {
				return nil
			}
		}
		return usageErrorf("--codec %q is not available on %s/%s: allowed %s", o.Codec, info.GetOs(), info.GetArch(), strings.Join(info.GetCodecs(), ", "))
	}
	return nil
}

// output is where the formatted result goes: a temporary file renamed into
// place at the end (so a failed write never leaves half a file), or stdout.
type output struct {
	path string
	tmp  *os.File
}

func openOutput(path string) (*output, error) {
	if path == "" {
		return &output{}, nil
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, usageErrorf("--out %s: cannot write there: %w", path, err)
	}
	return &output{path: path, tmp: tmp}, nil
}

func (w *output) commit() error {
	if err := w.tmp.Sync(); err != nil {
		w.tmp.Close()
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if err := w.tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if err := os.Rename(w.tmp.Name(), w.path); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return nil
}

func (w *output) abort() {
	if w.tmp != nil {
		w.tmp.Close()
		os.Remove(w.tmp.Name())
	}
}

// writeBench writes the chosen format to --out (then the table to the
// terminal) or to stdout. If --out cannot be written, the output goes to
// stdout instead so nothing measured is lost.
func writeBench(o *BenchOptions, out *output, report *BenchReport) error {
	if out.tmp == nil {
		return renderBench(o.IO.Out, o.Format, report)
	}
	err := renderBench(out.tmp, o.Format, report)
	if err == nil {
		err = out.commit()
	}
	if err != nil {
		out.abort()
		fmt.Fprintf(o.IO.ErrOut, "qoslab: --out %s failed (%v); writing %s to stdout instead\n", out.path, err, o.Format)
		if rerr := renderBench(o.IO.Out, o.Format, report); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "wrote %s (%s, %d records)\n", out.path, o.Format, len(report.Samples))
	return renderBench(o.IO.Out, "table", report)
}
