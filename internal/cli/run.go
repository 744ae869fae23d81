package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/report"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/runtrace"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/termcolor"
)

// runOptions are the settings of `qoslab run`.
type runOptions struct {
	IO        *IOStreams
	AgentPath string
	SpecFile  string
	Default   string
	Quick     bool
	Resume    string
	// Again is a results directory (or a run's name under Results) whose
	// recorded spec to run again, with a new seed.
	Again   string
	Results string // parent of results directories
	VMEnv   guestvm.Env
	// ExitStatus makes a run that ended fine exit by its verdicts
	// (verdictStatus); DryRun prints the plan and does nothing.
	ExitStatus bool
	DryRun     bool
	// CellTimeout, when not 0, replaces the spec's cell_timeout.
	CellTimeout time.Duration
	// MaxRepeats, when set, replaces the spec's max_repeats.
	MaxRepeats optionalInt
	// Repeats, when set, replaces the spec's repeats (spec.Spec.WithRepeats).
	Repeats optionalInt
	// defaultGiven says --default was typed on the command line;
	// defaultWhy, when not "", says why Default was chosen for this
	// machine (chooseDefault), for the plan.
	defaultGiven bool
	defaultWhy   string
	// Trace writes the run's trace (results.TraceFile) beside its results.
	Trace bool

	src sources
}

// newCmdRun builds `qoslab run`.
func newCmdRun(f *Factory, runF func(context.Context, *runOptions) error) *cobra.Command {
	o := &runOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a whole host-vs-VM experiment and say whether QoS survives in the VM",
		Long: `run measures an experiment spec (a YAML file, or a built-in one: ` + strings.Join(spec.DefaultSpecNames(), ", ") + `;
without --spec or --default, the one that shows the effect on this machine,
and the plan says which and why: "subsumption" where the cores are of kinds
(a Mac's P and E cores), after "Can you game core allocation on Apple
silicon?": fp with 1-4 threads and compression of 1 GiB at QoS 9 and 33, on
the host and in a VM, 6 repeats, interleaved; "contention" where they are
alike: fp with a spinner on every host CPU, as a class matters there only
when cores are scarce), keeps every finished cell in
qoslab-results/<name>-<time>/samples.jsonl, and ends with summaries, a report
and a verdict. A verdict undecided because an interval is too wide gets more
repeats of its cells in blocks, deciding again after each, up to the spec's
max_repeats (--max-repeats; 0 adds none). --repeats N runs N repeats in place
of the spec's. An interrupted run is finished with --resume DIR; a run is
repeated from its record, with a new seed, by --again DIR (a results
directory, or a run's name under --results).

--dry-run prints the plan instead (targets, cells in order with their counts,
the VM and accelerator it would boot, contention, an estimated duration, the
looks and the longest the run could take, and what it would write) and
measures, starts and writes nothing. Its estimates come from earlier runs on
this machine in --results, else, for loops on the host, from a calibration
of the loop in qoslab itself (well under a second); each names its source.

` + exitStatusDoc,
		Example: `  qoslab run --default contention
  qoslab run --default subsumption --quick --dry-run
  qoslab run --default contention --repeats 12
  qoslab run --again contention-20261124T224900Z --dry-run
  qoslab run --spec mine.yaml --exit-status || echo "QoS is not subsumed (3) or the test could not tell (4)"
  qoslab run --resume qoslab-results/subsumption-20261124T224900Z`,
		Args: noArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&o.AgentPath, "agent", "", "the qoslab-agent binary to run on this machine (default: next to qoslab)")
	fl.StringVar(&o.SpecFile, "spec", "", "experiment spec (YAML; keys in docs/spec.md)")
	fl.StringVar(&o.Default, "default", "", "built-in spec to run when --spec is not given: "+strings.Join(spec.DefaultSpecNames(), ", ")+" (default: the one that shows the effect on this machine: "+experimentKinds+" where its cores are of kinds, as a Mac's P and E cores, "+experimentAlike+" where they are alike)")
	fl.BoolVar(&o.Quick, "quick", false, "shrink loops and sizes so the run takes minutes (a smoke run, marked as such)")
	fl.StringVar(&o.Resume, "resume", "", "finish the interrupted run in this results directory")
	fl.StringVar(&o.Again, "again", "", "run again the run in this results directory (or of this name under --results) from the spec it recorded, with a new seed")
	fl.StringVar(&o.Results, "results", "qoslab-results", "where results directories are created")
	fl.StringVar(&o.VMEnv.Accel, "accel", "", "VM acceleration: "+strings.Join(registry.Accels(), ", ")+" (default: the spec's, else probed)")
	fl.StringVar(&o.VMEnv.Backend, "vm-backend", "", "hypervisor: "+strings.Join(registry.Names(), ", ")+" (default: the spec's, else "+registry.Default()+" on this machine)")
	fl.StringVar(&o.VMEnv.Model, "vm-model", "", vmModelHelp())
	fl.StringVar(&o.VMEnv.Store, "image-store", "", "image store (default $XDG_CACHE_HOME/qoslab/images)")
	fl.DurationVar(&o.VMEnv.BootTimeout, "boot-timeout", 0, bootTimeoutHelp)
	fl.BoolVar(&o.ExitStatus, "exit-status", false, exitStatusHelp)
	fl.BoolVar(&o.DryRun, "dry-run", false, "print the plan (cells, VM, accelerator, contention, estimated duration, files) and measure, start and write nothing")
	fl.DurationVar(&o.CellTimeout, "cell-timeout", 0, cellTimeoutHelp)
	fl.Var(&o.Repeats, "repeats", "repeats of each cell in place of the spec's repeats; a max_repeats the spec left at its default (3 times its repeats) follows (default: the spec's repeats)")
	fl.Var(&o.MaxRepeats, "max-repeats", "the most repeats per cell while a verdict is undecided because an interval is too wide: the run adds repeats of the undecided thread counts' cells in blocks up to N and decides again after each (default: the spec's max_repeats, else 3 times its repeats; 0 adds none)")
	fl.BoolVar(&o.Trace, "trace", false, "also write "+results.TraceFile+" in the results directory: where the run's time went, step by step, on the controller and in each agent (scripts/bench-orchestration.sh sums it)")
	_ = cmd.MarkFlagFilename("spec", "yaml", "yml")
	_ = cmd.MarkFlagDirname("resume")
	_ = cmd.MarkFlagDirname("again")
	complete(cmd, "default", spec.DefaultSpecNames)
	complete(cmd, "accel", registry.Accels)
	complete(cmd, "vm-backend", registry.Names)
	complete(cmd, "vm-model", registry.Models)
	return command(f, cmd, "run", o, &o.src, func([]string) error {
		_, fromSettings := o.src["default"]
		o.defaultGiven = cmd.Flags().Changed("default") && !fromSettings
		o.chooseDefault(o.defaultGiven, fromSettings)
		if err := o.check(); err != nil {
			return err
		}
		o.VMEnv = vmEnv(f, o.VMEnv)
		return nil
	}, runRun, runF)
}

