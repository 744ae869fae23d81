package cli

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/benchdoc"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// benchOptions is everything bench needs, from its flags, the environment
// and the config file.
type benchOptions struct {
	IO        *IOStreams
	AgentPath string
	Workloads []string
	QoS       []qos.Class
	Threads   []int
	// Params are the cells' parameters from their flags (addParamFlags):
	// the compression workloads' as given or their defaults; Loops 0 for
	// each workload's default, or a Duration, when not 0, instead: every
	// thread runs until the cell's clock reaches it.
	catalog.Params
	Repeat     int
	Warmup     int
	Contention contention.SpinnerCount
	// CellTimeout, when not 0, ends a cell run still going after it.
	CellTimeout time.Duration
	Format      string
	Out         string
	// Save keeps the run in a results directory under Results, as run does.
	Save    bool
	Results string
	// DryRun prints the plan and does nothing.
	DryRun bool

	// Seed seeds the compression workloads' input and pi.
	Seed uint64

	// Targets are where cells run: "host" (a local agent) and "vm" (an agent
	// in a VM), interleaved per repeat.
	Targets []string
	VM      spec.VMSpec
	VMEnv   guestvm.Env

	// StartTarget and StartContention replace the real agents and spinners
	// in tests; nil uses the real ones.
	StartTarget     func(ctx context.Context, name string, s spec.Spec, log io.Writer) (experiment.Target, []string, error)
	StartContention func(ctx context.Context, n int) (*contention.Contention, error)

	flags      benchFlags
	paramFlags map[string]*paramFlag
	vm         vmFlags
	src        sources
	// durationGiven says --duration was set (flag, variable or config
	// file), so that 0s is refused rather than read as "not given".
	durationGiven bool
}

// benchFlags are bench's flags as typed, before they are checked.
type benchFlags struct {
	workload, qos, threads, target, contention string
}

