package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/report"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/version"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// BenchOptions is everything bench needs, from its flags, the environment
// and the config file.
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
	// Save keeps the run in a results directory under Results, as run does.
	Save    bool
	Results string

	Size     int64
	Ratio    float64
	Seed     uint64
	Codec    string
	Level    int
	Sink     string
	SinkPath string

	// Targets are where cells run: "host" (a local agent) and "vm" (an agent
	// in a VM), interleaved per repeat.
	Targets []string
	VM      experiment.VMSpec
	VMEnv   experiment.VMEnv

	// StartTarget and StartContention replace the real agents and spinners
	// in tests; nil uses the real ones.
	StartTarget     func(ctx context.Context, name string, s experiment.Spec, log io.Writer) (experiment.Target, []string, error)
	StartContention func(ctx context.Context, n int) (*experiment.Contention, error)

	flags benchFlags
	vm    vmFlags
	src   sources
}

// benchFlags are bench's flags as typed, before they are checked.
type benchFlags struct {
	workload, qos, threads, loops, size, target string
}

// NewCmdBench builds `qoslab bench`. runF replaces the work in tests.
func NewCmdBench(f *Factory, runF func(context.Context, *BenchOptions) error) *cobra.Command {
	o := &BenchOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure workloads at QoS classes and thread counts, on the host and in VMs",
		Long: `bench runs a matrix of cells (workload x QoS class x thread count), each
repeated, through the same qoslab-agent on every target: a local child for
host, the agent inside a VM for vm (booted for the run, or --vm NAME). With
--target host,vm the targets alternate within every repeat and are printed
side by side with the vm/host ratio. It is an experiment like run's, built from
its flags: --save keeps it in a results directory that compare, plot, report
and results show read.

QoS classes by name or number: ` + qos.Allowed + `.
Workloads: ` + strings.Join(catalog.Names(), ", ") + `.`,
		Example: `  qoslab bench --workload fp --qos 9,33 --threads 1-4 --loops 2e8 --repeat 3
  qoslab bench --target host,vm --workload fp --qos background,default --contention 2
  qoslab bench --workload compress,decompress --qos background,user-interactive --size 256MiB
  qoslab bench --workload fp --qos background,default --contention 2 --format csv --out fp.csv
  qoslab bench --workload fp --qos 9,33 --threads 1-2 --save`,
		Args: noArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&o.AgentPath, "agent", "", "the qoslab-agent binary to run on this machine (default: next to qoslab)")
	fl.StringVar(&o.flags.workload, "workload", "fp", "workloads, comma-separated: "+strings.Join(catalog.Names(), ", "))
	fl.StringVar(&o.flags.qos, "qos", "9,33", "QoS classes, comma-separated, by name or number")
	fl.StringVar(&o.flags.threads, "threads", "1", `thread counts (processes for procs): "4", "1-4" or "1,2,4"`)
	fl.StringVar(&o.flags.loops, "loops", "", "loops per thread (pi: iterations in total); 2e8 style accepted (default: per workload, about 1 s)")
	fl.IntVar(&o.Repeat, "repeat", 3, "repeats of every cell")
	fl.IntVar(&o.Contention, "contention", 0, "spinner threads at default priority run outside the agent for the whole run")
	fl.StringVar(&o.Format, "format", "table", "output: "+strings.Join(report.BenchFormats, ", "))
	fl.StringVar(&o.Out, "out", "", "write the output to FILE (the table still goes to the terminal)")
	fl.BoolVar(&o.Save, "save", false, "also keep the run in a results directory (RESULTS/bench-<UTC time>), with summaries and report")
	fl.StringVar(&o.Results, "results", "qoslab-results", "where --save creates the results directory")
	fl.StringVar(&o.flags.size, "size", "1GiB", "compress/decompress: bytes of generated input, split over the threads")
	fl.Float64Var(&o.Ratio, "ratio", catalog.DefaultRatio, "compress/decompress: compressibility of the generated input (about N:1 under zstd)")
	fl.Uint64Var(&o.Seed, "seed", experiment.DefaultDataSeed, "seed of generated input and of pi's random numbers")
	fl.StringVar(&o.Codec, "codec", catalog.DefaultCodec, "compress/decompress codec: "+strings.Join(catalog.AllCodecs(), ", ")+" (lzfse: macOS only)")
	fl.IntVar(&o.Level, "level", 0, "codec level (0: the codec's default)")
	fl.StringVar(&o.Sink, "sink", catalog.DefaultSink, "where compressed output goes: file (fsync'd), block (a raw device), null")
	fl.StringVar(&o.SinkPath, "sink-path", "", "file sink: directory (default: a temporary one); block sink: the device")
	fl.StringVar(&o.flags.target, "target", experiment.TargetHost, "where to measure, comma-separated: host, vm (interleaved per repeat, shown side by side)")
	o.vm.add(cmd, true)
	complete(cmd, "workload", catalog.Names)
	complete(cmd, "qos", qosNames)
	complete(cmd, "target", fixed(experiment.TargetHost, experiment.TargetVM))
	complete(cmd, "format", fixed(report.BenchFormats...))
	complete(cmd, "codec", catalog.AllCodecs)
	complete(cmd, "sink", catalog.Sinks)
	return command(f, cmd, "bench", o, &o.src, func([]string) error {
		if err := o.check(); err != nil {
			return err
		}
		o.VMEnv = vmEnv(f, o.VMEnv)
		return nil
	}, benchRun, runF)
}

