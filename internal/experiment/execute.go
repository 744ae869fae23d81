// Package experiment carries out experiments: it plans a spec's cells,
// starts the targets (the host's agent, a VM booted or attached), the
// contention spinners and telemetry, runs the cells and keeps every result.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/interrupt"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/runtrace"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/termcolor"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/version"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Env is how this machine carries out a spec: where the agent and the VMs
// are, and what to tell the user. It never changes what a spec measures.
type Env struct {
	// AgentPath is the host's agent binary; empty for the one next to qoslab.
	AgentPath string
	VM        guestvm.Env
	// Log gets the lines a user reads as a run starts and ends (targets,
	// boot, contention, notes); nil discards them.
	Log io.Writer
	// Quiet are the kinds of note kept (in the session and run.json) but
	// not written to Log: bench says its short cells' warnings under its
	// table instead.
	Quiet map[NoteKind]bool
	// OnStep is called before each cell run and OnRun after each timed one
	// is kept, both outside any measured interval. OnProgress gets the
	// agent's progress events; nil asks the agent for none.
	OnStep     func(Step)
	OnRun      func(Step, CellRun)
	OnProgress func(*agentpb.Progress)
	// OnStall gets each cell run that goes far past what it was expected
	// to take (the watchdog's Stall); nil writes it to Log.
	OnStall func(Stall)
	// OnLook gets each line about the run's looks (a block planned, what
	// the looks took), between cell runs; nil writes it to Log.
	OnLook func(line string)
	// StartTarget starts the agent of a target; nil starts the real ones
	// (the host's agent, or the VM's). It returns notes on what it changed
	// to fit this machine. Tests pass fakes.
	StartTarget func(ctx context.Context, name string, s spec.Spec, log io.Writer) (Target, []string, error)
	// StartContention starts the spinners; nil starts the real spinner
	// process.
	StartContention func(ctx context.Context, n int) (*contention.Contention, error)
	// Trace, when set, gets a span for each step of the run: the targets'
	// starts, the set-up, every cell run (with its agent's own steps) and
	// the stop (qoslab run --trace).
	Trace *runtrace.Recorder
}

// Session is what one session of a run (one call of Execute: a whole run,
// or the part a --resume finished) measured, and on what.
type Session struct {
	// Infos are the targets' agents' Info, by target name.
	Infos map[string]*agentpb.InfoReply
	// Machines are the VMs as the host sees them, by target name.
	Machines   map[string]hv.MachineInfo
	Contention *contention.Contention
	// Scheduling is how the controller and the children it started were
	// scheduled.
	Scheduling Scheduling
	// Runs are the timed cell runs this session measured, in order.
	Runs  []CellRun
	Stats Stats
	// BootNs adds up the boot times of the VMs this session booted.
	BootNs int64
	// Notes are what the user should know about how the run was carried
	// out (a value changed to fit the host, a class the vCPU threads got),
	// each with its kind.
	Notes []Note
}

// TimeText says where a session's wall time went, and what telemetry cost
// the agents sampling every telemetryMs: the lines a run ends with.
func (o *Session) TimeText(wall time.Duration, telemetryMs int) []string {
	var out []string
	if st := o.Stats; st.Runs > 0 {
		measured := time.Duration(st.MeasuredNs + o.BootNs)
		out = append(out, fmt.Sprintf("time: %s wall, %s measured + %s booting (%.1f%% orchestration)", wall.Round(time.Millisecond),
			time.Duration(st.MeasuredNs).Round(time.Millisecond), time.Duration(o.BootNs).Round(time.Millisecond),
			100*(1-float64(measured)/float64(wall))))
	}
	if ts := o.Stats.Telemetry; ts.Samples > 0 && telemetryMs > 0 {
		sampled := time.Duration(ts.Samples) * time.Duration(telemetryMs) * time.Millisecond
		out = append(out, fmt.Sprintf("telemetry: %d samples in the agents every %d ms, %.1f%% of intervals within 10 ms of it, sampler CPU %s (%.2f%% of one core)",
			ts.Samples, telemetryMs, 100*ts.Within10ms, ts.SamplerCPU.Round(time.Millisecond), 100*float64(ts.SamplerCPU)/float64(sampled)))
	}
	return out
}

// Samples are every sample of the session's runs, in order.
func (o *Session) Samples() []results.Sample {
	var out []results.Sample
	for _, r := range o.Runs {
		out = append(out, r.Samples...)
	}
	return out
}