// newCmdBench builds `qoslab bench`. runF replaces the work in tests.
func newCmdBench(f *Factory, runF func(context.Context, *benchOptions) error) *cobra.Command {
	o := &benchOptions{IO: f.IO}
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
  qoslab bench --workload fp --qos 9,33 --format md --out fp.md
  qoslab bench --workload fp --qos 9,33 --threads 1-2 --save
  qoslab bench --target host,vm --workload fp --threads 1-4 --dry-run`,
		Args: noArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&o.AgentPath, "agent", "", "the qoslab-agent binary to run on this machine (default: next to qoslab)")
	fl.StringVar(&o.flags.workload, "workload", "fp", "workloads, comma-separated: "+strings.Join(catalog.Names(), ", "))
	fl.StringVar(&o.flags.qos, "qos", "9,33", "QoS classes, comma-separated, by name or number")
	fl.StringVar(&o.flags.threads, "threads", "1", `thread counts (processes for procs): "4", "1-4" or "1,2,4"`)
	fl.DurationVar(&o.CellTimeout, "cell-timeout", 0, "end a cell run still going after this long (90s, 10m): bench stops with what finished kept (with --save, finish it with qoslab run --resume DIR); default none, and a cell far past its expected time is named on the terminal either way")
	fl.IntVar(&o.Repeat, "repeat", spec.DefaultRepeats, "repeats of every cell (6: fewer cannot show a significant difference)")
	fl.IntVar(&o.Warmup, "warmup", spec.DefaultWarmup, "untimed runs of every cell on every target before its first timed run")
	fl.StringVar(&o.flags.contention, "contention", "0", "spinner threads at default priority, each pinned to a CPU, run outside the agent for the whole run: N, or all (one per CPU)")
	fl.StringVar(&o.Format, "format", render.FormatText, "output: "+strings.Join(render.Formats, ", ")+
		" (text fits the terminal; md is Markdown; csv is the tidy CSV of every record; table and markdown, their older names, still work)")
	fl.StringVar(&o.Out, "out", "", "write the output to FILE (the table still goes to the terminal)")
	fl.BoolVar(&o.Save, "save", false, "also keep the run in a results directory (RESULTS/bench-<UTC time>), with summaries and report")
	fl.StringVar(&o.Results, "results", "qoslab-results", "where --save creates the results directory (and where --dry-run looks for earlier cell times)")
	fl.BoolVar(&o.DryRun, "dry-run", false, "print the plan (cells, VM, accelerator, contention, estimated duration, files) and measure, start and write nothing")
	fl.Uint64Var(&o.Seed, "seed", spec.DefaultDataSeed, "seed of generated input and of pi's random numbers")
	// The parameters' flags default to the compression workloads' values
	// (loops and duration: each workload's, when the spec is made).
	for _, k := range catalog.ParamKeys() {
		if k.Compression && k.Fill != nil {
			k.Fill(catalog.Lookup(catalog.Compress), &o.Params)
		}
	}
	o.paramFlags = addParamFlags(fl, &o.Params)
	fl.StringVar(&o.flags.target, "target", spec.TargetHost, "where to measure, comma-separated: host, vm (interleaved per repeat, shown side by side)")
	o.vm.add(f, cmd, true)
	complete(cmd, "workload", catalog.Names)
	complete(cmd, "qos", qos.Names)
	complete(cmd, "target", fixed(spec.TargetHost, spec.TargetVM))
	complete(cmd, "format", fixed(render.Formats...))
	complete(cmd, "codec", catalog.AllCodecs)
	complete(cmd, "sink", catalog.Sinks)
	return command(f, cmd, "bench", o, &o.src, func([]string) error {
		_, fromSettings := o.src["duration"]
		o.durationGiven = cmd.Flags().Changed("duration") || fromSettings
		if err := o.check(); err != nil {
			return err
		}
		o.VMEnv = vmEnv(f, o.VMEnv)
		return nil
	}, benchRun, runF)
}

// check reads and checks bench's settings; every mistake is a usage error
// naming the setting (flag, variable or config key), the value and what is
// allowed.
func (o *benchOptions) check() error {
	n := o.src.Name
	var err error
	if o.Workloads, err = catalog.ParseList(o.flags.workload); err != nil {
		return wrapUsage(err)
	}
	if o.Targets, err = spec.ParseTargets(n("target"), o.flags.target); err != nil {
		return wrapUsage(err)
	}
	if o.VM, o.VMEnv, err = o.vm.parse(o.src); err != nil {
		return err
	}
	if o.QoS, err = qos.ParseList(o.flags.qos); err != nil {
		return usageErrorf("%s: %w", n("qos"), err)
	}
	if o.Threads, err = units.ParseCounts(strings.TrimPrefix(n("threads"), "--"), o.flags.threads, catalog.MaxCountOf(o.Workloads)); err != nil {
		return wrapUsage(err)
	}
	for _, k := range catalog.ParamKeys() {
		if f := o.paramFlags[k.Flag]; f != nil {
			if err := f.read(n(k.Flag)); err != nil {
				return wrapUsage(err)
			}
		}
	}
	if o.Duration != 0 || o.durationGiven {
		if loops := o.paramFlags["loops"].text; loops != "" {
			return usageErrorf("%s %s and %s %s: give one, not both", n("loops"), loops, n("duration"), o.Duration)
		}
		for _, w := range o.Workloads {
			if err := catalog.CheckDuration(catalog.Lookup(w), o.Duration); err != nil {
				return usageErrorf("%s: %w", n("duration"), err)
			}
		}
	}
	if err := spec.CheckCellTimeout(n("cell-timeout"), o.CellTimeout); err != nil {
		return wrapUsage(err)
	}
	if o.Warmup < 0 || o.Warmup > 100 {
		return usageErrorf("%s %d: allowed 0..100 untimed runs per cell and target", n("warmup"), o.Warmup)
	}
	if o.Repeat < 1 || o.Repeat > 1000 {
		return usageErrorf("%s %d: allowed 1..1000", n("repeat"), o.Repeat)
	}
	if o.Contention, err = contention.ParseSpinnerCount(n("contention"), o.flags.contention); err != nil {
		return wrapUsage(err)
	}
	if f := render.FormatOf(o.Format); f != "" {
		o.Format = f
	}
	if err := oneOf(n("format"), o.Format, render.Formats); err != nil {
		return err
	}
	c := &o.Params
	if err := oneOf(n("sink"), c.Sink, catalog.Sinks()); err != nil {
		return err
	}
	if c.Sink == catalog.SinkBlock && c.SinkPath == "" {
		return usageErrorf("%s block needs --sink-path DEVICE (a raw block device whose contents may be overwritten)", n("sink"))
	}
	if slices.ContainsFunc(o.Workloads, catalog.IsCompression) {
		if err := catalog.CheckLevel(c.Codec, c.Level); err != nil {
			return usageErrorf("%s %s %s %d: %w", n("codec"), c.Codec, n("level"), c.Level, err)
		}
	}
	if c.Ratio < 1 {
		return usageErrorf("%s %g: allowed 1 (incompressible) and above", n("ratio"), c.Ratio)
	}
	return nil
}

// spec is the experiment bench's flags describe: one matrix entry per
// workload, in sequential order (repeats outermost, targets innermost, as
// written), so slow drift spreads over every cell and both targets.
func (o *benchOptions) spec() spec.Spec {
	s := spec.Spec{Name: "bench", Targets: o.Targets, VM: o.VM, Repeats: o.Repeat, Warmup: o.Warmup, Order: spec.OrderSequential,
		Contention: o.Contention, DataSeed: o.Seed, CellTimeout: o.CellTimeout}
	if o.Save {
		s.TelemetryMs = telemetry.DefaultIntervalMs
	}
	for _, w := range o.Workloads {
		e := spec.MatrixEntry{Workload: w, QoS: o.QoS, Threads: o.Threads, Params: catalog.ParamsTaken(w, o.Params)}
		for _, k := range catalog.ParamKeys() {
			if k.TakenBy(w) && k.Fill != nil && !k.IsSet(e.Params) {
				k.Fill(catalog.Lookup(w), &e.Params)
			}
		}
		if catalog.Lookup(w).LoopsInTotal {
			// pi's loops are iterations in total: at least one per thread.
			e.Loops = max(e.Loops, uint64(o.Threads[len(o.Threads)-1]))
		}
		s.Matrix = append(s.Matrix, e)
	}
	return s
}

// checkVMTarget refuses a vm target this machine cannot have
// (experiment.CheckVMTarget); a backend for another platform is a usage
// error naming setting, where it was chosen.
func checkVMTarget(ctx context.Context, s spec.Spec, env guestvm.Env, setting string) error {
	err := experiment.CheckVMTarget(ctx, s, env)
	var notHere *experiment.BackendNotHereError
	if errors.As(err, &notHere) {
		return usageErrorf("%s: %w", setting, err)
	}
	return err
}

// benchRun measures the matrix and writes the output. Whatever finished is
// written even when a later cell fails or the run is interrupted.
func benchRun(ctx context.Context, o *benchOptions) (err error) {
	s := o.spec()
	if err := s.Validate(); err != nil {
		return wrapUsage(err)
	}
	if o.DryRun {
		return benchDryRun(o, s)
	}
	if err := checkOut(o.src.Name("out"), o.Out); err != nil {
		return err
	}
	// What cannot run here is refused before anything starts or boots,
	// and before the output says no cell finished. (Tests bring targets.)
	if o.StartTarget == nil {
		if err := checkVMTarget(ctx, s, o.VMEnv, o.src.Name("vm-backend")); err != nil {
			return err
		}
	}
	var dir *results.Dir
	saved := ""
	if o.Save {
		if dir, s, err = experiment.CreateRun(o.Results, s, time.Now()); err != nil {
			return err
		}
		defer dir.Unlock()
		saved = dir.Path
	}
	doc := benchdoc.NewBench(s, o.VMEnv.Name, o.VMEnv.Store, saved)
	// Each warning is said once: a table's own warnings are under it, so
	// neither the live log nor --save's summary repeats them.
	format := render.FormatOf(o.Format)
	table := o.Out != "" || format == render.FormatText || format == render.FormatMarkdown
	defer func() {
		doc.Finish(err)
		werr := writeBench(o, doc)
		if werr != nil && err == nil {
			err = werr
		}
		said := map[string]bool{}
		if table {
			for _, w := range doc.Said() {
				said[w] = true
			}
		}
		if dir != nil {
			io := *o.IO
			io.Out = &warningFilter{w: o.IO.Out, drop: func(w string) bool { return said[w] }}
			if _, perr := publish(&io, dir.Path, nil, 0, 0); perr != nil && err == nil {
				err = perr
			}
		}
	}()

	var quiet map[experiment.NoteKind]bool
	if table {
		quiet = map[experiment.NoteKind]bool{experiment.NoteShortCell: true}
	}
	prog := &progress{io: o.IO}
	env := experiment.Env{AgentPath: o.AgentPath, VM: o.VMEnv, Log: o.IO.ErrOut, Quiet: quiet, StartTarget: o.StartTarget, StartContention: o.StartContention}
	prog.hooks(&env)
	res, err := experiment.Execute(ctx, s, dir, env)
	prog.clear()
	doc.Add(res)
	var unsupported *experiment.UnsupportedCodecError
	switch {
	case errors.As(err, &unsupported):
		return usageErrorf("%s %q is not available on %s/%s: allowed %s", o.src.Name("codec"), unsupported.Codec, unsupported.OS, unsupported.Arch, strings.Join(unsupported.Allowed, ", "))
	case err != nil && agent.IsBadRequest(err):
		return wrapUsage(err)
	}
	return err
}