// qosNames are the QoS classes by name, for completion.
func qosNames() []string {
	var out []string
	for _, c := range qos.All() {
		out = append(out, c.String())
	}
	return out
}

// check reads and checks bench's settings; every mistake is a usage error
// naming the setting (flag, variable or config key), the value and what is
// allowed.
func (o *BenchOptions) check() error {
	n := o.src.Name
	for _, w := range strings.Split(o.flags.workload, ",") {
		w = strings.TrimSpace(w)
		if _, err := catalog.Get(w); err != nil {
			return usageError(err)
		}
		o.Workloads = append(o.Workloads, w)
	}
	var err error
	if o.Targets, err = parseTargets(n("target"), o.flags.target); err != nil {
		return err
	}
	if o.VM, o.VMEnv, err = o.vm.parse(o.src); err != nil {
		return err
	}
	if o.QoS, err = qos.ParseList(o.flags.qos); err != nil {
		return usageErrorf("%s: %w", n("qos"), err)
	}
	maxThreads := catalog.MaxThreads
	for _, w := range o.Workloads {
		maxThreads, _ = catalog.Lookup(w).MaxCount()
	}
	if o.Threads, err = units.ParseCounts(strings.TrimPrefix(n("threads"), "--"), o.flags.threads, maxThreads); err != nil {
		return usageError(err)
	}
	if o.flags.loops != "" {
		if o.Loops, err = units.ParseCount(n("loops"), o.flags.loops, catalog.MaxLoops); err != nil {
			return usageError(err)
		}
	}
	if o.Size, err = units.ParseSize(n("size"), o.flags.size, catalog.MaxDataBytes); err != nil {
		return usageError(err)
	}
	if o.Repeat < 1 || o.Repeat > 1000 {
		return usageErrorf("%s %d: allowed 1..1000", n("repeat"), o.Repeat)
	}
	if o.Contention < 0 || o.Contention > 256 {
		return usageErrorf("%s %d: allowed 0..256 spinner threads", n("contention"), o.Contention)
	}
	if err := oneOf(n("format"), o.Format, report.BenchFormats); err != nil {
		return err
	}
	if err := oneOf(n("sink"), o.Sink, catalog.Sinks()); err != nil {
		return err
	}
	if o.Sink == catalog.SinkBlock && o.SinkPath == "" {
		return usageErrorf("%s block needs --sink-path DEVICE (a raw block device whose contents may be overwritten)", n("sink"))
	}
	if o.compresses() {
		if err := catalog.CheckLevel(o.Codec, o.Level); err != nil {
			return usageErrorf("%s %s %s %d: %w", n("codec"), o.Codec, n("level"), o.Level, err)
		}
	}
	if o.Ratio < 1 {
		return usageErrorf("%s %g: allowed 1 (incompressible) and above", n("ratio"), o.Ratio)
	}
	return nil
}

func (o *BenchOptions) compresses() bool {
	for _, w := range o.Workloads {
		if catalog.IsCompression(w) {
			return true
		}
	}
	return false
}

