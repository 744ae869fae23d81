package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/telemetry"
)

// runTelemetry is what the runner samples while each timed cell runs: the
// agent's own view of its machine, and for a VM cell the host's view (the
// host's CPUs and the VM's vCPU threads).
type runTelemetry struct {
	// Log is where samples go (telemetry.jsonl).
	Log      *telemetry.Log
	Interval time.Duration
	// HostProbe samples the host during the cells of targets other than
	// host, following HostThreads[target] (a VM's vCPU threads); nil for no
	// host view.
	HostProbe   telemetry.Probe
	HostThreads map[string][]telemetry.ThreadRef
	// OnNote gets each distinct note about telemetry as a whole (a target
	// that cannot sample, a garbled sample), once.
	OnNote func(string)

	seen map[string]bool
}

// TelemetryStats sums the agents' own accounts of their sampling.
type TelemetryStats struct {
	Samples int
	// Within10ms counts intervals within 10 ms of the target, over Samples.
	Within10ms float64
	SamplerCPU time.Duration
}

// hostViewClass is the class of the host's recorder of a VM cell (qoslab
// on the host, reading the vCPU threads from /proc): user-interactive, so
// that beside host contention it wakes on time. Unlike the agent's sampler
// (agent.samplerClass, the default class, never above the workers it
// measures) it shares no CPU scheduler with the guest's classes: what it
// takes on the host it takes from the vCPU threads, which carry every
// guest class alike, so it gives no class an edge.
const hostViewClass = qos.UserInteractive

// hostRecorder starts the host's view of a cell on target, when there is one
// to take.
func (t *runTelemetry) hostRecorder(ctx context.Context, target string) *telemetry.Recorder {
	if t == nil || t.HostProbe == nil || target == spec.TargetHost {
		return nil
	}
	threads := t.HostThreads[target]
	return telemetry.StartRecorder(ctx, t.HostProbe, telemetry.RecorderOptions{
		Interval: t.Interval, CellStart: time.Now(), Class: hostViewClass,
		Threads: func() []telemetry.ThreadRef { return threads },
	})
}

func (t *runTelemetry) note(n string) {
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	if t.seen[n] {
		return
	}
	t.seen[n] = true
	if t.OnNote != nil {
		t.OnNote(n)
	}
}

// keep stamps a cell run's samples, the agent's (as JSON lines) and the
// host's, with the cell and view, and writes them to the log.
func (t *runTelemetry) keep(c PlannedRun, agentTel *agentpb.Telemetry, host []telemetry.Sample, st *TelemetryStats) error {
	if t == nil {
		return nil
	}
	view := telemetry.ViewGuest
	if c.Target == spec.TargetHost {
		view = telemetry.ViewHost
	}
	stamp := func(s *telemetry.Sample, view string) {
		s.Cell, s.Repeat, s.Target, s.View = c.SeriesKey(), c.Repeat, c.Target, view
	}
	switch {
	case agentTel == nil:
		t.note(fmt.Sprintf("telemetry: the %s agent sent none (an agent older than protocol 1.1?)", c.Target))
	case agentTel.GetUnavailable() != "":
		t.note(fmt.Sprintf("telemetry unavailable on %s: %s", c.Target, agentTel.GetUnavailable()))
	}
	var out []telemetry.Sample
	for i, line := range agentTel.GetSamplesJson() {
		var s telemetry.Sample
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.note(fmt.Sprintf("telemetry: %s sample %d of %s dropped: %v", c.Target, i, c.SeriesKey(), err))
			continue
		}
		if err := telemetry.CheckVersion(s.SchemaVersion); err != nil {
			t.note(fmt.Sprintf("telemetry: %s samples dropped: %v", c.Target, err))
			break
		}
		stamp(&s, view)
		out = append(out, s)
	}
	for _, s := range host {
		stamp(&s, telemetry.ViewHost)
		out = append(out, s)
	}
	if n := int(agentTel.GetSamples()); n > 0 && st != nil {
		st.Within10ms = (st.Within10ms*float64(st.Samples) + agentTel.GetWithin_10Ms()*float64(n)) / float64(st.Samples+n)
		st.Samples += n
		st.SamplerCPU += time.Duration(agentTel.GetSamplerCpuNs())
	}
	if len(out) == 0 {
		return nil
	}
	if err := t.Log.Append(out...); err != nil {
		return err
	}
	return t.Log.Sync()
}

// setUpTelemetry prepares telemetry for a run when its spec asks for it:
// the log at path, and the host's view of each VM (the host's CPUs and the
// VM's vCPU threads), its probe started under ctx, the run's (on macOS the
// probe asks sudo and starts powermetrics, which Ctrl-C must end).
// Telemetry that cannot be had is a note, never a reason to stop; close
// flushes the log.
func setUpTelemetry(ctx context.Context, path string, s spec.Spec, targets map[string]Target, finished map[string][]int, note func(string)) (*runTelemetry, func() error, error) {
	if s.TelemetryMs <= 0 {
		return nil, func() error { return nil }, nil
	}
	// Telemetry of a cell run that did not finish goes: resume measures
	// that run again, and its telemetry would be there twice.
	log, notes, err := telemetry.OpenLogKeeping(path, func(cell string, repeat int) bool {
		return slices.Contains(finished[cell], repeat)
	})
	for _, n := range notes {
		note("resume: " + n)
	}
	if err != nil {
		return nil, nil, err
	}
	interval := time.Duration(s.TelemetryMs) * time.Millisecond
	tel := &runTelemetry{Log: log, Interval: interval, HostThreads: map[string][]telemetry.ThreadRef{}, OnNote: note}
	var probe telemetry.Probe
	for _, name := range slices.Sorted(maps.Keys(targets)) {
		vm, ok := targets[name].(inVM)
		if !ok {
			continue
		}
		if probe == nil {
			if probe, err = telemetry.NewLocalProbe(ctx, interval); err != nil {
				note(fmt.Sprintf("telemetry: no host view of the VM: %v", err))
				break
			}
		}
		mi := vm.Machine()
		if len(mi.VCPUThreads) == 0 {
			note(fmt.Sprintf("telemetry: the %s backend does not expose its vCPU threads; the host view has its CPUs only", mi.Backend))
		}
		tel.HostThreads[name] = telemetry.VCPURefs(mi.PID, mi.VCPUThreads)
	}
	tel.HostProbe = probe
	return tel, func() error {
		if probe != nil {
			probe.Close()
		}
		return log.Close()
	}, nil
}
