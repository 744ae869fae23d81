package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/workload"
)

// RunOptions are the settings of `qoslab run`.
type RunOptions struct {
	IO        *IOStreams
	AgentPath string
	SpecFile  string
	Default   string
	Quick     bool
	Resume    string
	Results   string // parent of results directories
	Accel     string
	Backend   string
}

// NewCmdRun builds `qoslab run`.
func NewCmdRun(f *Factory, runF func(context.Context, *RunOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a whole host-vs-VM experiment and say whether QoS survives in the VM",
		Long: `run measures an experiment spec (default: the built-in "subsumption", after
reference/001: fp with 1-4 threads and compression of 1 GiB at QoS 9 and 33, on
the host and in a VM, 3 repeats, interleaved), keeps every finished cell in
qoslab-results/<name>-<time>/samples.jsonl, and ends with summaries and a verdict.
An interrupted run is finished with --resume DIR.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := f.Config
			o := &RunOptions{
				IO: f.IO, AgentPath: f.agentPath(), SpecFile: v.GetString("run.spec"), Default: v.GetString("run.default"),
				Quick: v.GetBool("run.quick"), Resume: v.GetString("run.resume"), Results: v.GetString("run.results"),
				Accel: v.GetString("run.accel"), Backend: v.GetString("run.vm-backend"),
			}
			if o.SpecFile != "" && o.Resume != "" {
				return usageErrorf("--spec and --resume exclude each other: a resumed run keeps the spec it started with")
			}
			if o.Accel != "" {
				if err := oneOf("--accel", o.Accel, []string{"kvm", "tcg", "hvf"}); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runRun(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.String("spec", "", "experiment spec (YAML)")
	fl.String("default", "subsumption", "built-in spec to run when --spec is not given: "+strings.Join(experiment.DefaultSpecNames(), ", "))
	fl.Bool("quick", false, "shrink loops and sizes so the run takes minutes (a smoke run, marked as such)")
	fl.String("resume", "", "finish the interrupted run in this results directory")
	fl.String("results", "qoslab-results", "where results directories are created")
	fl.String("accel", "", "VM acceleration: kvm, tcg, hvf (default: the spec's, else probed)")
	fl.String("vm-backend", "", "hypervisor (default: the spec's, else this machine's)")
	f.bindFlags("run", fl)
	return cmd
}

// runSpec loads the spec to run, or the one a resumed run started with.
func runSpec(o *RunOptions) (experiment.Spec, *results.Dir, error) {
	if o.Resume != "" {
		d, err := results.Open(o.Resume)
		if err != nil {
			return experiment.Spec{}, nil, err
		}
		var s experiment.Spec
		if err := json.Unmarshal(d.Run.Spec, &s); err != nil {
			return s, nil, fmt.Errorf("resume %s: its spec: %w", o.Resume, err)
		}
		if err := d.Resume(time.Now()); err != nil {
			return s, nil, err
		}
		return s, d, nil
	}
	var s experiment.Spec
	var err error
	if o.SpecFile != "" {
		s, err = experiment.LoadSpec(o.SpecFile)
	} else {
		s, err = experiment.DefaultSpec(o.Default)
	}
	if err != nil {
		return s, nil, &UsageError{Err: err}
	}
	if o.Quick {
		s = experiment.Quick(s)
	}
	return s, nil, nil
}

// runVMOptions turns the spec's VM into the CLI's VM options; notes say what
// was changed to fit this machine.
func runVMOptions(f *Factory, s experiment.Spec, o *RunOptions) (VMOptions, []string, error) {
	vo := VMOptions{Image: s.VM.Image, CPUs: s.VM.CPUs, Accel: s.VM.Accel, Backend: s.VM.Backend,
		MemoryMiB: int(s.VM.MemoryBytes >> 20), DiskBytes: s.VM.DiskBytes}
	if o.Accel != "" {
		vo.Accel = o.Accel
	}
	if o.Backend != "" {
		vo.Backend = o.Backend
	}
	if vo.Backend == "" {
		vo.Backend = defaultBackend()
	}
	if vo.Image == "" {
		vo.Image = defaultImage()
	}
	var err error
	if vo.Store == "" {
		if vo.Store, err = storeFrom(f, ""); err != nil {
			return vo, nil, err
		}
	}
	var notes []string
	if n := runtime.NumCPU(); vo.Backend == "qemu" && vo.CPUs > n {
		notes = append(notes, fmt.Sprintf("vm.cpus %d asked, %d applied: this host has %d CPUs and the qemu backend gives a VM at most that many", vo.CPUs, n, n))
		vo.CPUs = n
	}
	return vo, notes, nil
}

// runNeeds sizes the VM for the spec's compression cells.
func runNeeds(s experiment.Spec) vmNeeds {
	n := vmNeeds{memoryMiB: 1024, diskBytes: 64 << 20}
	for _, e := range s.Matrix {
		if e.Workload != workload.Compress && e.Workload != workload.Decompress {
			continue
		}
		maxThreads := slices.Max(append([]int{1}, e.Threads...))
		n.memoryMiB = max(n.memoryMiB, int((2*e.SizeBytes)>>20)+512)
		n.diskBytes = max(n.diskBytes, e.SizeBytes+e.SizeBytes/64+int64(maxThreads)*(2<<20)+(64<<20))
	}
	return n
}

func runRun(ctx context.Context, f *Factory, o *RunOptions) (err error) {
	began := time.Now()
	spec, d, err := runSpec(o)
	if err != nil {
		return err
	}
	cells, seed := experiment.Plan(spec)
	spec.Seed = &seed
	if d == nil {
		raw, err := json.Marshal(spec)
		if err != nil {
			return err
		}
		if d, err = results.Create(o.Results, spec.Name, began); err != nil {
			return err
		}
		d.Run.Spec, d.Run.Seed, d.Run.ToolVersion = raw, seed, versionString()
		if err := d.SaveRun(); err != nil {
			return err
		}
	}
	fmt.Fprintf(o.IO.ErrOut, "run %s: %d cell runs (seed %d) into %s\n", spec.Name, len(cells), seed, d.Path)
	if spec.Quick {
		fmt.Fprintln(o.IO.ErrOut, "quick: loops and sizes shrunk for a smoke run; not comparable with a full run")
	}

	recs, torn, err := d.ReadSamples()
	if err != nil {
		return err
	}
	if torn != nil {
		fmt.Fprintf(o.IO.ErrOut, "resume: %s (measured again)\n", torn)
	}
	log, _, err := d.OpenSamples()
	if err != nil {
		return err
	}
	defer log.Close()

	// Whatever happens from here, run.json says how the run ended and the
	// summaries cover what finished.
	var stats experiment.Stats
	var bootNs int64
	defer func() {
		if ferr := d.Finish(time.Now(), err); ferr != nil && err == nil {
			err = ferr
		}
		if serr := runSummaries(o.IO, d, spec, stats, bootNs, time.Since(began)); serr != nil && err == nil {
			err = serr
		}
		// The report is drawn from the files just written; failing to draw
		// it loses no measurement, and `qoslab report DIR` draws it again.
		if _, rerr := writeReport(d.Path); rerr != nil {
			fmt.Fprintf(o.IO.ErrOut, "report: %v (the results are kept; try again with qoslab report %s)\n", rerr, d.Path)
			if err == nil {
				err = fmt.Errorf("write report: %w", rerr)
			}
		} else {
			fmt.Fprintf(o.IO.Out, "report: %s\n", filepath.Join(d.Path, results.ReportFile))
		}
	}()

	targets := map[string]experiment.Target{}
	infos := map[string]json.RawMessage{}
	machines := map[string]any{}
	for _, t := range spec.Targets {
		var ag BenchAgent
		switch t {
		case experiment.TargetHost:
			path, err := agent.FindAgent(o.AgentPath)
			if err != nil {
				return err
			}
			if ag, err = agent.StartLocal(ctx, agent.LocalOptions{Path: path, Stderr: o.IO.ErrOut}); err != nil {
				return err
			}
		case experiment.TargetVM:
			vo, notes, err := runVMOptions(f, spec, o)
			if err != nil {
				return err
			}
			for _, n := range notes {
				fmt.Fprintln(o.IO.ErrOut, "note: "+n)
				d.Run.Notes = append(d.Run.Notes, n)
			}
			if ag, err = startVMAgent(ctx, f, o.IO, vo, runNeeds(spec)); err != nil {
				return fmt.Errorf("vm: %w", err)
			}
			if spec.VM.HostQoS != qos.Unspecified {
				for _, n := range applyHostQoS(ag.(*vmAgent).machine.Info(), spec.VM.HostQoS) {
					fmt.Fprintln(o.IO.ErrOut, "host_qos: "+n)
					d.Run.Notes = append(d.Run.Notes, "host_qos: "+n)
				}
			}
		}
		defer func() {
			if cerr := ag.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("stop %s: %w", t, cerr)
			}
		}()
		info, err := ag.Info(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		infos[t] = infoJSON(info)
		if v := info.GetAgentVersion(); t == experiment.TargetVM && v != versionString() {
			n := fmt.Sprintf("the VM's agent is %s, not this build's %s: what it measures may lack this build's fixes (telemetry needs protocol 1.1); rebuild the image with `qoslab image build linux`", v, versionString())
			fmt.Fprintln(o.IO.ErrOut, "note: "+n)
			d.Run.Notes = append(d.Run.Notes, n)
		}
		fmt.Fprintf(o.IO.ErrOut, "%s: %s\n", t, describeInfo(info))
		if m, ok := ag.(interface{ MachineInfo() any }); ok {
			mi := m.MachineInfo()
			machines[t] = mi
			if v, ok := ag.(*vmAgent); ok {
				bootNs += v.machine.Info().BootNs
			}
		}
		targets[t] = ag
	}
	d.Run.Targets = infos
	if len(machines) > 0 {
		d.Run.Machines, _ = json.Marshal(machines)
	}
	if err := d.SaveRun(); err != nil {
		return err
	}

	var conditions func() error
	if spec.Contention > 0 {
		cont, err := startContention(ctx, spec.Contention)
		if err != nil {
			return fmt.Errorf("start %d contention threads: %w", spec.Contention, err)
		}
		defer cont.Stop()
		conditions = cont.Running
		fmt.Fprintf(o.IO.ErrOut, "contention: %d spinner threads at %s on the host (pid %d)\n", spec.Contention, qos.Default, cont.PID)
	}

	tel, closeTel, err := runTelemetry(o.IO, d, spec, targets)
	if err != nil {
		return err
	}
	defer closeTel()

	prog := newProgressLine(o.IO)
	r := &experiment.Runner{Telemetry: tel, Conditions: conditions, Cells: cells, Targets: targets, Log: log, Finished: results.FinishedRepeats(recs), Contention: spec.Contention,
		OnStep: func(s experiment.Step) {
			if s.Skipped {
				return
			}
			eta := ""
			if s.ETA > 0 {
				eta = fmt.Sprintf(", about %s left", s.ETA.Round(time.Second))
			}
			prog.cell(s.Index, s.Total, s.Cell.String()+eta)
		}}
	if o.IO.Progress {
		r.OnProgress = prog.update
	}
	stats, err = r.Run(ctx)
	prog.clear()
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w\nwhat finished is in %s; finish the run with: qoslab run --resume %s", err, d.Path, d.Path)
	}
	return err
}

// applyHostQoS gives each of a VM's vCPU threads a class on the host and says,
// per thread, what was asked and what was applied.
func applyHostQoS(mi hv.MachineInfo, c qos.Class) []string {
	if len(mi.VCPUThreads) == 0 {
		return []string{fmt.Sprintf("%s asked, not applied: the %s backend does not expose its vCPU threads to the host", c, mi.Backend)}
	}
	var notes []string
	for i, tid := range mi.VCPUThreads {
		a := qos.ApplyThread(tid, c)
		n := fmt.Sprintf("vCPU %d (host thread %d): %s asked, %s applied (%s)", i, tid, c, a.Applied, a.Detail)
		if a.Reason != "" {
			n += ": " + a.Reason
		}
		notes = append(notes, n)
	}
	return notes
}

// runSummaries writes summary.{json,csv,md} from every sample in the
// directory and prints the regressions, compression times and verdicts.
func runSummaries(io *IOStreams, d *results.Dir, spec experiment.Spec, st experiment.Stats, bootNs int64, wall time.Duration) error {
	recs, _, err := d.ReadSamples()
	if err != nil {
		return err
	}
	a := summary.Analyze(results.Samples(recs), experiment.TargetHost, experiment.TargetVM)
	a.Name = spec.Name
	tel, tnotes, err := telemetry.ReadFile(filepath.Join(d.Path, results.TelemetryFile))
	if err != nil {
		return err
	}
	for _, n := range tnotes {
		fmt.Fprintln(io.ErrOut, "note: "+n)
	}
	a.Telemetry = telemetry.Summarize(tel)
	if err := summary.Write(d.Path, a); err != nil {
		return fmt.Errorf("write summaries: %w", err)
	}
	w := io.Out
	fmt.Fprintf(w, "results: %s (%d samples)\n", d.Path, len(recs))
	for _, reg := range a.Regressions {
		if reg.Workload == workload.FP || reg.Workload == workload.Int {
			fmt.Fprintf(w, "%s %s\n", reg.Workload, analysis.FormatRegression(reg.Label(), reg.Regression))
		}
	}
	for _, c := range a.Cells {
		if c.Workload == workload.Compress || c.Workload == workload.Decompress {
			fmt.Fprintf(w, "%s %s qos %d threads %d: %.2f s median [%.2f..%.2f], n=%d\n", c.Target, c.Workload, c.QoS, c.Threads,
				c.Seconds.Median, c.Seconds.Min, c.Seconds.Max, c.Seconds.N)
		}
	}
	for _, v := range a.Verdicts {
		what := v.Host.Workload
		if v.Host.Phase != "" && v.Host.Phase != v.Host.Workload {
			what += " " + v.Host.Phase
		}
		fmt.Fprintf(w, "%s: %s\n", what, v.String())
	}
	if st.Runs > 0 {
		measured := time.Duration(st.MeasuredNs + bootNs)
		fmt.Fprintf(w, "time: %s wall, %s measured + %s booting (%.1f%% orchestration)\n", wall.Round(time.Millisecond),
			time.Duration(st.MeasuredNs).Round(time.Millisecond), time.Duration(bootNs).Round(time.Millisecond),
			100*(1-float64(measured)/float64(wall)))
	}
	if ts := st.Telemetry; ts.Samples > 0 && spec.TelemetryMs > 0 {
		sampled := time.Duration(ts.Samples) * time.Duration(spec.TelemetryMs) * time.Millisecond
		fmt.Fprintf(w, "telemetry: %d samples in the agents every %d ms, %.1f%% of intervals within 10 ms of it, sampler CPU %s (%.2f%% of one core)\n",
			ts.Samples, spec.TelemetryMs, 100*ts.Within10ms, ts.SamplerCPU.Round(time.Millisecond), 100*float64(ts.SamplerCPU)/float64(sampled))
	}
	return nil
}

// runTelemetry sets up telemetry for the run when its spec asks for it: the
// log in the results directory, and the host's view of each VM (the host's
// CPUs and the VM's vCPU threads). Telemetry that cannot be had is a note,
// never a reason to stop; close flushes the log.
func runTelemetry(io *IOStreams, d *results.Dir, spec experiment.Spec, targets map[string]experiment.Target) (*experiment.Telemetry, func(), error) {
	if spec.TelemetryMs <= 0 {
		return nil, func() {}, nil
	}
	log, err := telemetry.OpenLog(filepath.Join(d.Path, results.TelemetryFile))
	if err != nil {
		return nil, nil, err
	}
	interval := time.Duration(spec.TelemetryMs) * time.Millisecond
	tel := &experiment.Telemetry{Log: log, Interval: interval, HostThreads: map[string][]telemetry.ThreadRef{},
		OnNote: func(n string) {
			fmt.Fprintln(io.ErrOut, "note: "+n)
			d.Run.Notes = append(d.Run.Notes, n)
		}}
	var probe telemetry.Probe
	for name, t := range targets {
		vm, ok := t.(*vmAgent)
		if !ok {
			continue
		}
		if probe == nil {
			if probe, err = telemetry.NewLocalProbe(context.Background(), interval); err != nil {
				tel.OnNote(fmt.Sprintf("telemetry: no host view of the VM: %v", err))
				break
			}
		}
		mi := vm.machine.Info()
		if len(mi.VCPUThreads) == 0 {
			tel.OnNote(fmt.Sprintf("telemetry: the %s backend does not expose its vCPU threads; the host view has its CPUs only", mi.Backend))
		}
		tel.HostThreads[name] = telemetry.VCPURefs(mi.PID, mi.VCPUThreads)
	}
	tel.HostProbe = probe
	return tel, func() {
		if probe != nil {
			probe.Close()
		}
		if err := log.Close(); err != nil {
			fmt.Fprintf(io.ErrOut, "telemetry: %v\n", err)
		}
	}, nil
}