// Records are the session's samples as records carrying their cell's
// parameters, in the order measured: what tells apart two cells of a
// workload that differ only in them (results.CellParams).
func (o *Session) Records() []results.Record {
	var out []results.Record
	for _, r := range o.Runs {
		p := r.Cell.Params
		for _, s := range r.Samples {
			out = append(out, results.Record{Params: &p, Sample: s, HostView: s.HostView})
		}
	}
	return out
}

// CreateRun makes the results directory of a run of s under parent and
// records in it the spec as applied, with the seed of its plan; it returns
// the spec with that seed, so Execute lays out the same plan. The directory
// comes back locked (see ResumeRun): the caller unlocks it when done.
func CreateRun(parent string, s spec.Spec, now time.Time) (*results.Dir, spec.Spec, error) {
	cells, seed := Plan(s)
	s.Seed = &seed
	recorded, err := results.RecordSpec(s)
	if err != nil {
		return nil, s, err
	}
	file, err := spec.Encode(s)
	if err != nil {
		return nil, s, err
	}
	d, err := results.Create(parent, s.Name, now)
	if err != nil {
		return nil, s, err
	}
	if _, err := d.Lock(); err != nil {
		return nil, s, err
	}
	d.Run.Spec, d.Run.SpecFile, d.Run.Seed, d.Run.ToolVersion = recorded, string(file), seed, version.String()
	for _, c := range cells {
		if c.Timed() {
			d.Run.Planned++
		}
	}
	if err := d.SaveRun(); err != nil {
		d.Unlock()
		return nil, s, err
	}
	return d, s, nil
}

// ResumeRun opens the results directory of an interrupted run and returns
// the spec it started with, marking the run as taken up again.
//
// It takes the directory's lock (a directory another qoslab runs in is an
// *results.InUseError naming it) and checks everything before it writes:
// a refused resume leaves run.json as it was. A run that finished every
// cell comes back with an error wrapping results.ErrComplete and the
// directory still locked, so the caller may rewrite its summaries; the
// caller unlocks the directory (Dir.Unlock) when it is done with it.
func ResumeRun(path string, now time.Time) (d *results.Dir, s spec.Spec, err error) {
	d, err = results.Open(path)
	if err != nil {
		return nil, spec.Spec{}, err
	}
	unlock, err := d.Lock()
	if err != nil {
		return nil, spec.Spec{}, err
	}
	defer func() {
		if err != nil && !errors.Is(err, results.ErrComplete) {
			unlock()
		}
	}()
	if d.Run.Spec.IsZero() {
		return nil, s, fmt.Errorf("resume %s: %w", path, errNoSpec)
	}
	s = d.Run.Spec.Value()
	// Damage is refused here, before run.json is touched. Whether the
	// run is complete is read from its samples, not from run.json: a
	// finished run whose samples lost a cell run measures it again.
	recs, torn, err := d.ReadSamples()
	if err != nil {
		return nil, s, fmt.Errorf("resume %s: %w", path, err)
	}
	if err := d.Resume(now, results.Assess(plannedRunsOf(s, d.Run.Looks), d.Run.Planned, recs, torn, nil)); err != nil {
		if errors.Is(err, results.ErrComplete) {
			return d, s, err
		}
		return nil, s, err
	}
	return d, s, nil
}

// errNoSpec is a run.json without a spec field at all, which qoslab never
// writes (a run that stopped before it recorded its spec has null there,
// and resumes with the empty spec, as it always has).
var errNoSpec = errors.New("its run.json has no spec field: it was not written by qoslab run")

// UnsupportedCodecError is a codec a target's OS lacks, found before
// anything is measured.
type UnsupportedCodecError struct {
	Target, Codec, OS, Arch string
	Allowed                 []string
}

func (e *UnsupportedCodecError) Error() string {
	return fmt.Sprintf("codec %q is not available on %s/%s (%s): allowed %s", e.Codec, e.OS, e.Arch, e.Target, strings.Join(e.Allowed, ", "))
}