// cellTimeoutHelp is --cell-timeout's help, run's and bench's alike.
const cellTimeoutHelp = "end a cell run still going after this long (90s, 10m): the run stops with what finished kept, to finish with --resume (default: the spec's cell_timeout, else none; a cell far past its expected time is named on the terminal either way)"

func (o *runOptions) check() error {
	if o.SpecFile != "" && o.Resume != "" {
		return usageErrorf("--spec and --resume exclude each other: a resumed run keeps the spec it started with")
	}
	if o.MaxRepeats.Given && o.Resume != "" {
		return usageErrorf("%s and --resume exclude each other: a resumed run keeps the max_repeats it started with", o.src.Name("max-repeats"))
	}
	if o.Repeats.Given && o.Resume != "" {
		return usageErrorf("%s and --resume exclude each other: a resumed run keeps the repeats it started with", o.src.Name("repeats"))
	}
	if o.Again != "" {
		switch {
		case o.Resume != "":
			return usageErrorf("--again and --resume exclude each other: --resume finishes the run in DIR, --again starts a new one from its spec")
		case o.SpecFile != "":
			return usageErrorf("--again and %s exclude each other: --again runs the spec the run recorded", o.src.Name("spec"))
		case o.defaultGiven:
			return usageErrorf("--again and --default exclude each other: --again runs the spec the run recorded")
		case o.Quick:
			return usageErrorf("--again and %s exclude each other: --again runs the spec as the run recorded it (a quick run's is shrunk already)", o.src.Name("quick"))
		}
	}
	if o.Repeats.Given && (o.Repeats.N < 1 || o.Repeats.N > spec.MaxRepeatsLimit) {
		return usageErrorf("%s %d: allowed 1..%d", o.src.Name("repeats"), o.Repeats.N, spec.MaxRepeatsLimit)
	}
	if err := spec.CheckCellTimeout(o.src.Name("cell-timeout"), o.CellTimeout); err != nil {
		return wrapUsage(err)
	}
	if o.VMEnv.Accel != "" {
		if err := oneOf(o.src.Name("accel"), o.VMEnv.Accel, registry.Accels()); err != nil {
			return err
		}
	}
	if o.VMEnv.Backend != "" {
		if err := registry.Check(o.VMEnv.Backend); err != nil {
			return usageErrorf("%s: %w", o.src.Name("vm-backend"), err)
		}
	}
	if err := checkVMModel(o.src.Name("vm-model"), o.VMEnv.Model, o.VMEnv.Backend); err != nil {
		return err
	}
	if o.SpecFile == "" && o.Resume == "" && o.Again == "" {
		if err := oneOf(o.src.Name("default"), o.Default, spec.DefaultSpecNames()); err != nil {
			return err
		}
	}
	return nil
}

