package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/workload"
)

// telemetryBatch bounds the samples in one Telemetry event (a few hundred
// bytes each), far below the transport's message limit.
const telemetryBatch = 500

// samplerClass is the sampling thread's class: the default one. A
// measurement's own sampler must not outrank what it measures: at
// user-interactive (nice -10) beside background (SCHED_IDLE) workers in a
// guest, it took its 1-2% of a vCPU from the background workers only, a
// QoS effect of qoslab's own making. At default it shares the CPU with
// default work like anything else, and may sample late under contention:
// its intervals say so (within_10ms).
const samplerClass = qos.Default

// maxTelemetryInterval bounds a request's interval: slower sampling than
// this says nothing about a cell.
const maxTelemetryInterval = 10 * time.Second

// cellTelemetry samples this machine while one cell runs.
type cellTelemetry struct {
	rec *telemetry.Recorder
	// recStartMono is CLOCK_MONOTONIC when the recorder's clock started,
	// taken with it, so samples can be moved onto the cell's clock.
	recStartMono int64
	unavailable  string
}

// startTelemetry starts sampling for a cell when the request asks for it;
// nil when it does not. A probe that cannot start leaves the cell to run
// and says why in the telemetry sent after it.
func (s *Server) startTelemetry(ctx context.Context, req *agentpb.RunRequest, prog *workload.Progress) *cellTelemetry {
	ms := req.GetTelemetryIntervalMs()
	if ms == 0 {
		return nil
	}
	interval := min(time.Duration(ms)*time.Millisecond, maxTelemetryInterval)
	probe, err := s.telemetryProbe(ctx, interval)
	if err != nil {
		return &cellTelemetry{unavailable: err.Error()}
	}
	ct := &cellTelemetry{}
	start := time.Now()
	ct.recStartMono = workload.MonoNow()
	ct.rec = telemetry.StartRecorder(ctx, probe, telemetry.RecorderOptions{
		Interval:  interval,
		CellStart: start,
		Class:     samplerClass,
		Threads: func() []telemetry.ThreadRef {
			ws := prog.Workers()
			refs := make([]telemetry.ThreadRef, len(ws))
			for i, w := range ws {
				refs[i] = telemetry.ThreadRef{PID: w.PID, TID: w.TID, Role: w.Role}
			}
			return refs
		},
	})
	return ct
}

// telemetryProbe returns the agent's probe, made on first use and kept: a
// probe holds counters between samples, and powermetrics is a process
// worth starting once.
func (s *Server) telemetryProbe(ctx context.Context, interval time.Duration) (telemetry.Probe, error) {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.probe == nil && s.probeErr == nil {
		newProbe := s.newProbe
		if newProbe == nil {
			newProbe = telemetry.NewLocalProbe
		}
		// The probe outlives this request's context: it serves every cell.
		s.probe, s.probeErr = newProbe(context.WithoutCancel(ctx), interval)
	}
	return s.probe, s.probeErr
}

// closeProbe stops the probe (powermetrics: its child process).
func (s *Server) closeProbe() {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.probe != nil {
		s.probe.Close()
		s.probe = nil
	}
}

// finish stops sampling and turns the samples into Telemetry events, with
// times on the cell's clock (the records' zero).
func (ct *cellTelemetry) finish(prog *workload.Progress) []*agentpb.Telemetry {
	if ct == nil {
		return nil
	}
	if ct.rec == nil {
		return []*agentpb.Telemetry{{Unavailable: ct.unavailable}}
	}
	samples, stats := ct.rec.Stop()
	var offset int64
	if cellStart, ok := prog.CellStart(); ok {
		offset = cellStart - ct.recStartMono
	}
	var events []*agentpb.Telemetry
	cur := &agentpb.Telemetry{}
	for _, smp := range samples {
		smp.TNs -= offset
		smp.SchemaVersion = telemetry.SchemaVersion
		b, err := json.Marshal(smp)
		if err != nil {
			// A sample is plain numbers and strings; this cannot happen
			// short of a bug, and it must not cost the cell.
			b, _ = json.Marshal(telemetry.Sample{SchemaVersion: telemetry.SchemaVersion, TNs: smp.TNs, Notes: []string{fmt.Sprintf("sample not encoded: %v", err)}})
		}
		cur.SamplesJson = append(cur.SamplesJson, string(b))
		if len(cur.SamplesJson) == telemetryBatch {
			events = append(events, cur)
			cur = &agentpb.Telemetry{}
		}
	}
	cur.Samples = uint32(stats.Samples)
	cur.Within_10Ms = stats.IntervalsWithin10ms
	cur.SamplerCpuNs = stats.CPUTime.Nanoseconds()
	return append(events, cur)
}