// Execute measures the plan of s on its targets: it starts them (the host's
// agent, a VM booted for the run or a named one), the contention spinners
// and telemetry, runs every cell, and stops everything it started, also
// when ctx is cancelled.
//
// With a results directory (CreateRun, ResumeRun), every finished cell run
// is appended to its samples, synced, before the next starts; repeats it
// holds already are not measured again; telemetry goes to its
// telemetry.jsonl; and run.json records the targets, the notes and how the
// run ended. Without one (nil), results are only returned.
func Execute(ctx context.Context, s spec.Spec, dir *results.Dir, env Env) (out *Session, err error) {
	x := newExecution(s, dir, env)
	out = x.out
	cells, seed := Plan(s)
	var sampleLog *results.SampleLog
	var finished map[results.CellRunKey]bool
	var finishedLabels map[string][]int
	if dir != nil {
		fmt.Fprintf(x.log, "run %s: %d cell runs (seed %d) into %s\n", s.Name, len(cells), seed, dir.Path)
		t0 := time.Now()
		if sampleLog, finished, finishedLabels, err = x.openSamples(); err != nil {
			return out, err
		}
		env.Trace.Span(runtrace.SpanSamples, "", t0, nil)
		defer sampleLog.Close()
		// Whatever happens from here, run.json says how the run ended.
		defer func() {
			t0 := time.Now()
			err = x.recordEnd(ctx, err)
			env.Trace.Span(runtrace.SpanRecorded, "", t0, nil)
		}()
	}
	if s.Quick {
		fmt.Fprintln(x.log, "quick: loops and sizes shrunk for a smoke run; not comparable with a full run")
	}

	defer func() {
		t0 := time.Now()
		err = x.stopTargets(err)
		env.Trace.Span(runtrace.SpanStop, "", t0, nil)
	}()
	if err := x.startTargets(ctx); err != nil {
		return out, err
	}
	t0 := time.Now()
	spinners, err := s.Contention.Resolve()
	if err != nil {
		return out, err
	}
	var conditions func() error
	if spinners > 0 {
		cont, err := x.startContention(ctx, spinners)
		if err != nil {
			return out, err
		}
		defer cont.Stop()
		conditions = cont.Running
	}
	var tel *runTelemetry
	if s.TelemetryMs > 0 && dir != nil {
		var closeTel func() error
		tel, closeTel, err = setUpTelemetry(ctx, filepath.Join(dir.Path, results.TelemetryFile), s, x.targets, finishedLabels, func(n string) { x.note(Note{Kind: NoteTelemetry, Text: n}) })
		if err != nil {
			return out, err
		}
		defer func() {
			if cerr := closeTel(); cerr != nil {
				fmt.Fprintf(x.log, "telemetry: %v\n", cerr)
			}
		}()
	}

	if s.CellTimeout > 0 {
		fmt.Fprintf(x.log, "cell timeout: %s (a cell run still going then ends the run, what finished kept)\n", s.CellTimeout)
	}
	env.Trace.Span(runtrace.SpanSetUp, "", t0, nil)
	r := x.newRunner(cells, spinners)
	r.Log, r.Finished, r.Telemetry, r.Conditions, r.Trace = sampleLog, finished, tel, conditions, env.Trace
	defer r.HostView.Close()
	if out.Stats, err = r.Run(ctx); err != nil {
		return out, err
	}
	return out, x.runLooks(ctx, r, seed, &out.Stats)
}

// execution is one call of Execute: the spec, where its results go, what
// it has started, and the session so far.
type execution struct {
	s   spec.Spec
	dir *results.Dir // nil: results are only returned
	env Env
	log io.Writer
	out *Session
	// targets are the targets started so far, by name.
	targets map[string]Target
	// prior are the records earlier sessions of the run measured (a
	// resume's): the looks decide on them with this session's.
	prior []results.Record
}

func newExecution(s spec.Spec, dir *results.Dir, env Env) *execution {
	x := &execution{s: s, dir: dir, env: env, log: env.Log, targets: map[string]Target{},
		out: &Session{Infos: map[string]*agentpb.InfoReply{}, Machines: map[string]hv.MachineInfo{}}}
	if x.log == nil {
		x.log = io.Discard
	}
	x.out.Scheduling = readScheduling()
	for _, w := range x.out.Scheduling.Warnings() {
		x.note(Note{Kind: NoteWarning, Text: w})
	}
	if dir != nil && env.VM.KeepConsole == "" {
		// The VM's state directory goes with the run; its console, which
		// an error may point to, stays with the results.
		x.env.VM.KeepConsole = filepath.Join(dir.Path, results.VMConsoleFile)
	}
	return x
}