// applyMaxRepeats gives s --repeats and --max-repeats, when they are set
// (recorded in run.json as applied), refusing a cap below the repeats.
func (o *runOptions) applyMaxRepeats(s *spec.Spec) error {
	if o.Repeats.Given {
		*s = s.WithRepeats(o.Repeats.N)
		if !o.MaxRepeats.Given {
			if err := spec.CheckMaxRepeats("the spec's max_repeats", s.MaxRepeats, s.Repeats); err != nil {
				return usageErrorf("%s %d: %v: give %s too", o.src.Name("repeats"), s.Repeats, err, o.src.Name("max-repeats"))
			}
		}
	}
	if !o.MaxRepeats.Given {
		return nil
	}
	if err := spec.CheckMaxRepeats(o.src.Name("max-repeats"), o.MaxRepeats.N, s.Repeats); err != nil {
		return wrapUsage(err)
	}
	s.MaxRepeats = o.MaxRepeats.N
	return nil
}

// optionalInt is an int flag that knows whether it was set: unset, the
// spec's value stands.
type optionalInt struct {
	N     int
	Given bool
}

func (v *optionalInt) String() string {
	if !v.Given {
		return ""
	}
	return strconv.Itoa(v.N)
}

func (v *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	v.N, v.Given = n, true
	return nil
}

func (v *optionalInt) Type() string { return "int" }

// spec loads the spec to run into a new results directory, or reopens the
// directory of the run to resume.
func (o *runOptions) spec(ctx context.Context, now time.Time) (*results.Dir, spec.Spec, error) {
	if o.Resume != "" {
		d, s, err := experiment.ResumeRun(o.Resume, now)
		if o.CellTimeout > 0 {
			s.CellTimeout = o.CellTimeout
		}
		return d, s, err
	}
	s, _, err := o.newSpec()
	if err != nil {
		return nil, s, err
	}
	if o.CellTimeout > 0 {
		s.CellTimeout = o.CellTimeout // recorded in run.json as applied
	}
	setting := "vm.backend in the spec"
	if o.VMEnv.Backend != "" {
		setting = o.src.Name("vm-backend")
	}
	if err := checkVMTarget(ctx, s, o.VMEnv, setting); err != nil {
		return nil, s, err
	}
	return experiment.CreateRun(o.Results, s, now)
}

// newSpec is the spec of a new run, with what the flags change applied,
// and where it came from (for the dry run's title): a spec file, a
// built-in spec, or a run's record (--again, with a new seed, said on
// stderr so the run can be repeated exactly).
func (o *runOptions) newSpec() (s spec.Spec, source string, err error) {
	switch {
	case o.Again != "":
		dir, err := o.againDir()
		if err != nil {
			return s, "", err
		}
		s, err = experiment.RecordedSpec(dir)
		if err != nil {
			return s, "", err
		}
		if err := s.Validate(); err != nil {
			return s, "", fmt.Errorf("the spec %s recorded cannot be run again: %w", dir, err)
		}
		source = "the spec " + dir + " recorded"
		if s.Order == spec.OrderInterleaved {
			seed := rand.Uint64()
			s.Seed = &seed
			source += fmt.Sprintf(", seed %d", seed)
			fmt.Fprintf(o.IO.ErrOut, "again from %s, with a new seed: %d\n", dir, seed)
		}
	case o.SpecFile != "":
		s, err = spec.LoadSpec(o.SpecFile)
		source = o.SpecFile
	default:
		s, err = spec.DefaultSpec(o.Default)
		source = "built in"
	}
	if err != nil {
		return s, "", wrapUsage(err)
	}
	if o.Quick {
		s = spec.Shrink(s)
	}
	if err := o.applyMaxRepeats(&s); err != nil {
		return s, "", err
	}
	return s, source, nil
}