func parseTargets(name, s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if err := oneOf(name, t, []string{experiment.TargetHost, experiment.TargetVM}); err != nil {
			return nil, err
		}
		if !contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// spec is the experiment bench's flags describe: one matrix entry per
// workload, in sequential order (repeats outermost, targets innermost, as
// written), so slow drift spreads over every cell and both targets.
func (o *BenchOptions) spec() experiment.Spec {
	s := experiment.Spec{Name: "bench", Targets: o.Targets, VM: o.VM, Repeats: o.Repeat, Order: experiment.OrderSequential,
		Contention: o.Contention, DataSeed: o.Seed}
	if o.Save {
		s.TelemetryMs = telemetry.DefaultIntervalMs
	}
	for _, w := range o.Workloads {
		e := experiment.MatrixEntry{Workload: w, QoS: o.QoS, Threads: o.Threads}
		if catalog.IsCompression(w) {
			e.SizeBytes, e.Ratio, e.Codec, e.Level, e.Sink, e.SinkPath = o.Size, o.Ratio, o.Codec, o.Level, o.Sink, o.SinkPath
		} else {
			e.Loops = o.Loops
			if e.Loops == 0 {
				e.Loops = catalog.Lookup(w).DefaultLoops
			}
			if catalog.Lookup(w).LoopsInTotal {
				// pi's loops are iterations in total: at least one per thread.
				e.Loops = max(e.Loops, uint64(o.Threads[len(o.Threads)-1]))
			}
		}
		s.Matrix = append(s.Matrix, e)
	}
	return s
}

// benchRun measures the matrix and writes the output. Whatever finished is
// written even when a later cell fails or the run is interrupted.
func benchRun(ctx context.Context, o *BenchOptions) (err error) {
	s := o.spec()
	if err := s.Validate(); err != nil {
		return usageError(err)
	}
	doc := &report.Bench{SchemaVersion: results.SchemaVersion, ToolVersion: version.String(), Started: time.Now().UTC(), Targets: map[string]any{}}
	out, err := openOutput(o.src.Name("out"), o.Out)
	if err != nil {
		return err
	}
	var dir *results.Dir
	if o.Save {
		if dir, s, err = experiment.CreateRun(o.Results, s, time.Now()); err != nil {
			out.abort()
			return err
		}
		doc.Results = dir.Path
	}
	doc.Request, doc.Spec = report.NewBenchRequest(s, o.VMEnv.Name, o.VMEnv.Store), s
	defer func() {
		doc.Finished = time.Now().UTC()
		if err != nil {
			doc.Error = err.Error()
		}
		if werr := writeBench(o, out, doc); werr != nil && err == nil {
			err = werr
		}
		if dir != nil {
			if perr := publish(o.IO, dir.Path, nil); perr != nil && err == nil {
				err = perr
			}
		}
	}()

	prog := &progress{io: o.IO}
	env := experiment.Env{AgentPath: o.AgentPath, VM: o.VMEnv, Log: o.IO.ErrOut, StartTarget: o.StartTarget, StartContention: o.StartContention}
	prog.hooks(&env)
	res, err := experiment.Execute(ctx, s, dir, env)
	prog.clear()
	for name, info := range res.Infos {
		doc.Targets[name] = agent.InfoJSON(info)
	}
	if len(res.Machines) > 0 {
		doc.Machines = res.Machines
	}
	doc.Contention, doc.Notes = res.Contention, res.Notes
	for _, r := range res.Runs {
		c := r.Cell
		doc.Runs = append(doc.Runs, report.BenchRun{Target: c.Target, Workload: c.Workload, QoS: int(c.QoS), Threads: c.Threads,
			Repeat: c.Repeat, Metrics: r.Metrics, Notes: r.Notes})
		doc.Samples = append(doc.Samples, r.Samples...)
	}
	var unsupported *experiment.UnsupportedCodecError
	switch {
	case errors.As(err, &unsupported):
		return usageErrorf("%s %q is not available on %s/%s: allowed %s", o.src.Name("codec"), unsupported.Codec, unsupported.OS, unsupported.Arch, strings.Join(unsupported.Allowed, ", "))
	case err != nil && agent.IsBadRequest(err):
		return usageError(err)
	}
	return err
}