// note tells the user n and keeps it in the session and in run.json; a
// note of a kind Env.Quiet names is kept but not told. A warning is
// written as one (termcolor.Warn), so that what colours or filters
// warnings has it as a value.
func (x *execution) note(n Note) {
	if !x.env.Quiet[n.Kind] {
		said := n.Kind.saidPrefix() + n.Text
		if n.Kind.Warning() {
			_ = termcolor.Warn(x.log, said, n.Text) // the log is the user's stream: nothing to do if it fails
		} else {
			fmt.Fprintln(x.log, said)
		}
	}
	x.out.Notes = append(x.out.Notes, n)
	if x.dir != nil {
		x.dir.Run.Notes = append(x.dir.Run.Notes, n.String())
		if n.Kind == NoteTelemetry {
			x.dir.Run.TelemetryNotes = append(x.dir.Run.TelemetryNotes, n.Text)
		}
	}
}

// childStarted records the class a child process started at, with a
// warning when it is not the one asked for.
func (x *execution) childStarted(child string, c hv.ProcessClass) {
	if w := x.out.Scheduling.started(child, c); w != "" {
		x.note(Note{Kind: NoteWarning, Text: w})
	}
}

// openSamples reads what an earlier session of the run finished (the
// cell runs a resume skips, and the repeats by cell) and opens the
// samples to append to.
func (x *execution) openSamples() (*results.SampleLog, map[results.CellRunKey]bool, map[string][]int, error) {
	recs, torn, err := x.dir.ReadSamples()
	if err != nil {
		return nil, nil, nil, err
	}
	if torn != nil {
		fmt.Fprintf(x.log, "resume: %s (measured again)\n", torn)
	}
	log, _, err := x.dir.OpenSamples()
	if err != nil {
		return nil, nil, nil, err
	}
	x.prior = append(x.prior, recs...)
	return log, results.FinishedRuns(recs), results.FinishedRepeats(recs), nil
}

// recordEnd records in run.json how the run ended, interrupted (by a
// signal, with cells to go), failed or finished, and returns err as the
// caller should see it: an *UnfinishedError saying how to finish the run
// when it did not, with an *endNotRecordedError joined when run.json could
// not say so.
func (x *execution) recordEnd(ctx context.Context, err error) error {
	dir := x.dir
	if i := interrupt.Of(ctx); i != nil && IsInterrupted(ctx, err) {
		// Not finished: stopped from outside, with cells to go.
		if ferr := dir.Interrupted(time.Now(), i.Error()); ferr != nil {
			err = errors.Join(err, &endNotRecordedError{Dir: dir.Path, Err: ferr})
		}
		return &UnfinishedError{Err: err, Dir: dir.Path}
	}
	if ferr := dir.Finish(time.Now(), err); ferr != nil {
		// The failure's own record is lost (a full disk): say so with the
		// failure, never instead of it.
		err = errors.Join(err, &endNotRecordedError{Dir: dir.Path, Err: ferr})
	}
	if err != nil {
		return &UnfinishedError{Err: err, Dir: dir.Path}
	}
	return nil
}