// againDir is --again's results directory: the path given, or a run of
// that name under --results.
func (o *runOptions) againDir() (string, error) {
	if fi, err := os.Stat(o.Again); err == nil && fi.IsDir() {
		return o.Again, nil
	}
	if !strings.ContainsRune(o.Again, filepath.Separator) {
		under := filepath.Join(o.Results, o.Again)
		if fi, err := os.Stat(under); err == nil && fi.IsDir() {
			return under, nil
		}
		return "", usageErrorf("--again %q: no such results directory, here or under %s (qoslab results list names them)", o.Again, o.Results)
	}
	return "", usageErrorf("--again %q: no such results directory (qoslab results list names them)", o.Again)
}

func runRun(ctx context.Context, o *runOptions) (err error) {
	if o.DryRun {
		return runDryRun(o)
	}
	if o.defaultWhy != "" {
		fmt.Fprintf(o.IO.ErrOut, "experiment: %s (chosen: %s)\n", o.Default, o.defaultWhy)
	}
	began := time.Now()
	d, s, err := o.spec(ctx, began)
	if errors.Is(err, results.ErrComplete) {
		// Idempotent: a script that runs the same resume twice gets exit
		// 0, and the outputs rewritten from the samples.
		defer d.Unlock()
		fmt.Fprintf(o.IO.ErrOut, "run %s: every cell was measured already, nothing left to measure; rewriting its summaries, charts and report from its samples\n", d.Path)
		r, err := publish(o.IO, d.Path, nil, 0, 0)
		return o.exitStatus(r, err)
	}
	if err != nil {
		return err
	}
	defer d.Unlock()
	if spinners, err := s.Contention.Resolve(); err == nil {
		if w := o.unfit(s, spinners); w != "" {
			_ = termcolor.Warn(o.IO.ErrOut, "warning: "+w, w) // said on stderr: the run goes on either way
		}
	}
	prog := &progress{io: o.IO}
	env := experiment.Env{AgentPath: o.AgentPath, VM: o.VMEnv, Log: o.IO.ErrOut}
	if o.Trace {
		if env.Trace, err = runtrace.Create(filepath.Join(d.Path, results.TraceFile), began); err != nil {
			return err
		}
		env.Trace.Span(runtrace.SpanSpec, "", began, nil)
	}
	prog.hooks(&env)
	res, err := experiment.Execute(ctx, s, d, env)
	prog.clear()
	// Whatever happened, the summaries and the report cover what finished.
	wall := time.Since(began)
	traceRun(env.Trace, res, wall)
	t0 := time.Now()
	r, perr := publish(o.IO, d.Path, res, wall, s.TelemetryMs)
	env.Trace.Span(runtrace.SpanPublish, "", t0, nil)
	if terr := env.Trace.Close(); terr != nil {
		_ = termcolor.Warn(o.IO.ErrOut, fmt.Sprintf("warning: %v", terr), terr.Error()) // said on stderr: nothing more to do if it fails
	}
	if err != nil {
		return err
	}
	return o.exitStatus(r, perr)
}

// traceRun adds the run as its time line counts it: its wall time to the
// end of the measuring (the summaries and report are written after), what
// was measured and how long booting took.
func traceRun(t *runtrace.Recorder, res *experiment.Session, wall time.Duration) {
	if t == nil || res == nil {
		return
	}
	t.Add(runtrace.Span{Name: runtrace.SpanRun, EndNs: wall.Nanoseconds(), MeasuredNs: res.Stats.MeasuredNs,
		Steps: map[string]int64{runtrace.StepBoot: res.BootNs}})
}

// exitStatus is how a run that ended fine exits: with --exit-status, by
// its verdicts; err (from writing its outputs) comes first.
func (o *runOptions) exitStatus(r *report.Report, err error) error {
	if err != nil || !o.ExitStatus {
		return err
	}
	unfinished := ""
	if !r.Run.Complete() {
		unfinished = "it did not finish every cell"
	}
	return verdictStatus(r.Summary.Verdicts, unfinished)
}
