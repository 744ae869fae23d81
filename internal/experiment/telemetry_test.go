package experiment

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

func TestTelemetryKeepStampsViewsAndNotesBadSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telemetry.jsonl")
	log, err := telemetry.OpenLog(path)
	require.NoError(t, err)
	var notes []string
	tel := &runTelemetry{Log: log, OnNote: func(n string) { notes = append(notes, n) }}
	c := PlannedRun{Target: spec.TargetVM, Workload: "fp", QoS: qos.Background, Threads: 1, Repeat: 2, Params: catalog.Params{Loops: 100}}
	agentTel := &agentpb.Telemetry{
		SamplesJson: []string{
			`{"schema_version":"1.0","t_ns":100000000,"interval_ns":100000000,"cpus":[{"id":0,"busy":0.5}]}`,
			`{"schema_version":"1.0","t_ns":2`, // torn on the wire: dropped with a note
		},
		Samples: 10, Within_10Ms: 0.9, SamplerCpuNs: 5e6,
	}
	host := []telemetry.Sample{{TNs: 5e7, IntervalNs: 1e8, Threads: []telemetry.Thread{{TID: 42, Role: "vcpu 0", Busy: telemetry.Float(1)}}}}
	var st TelemetryStats
	require.NoError(t, tel.keep(c, agentTel, host, &st))
	require.NoError(t, tel.keep(c, agentTel, nil, &st))
	require.NoError(t, log.Close())

	got, _, err := telemetry.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for _, s := range got {
		assert.Equal(t, c.SeriesKey(), s.Cell)
		assert.Equal(t, 2, s.Repeat)
		assert.Equal(t, spec.TargetVM, s.Target)
	}
	assert.Equal(t, telemetry.ViewGuest, got[0].View, "the agent in the VM sees the guest")
	assert.Equal(t, telemetry.ViewHost, got[1].View, "the controller sees the host, vCPU threads included")
	assert.Equal(t, "vcpu 0", got[1].Threads[0].Role)

	require.Len(t, notes, 1, "the same problem is noted once: %v", notes)
	assert.Contains(t, notes[0], "sample 1 of vm fp qos=9")
	assert.Equal(t, 20, st.Samples)
	assert.InDelta(t, 0.9, st.Within10ms, 1e-9)
	assert.Equal(t, int64(10e6), st.SamplerCPU.Nanoseconds())
}

func TestTelemetryKeepHostCellIsHostView(t *testing.T) {
	log, err := telemetry.OpenLog(filepath.Join(t.TempDir(), "t.jsonl"))
	require.NoError(t, err)
	defer log.Close()
	var notes []string
	tel := &runTelemetry{Log: log, OnNote: func(n string) { notes = append(notes, n) }}
	c := PlannedRun{Target: spec.TargetHost, Workload: "fp", QoS: qos.Default, Threads: 1, Repeat: 1}
	require.NoError(t, tel.keep(c, &agentpb.Telemetry{Unavailable: "powermetrics telemetry unavailable: needs root"}, nil, nil))
	require.NoError(t, tel.keep(c, nil, nil, nil))
	require.Len(t, notes, 2)
	assert.Contains(t, notes[0], "telemetry unavailable on host: powermetrics telemetry unavailable: needs root")
	assert.Contains(t, notes[1], "sent none")
	assert.Nil(t, (*runTelemetry)(nil).hostRecorder(t.Context(), spec.TargetVM), "no telemetry, no recorder")
	assert.Nil(t, tel.hostRecorder(t.Context(), spec.TargetVM), "no host probe, no host view")
}

// stillProbe samples nothing, for the class a recorder asks.
type stillProbe struct{}

func (stillProbe) Name() string { return "still" }
func (stillProbe) Close() error { return nil }
func (stillProbe) Sample(context.Context, []telemetry.ThreadRef) (telemetry.Sample, error) {
	return telemetry.Sample{}, nil
}

// The host's view of a VM cell samples at user-interactive, as the README
// says (the agent's own sampler stays at the default class), says so in its
// first sample, and a host cell has no host view.
func TestHostRecorderClass(t *testing.T) {
	tel := &runTelemetry{HostProbe: stillProbe{}, Interval: time.Hour}
	assert.Nil(t, tel.hostRecorder(context.Background(), spec.TargetHost))
	r := tel.hostRecorder(context.Background(), spec.TargetVM)
	require.NotNil(t, r)
	samples, _ := r.Stop()
	require.NotEmpty(t, samples)
	assert.Contains(t, strings.Join(samples[0].Notes, "; "), "sampler thread: user-interactive asked")
}