// startTargets starts the spec's targets in order, asks each agent's Info
// and checks it can measure the spec, and records them in run.json.
func (x *execution) startTargets(ctx context.Context) error {
	start := x.env.StartTarget
	if start == nil {
		start = x.env.startTarget
	}
	for _, name := range x.s.Targets {
		t0 := time.Now()
		t, notes, err := start(ctx, name, x.s, x.log)
		for _, n := range notes {
			x.note(Note{Kind: NoteInfo, Text: n})
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		x.targets[name] = t
		if err := x.targetStarted(ctx, name, t); err != nil {
			return err
		}
		var steps map[string]int64
		if mi, ok := x.out.Machines[name]; ok {
			steps = map[string]int64{runtrace.StepBoot: mi.BootNs}
		}
		x.env.Trace.Span(runtrace.SpanStart, name, t0, steps)
	}
	if x.dir == nil {
		return nil
	}
	for name, info := range x.out.Infos {
		t, err := results.RecordInfo(agent.InfoJSON(info))
		if err != nil {
			return fmt.Errorf("record %s's Info: %w", name, err)
		}
		x.dir.Run.Targets[name] = t
	}
	if len(x.out.Machines) > 0 {
		m, err := results.NewRecorded(x.out.Machines)
		if err != nil {
			return fmt.Errorf("record the VMs: %w", err)
		}
		x.dir.Run.Machines = m
	}
	if err := x.recordScheduling(); err != nil {
		return err
	}
	return x.dir.SaveRun()
}

// targetStarted asks the started target's agent its Info, keeps it, and
// refuses a target that lacks what the spec needs (a codec, fixed-duration
// cells).
func (x *execution) targetStarted(ctx context.Context, name string, t Target) error {
	if l, ok := t.(*agent.Local); ok {
		x.childStarted(startedHostAgent, processClass(l.StartClass))
	}
	ictx, cancel := ctx, context.CancelFunc(func() {})
	vm, isVM := t.(inVM)
	if isVM {
		// An attached VM that does not answer (stopped, hung) must not
		// block the run forever.
		ictx, cancel = context.WithTimeout(ctx, x.env.VM.BootTimeoutFor(vm.Machine()))
	}
	info, err := t.Info(ictx)
	cancel()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	x.out.Infos[name] = info
	fmt.Fprintf(x.log, "%s: %s\n", name, agent.Describe(info))
	if isVM {
		if err := x.vmStarted(name, vm.Machine(), info); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := checkCodecs(name, x.s, info); err != nil {
		return err
	}
	return checkDuration(name, x.s, info)
}

// vmStarted keeps the VM as the host sees it, notes an agent from
// another build, and gives its vCPU threads the spec's host_qos; a
// host_qos the backend cannot apply is the error.
func (x *execution) vmStarted(name string, mi hv.MachineInfo, info *agentpb.InfoReply) error {
	x.out.Machines[name] = mi
	if mi.StartClass != nil {
		x.childStarted(startedVM, *mi.StartClass)
	}
	x.out.BootNs += mi.BootNs
	if v := info.GetAgentVersion(); v != version.String() {
		x.note(Note{Kind: NoteInfo, Text: fmt.Sprintf("the VM's agent is %s, not this build's %s: what it measures may lack this build's fixes (telemetry needs protocol 1.1); rebuild the image with `qoslab image build linux`", v, version.String())})
	}
	if x.s.VM.HostQoS == qos.Unspecified {
		return nil
	}
	notes, err := applyHostQoS(mi, x.s.VM.HostQoS, qos.BackgroundProcess)
	if err != nil {
		return err
	}
	for _, n := range notes {
		x.note(Note{Kind: NoteHostQoS, Text: n})
	}
	return nil
}

// stopTargets stops the targets started, the last first, and returns err
// with what stopping them went wrong joined: a stop's error when the run
// had none, and always a console that could not be kept.
func (x *execution) stopTargets(err error) error {
	for _, name := range slices.Backward(x.s.Targets) {
		t := x.targets[name]
		if t == nil {
			continue
		}
		cerr := t.Close()
		var notKept *consoleNotKeptError
		switch {
		case cerr == nil:
		case err == nil:
			err = fmt.Errorf("stop %s: %w", name, cerr)
		case errors.As(cerr, &notKept):
			// Where the console is matters most when the run failed.
			err = errors.Join(err, notKept)
		}
	}
	return err
}

// startContention starts n spinners on the host and records them; the
// caller stops them.
func (x *execution) startContention(ctx context.Context, n int) (*contention.Contention, error) {
	start := x.env.StartContention
	if start == nil {
		start = contention.Start
	}
	cont, err := start(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", units.Plural(n, "contention thread"), err)
	}
	cont.Asked = x.s.Contention
	x.out.Contention = cont
	if cont.StartClass.Asked != qos.Unspecified {
		x.childStarted(startedContention, processClass(cont.StartClass))
	}
	fmt.Fprintf(x.log, "contention: %s on the host\n", cont.Text())
	if note := cont.UnpinnedNote(); note != "" {
		x.note(Note{Kind: NoteInfo, Text: note})
	}
	if x.dir == nil {
		return cont, nil
	}
	c, err := results.NewRecorded(*cont)
	if err == nil {
		x.dir.Run.Contention = c
		err = x.recordScheduling()
	}
	if err == nil {
		err = x.dir.SaveRun()
	}
	if err != nil {
		cont.Stop()
		return nil, err
	}
	return cont, nil
}

// newRunner runs cells on the started targets, with spinners contention
// spinners beside them, wired to the env's hooks: each timed cell run goes
// to the session, and a short host cell gets a warning, once.
func (x *execution) newRunner(cells []PlannedRun, spinners int) *runner {
	warned := map[string]bool{}
	onStall := x.env.OnStall
	if onStall == nil {
		onStall = func(st Stall) { fmt.Fprintln(x.log, st) }
	}
	return &runner{Cells: cells, Targets: x.targets, Contention: spinners, HostView: hostview.NewReader(),
		OnStep: x.env.OnStep, OnProgress: x.env.OnProgress, CellTimeout: x.s.CellTimeout, OnStall: onStall,
		Diagnose: func(ctx context.Context, c PlannedRun) string {
			return diagnoseStall(ctx, c, x.s, spinners, x.targets[c.Target])
		},
		OnRun: func(st Step, cr CellRun) {
			x.out.Runs = append(x.out.Runs, cr)
			if w := shortCellWarning(cr, warned); w != "" {
				x.note(Note{Kind: NoteShortCell, Text: w})
			}
			if x.env.OnRun != nil {
				x.env.OnRun(st, cr)
			}
		}}
}

// startTarget starts the real agent of a target: a child process for the
// host, the agent in a VM for vm.
func (env Env) startTarget(ctx context.Context, name string, s spec.Spec, log io.Writer) (Target, []string, error) {
	switch name {
	case spec.TargetHost:
		t, err := StartHostAgent(ctx, env.AgentPath, s, log)
		return t, nil, err
	case spec.TargetVM:
		return startVM(ctx, s, env.VM, log)
	}
	return nil, nil, fmt.Errorf("unknown target %q: allowed %s, %s", name, spec.TargetHost, spec.TargetVM)
}

// checkCodecs refuses, before anything is measured, a codec the target's
// OS lacks.
func checkCodecs(target string, s spec.Spec, info *agentpb.InfoReply) error {
	for _, e := range s.Matrix {
		if !catalog.IsCompression(e.Workload) || slices.Contains(info.GetCodecs(), e.Codec) {
			continue
		}
		return &UnsupportedCodecError{Target: target, Codec: e.Codec, OS: info.GetOs(), Arch: info.GetArch(), Allowed: info.GetCodecs()}
	}
	return nil
}

// minCellInterval is the shortest measured interval of a host cell run
// that scheduler placement cannot decide: shorter, a cell may end before
// the load balancer has moved anything, so which CPU its threads landed on
// decides it, not their class.
const minCellInterval = 250 * time.Millisecond

// shortCellWarning names a fixed-work host cell run whose measured interval
// (first thread start to last thread end) is under minCellInterval, once
// per cell (warned remembers them), and says what to do. Fixed-duration
// cells last what they were asked for; a VM's cells are slowed by the VM.
func shortCellWarning(cr CellRun, warned map[string]bool) string {
	c := cr.Cell
	if c.Target != spec.TargetHost || c.Duration > 0 || catalog.IsCompression(c.Workload) || len(cr.Samples) == 0 || warned[c.SeriesKey()] {
		return ""
	}
	first, last := cr.Samples[0].StartNs, cr.Samples[0].EndNs
	for _, s := range cr.Samples[1:] {
		first, last = min(first, s.StartNs), max(last, s.EndNs)
	}
	d := time.Duration(last - first)
	if d >= minCellInterval {
		return ""
	}
	warned[c.SeriesKey()] = true
	return fmt.Sprintf("%s %s qos=%s threads=%d ran %s (< %s): %s; use duration: 1s (bench: --duration 1s) or more loops",
		c.Target, c.Workload, c.QoS, c.Threads, shortDuration(d), minCellInterval, shortCellText)
}

// shortCellText is what every short-cell warning says.
const shortCellText = "scheduler placement can decide a cell this short"

// shortDuration rounds d for a message: 21.3ms, 4µs.
func shortDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(100 * time.Microsecond)
}

// durationMinor is the first protocol minor whose agents run
// fixed-duration cells.
const durationMinor = 2

// checkDuration refuses a spec with fixed-duration cells on a target whose
// agent predates them: it would ignore the duration and refuse 0 loops, or
// worse, measure something else.
func checkDuration(target string, s spec.Spec, info *agentpb.InfoReply) error {
	p := info.GetProtocol()
	if p.GetMajor() != version.ProtocolMajor || p.GetMinor() >= durationMinor {
		return nil
	}
	for i, e := range s.Matrix {
		if e.Duration > 0 {
			return fmt.Errorf("%s: matrix[%d] runs for a duration (%s), which needs agent protocol %d.%d; this agent (%s) speaks %d.%d: rebuild it (for a VM: qoslab image build linux)",
				target, i, e.Duration, version.ProtocolMajor, durationMinor, info.GetAgentVersion(), p.GetMajor(), p.GetMinor())
		}
	}
	return nil
}

// IsInterrupted reports whether err ended a run because ctx was cancelled.
func IsInterrupted(ctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) && ctx.Err() != nil
}
