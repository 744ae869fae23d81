package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/telemetry"
)

// recordingProbe is a probe that says which threads it was asked to follow.
type recordingProbe struct {
	mu      sync.Mutex
	made    int
	closed  bool
	threads map[string]int
}

func (p *recordingProbe) Name() string { return "fake" }

func (p *recordingProbe) Sample(_ context.Context, refs []telemetry.ThreadRef) (telemetry.Sample, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := telemetry.Sample{Sampler: "fake", IntervalNs: 1, CPUs: []telemetry.CPU{{ID: 0, Busy: telemetry.Float(1)}}}
	for _, r := range refs {
		p.threads[r.Role] = r.TID
		s.Threads = append(s.Threads, telemetry.Thread{TID: r.TID, Role: r.Role})
	}
	return s, nil
}

func (p *recordingProbe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return nil
}

func TestRunSendsTelemetryOnTheCellClock(t *testing.T) {
	c, srv := serve(t, Policy{})
	probe := &recordingProbe{threads: map[string]int{}}
	srv.newProbe = func(context.Context, time.Duration) (telemetry.Probe, error) {
		probe.made++
		return probe, nil
	}
	req := func() *agentpb.RunRequest {
		return &agentpb.RunRequest{Workload: "fp", Qos: int32(qos.Default), Threads: 2, Loops: 1 << 24, TelemetryIntervalMs: 10}
	}
	res, err := c.Run(ctx(t), req(), nil)
	require.NoError(t, err)
	tel := res.GetTelemetry()
	require.NotNil(t, tel, "the client gathers the stream's telemetry into the result")
	assert.Empty(t, tel.GetUnavailable())
	require.NotEmpty(t, tel.GetSamplesJson())
	assert.Equal(t, uint32(len(tel.GetSamplesJson())), tel.GetSamples())

	var last telemetry.Sample
	var end int64
	for _, r := range res.GetRecords() {
		end = max(end, r.GetEndNs())
	}
	for i, line := range tel.GetSamplesJson() {
		var s telemetry.Sample
		require.NoError(t, json.Unmarshal([]byte(line), &s))
		require.NoError(t, telemetry.CheckVersion(s.SchemaVersion))
		if i > 0 {
			assert.Greater(t, s.TNs, last.TNs, "samples in order")
		}
		last = s
	}
	// The recorder starts before the threads are set up, so early samples
	// are before the cell's zero; the last is around its end.
	assert.InDelta(t, float64(end), float64(last.TNs), float64(200*time.Millisecond), "last sample near the cell's end on the records' clock")
	probe.mu.Lock()
	assert.Contains(t, probe.threads, "worker 0", "the measured threads are followed")
	assert.Contains(t, probe.threads, "worker 1")
	probe.mu.Unlock()

	_, err = c.Run(ctx(t), req(), nil)
	require.NoError(t, err)
	assert.Equal(t, 1, probe.made, "one probe serves every cell")
	srv.Close()
	assert.True(t, probe.closed)
}

func TestRunWithoutTelemetryAsksNoProbe(t *testing.T) {
	c, srv := serve(t, Policy{})
	srv.newProbe = func(context.Context, time.Duration) (telemetry.Probe, error) {
		t.Error("no telemetry asked, no probe made")
		return nil, errors.New("unused")
	}
	res, err := c.Run(ctx(t), &agentpb.RunRequest{Workload: "fp", Qos: int32(qos.Default), Threads: 1, Loops: 1 << 20}, nil)
	require.NoError(t, err)
	assert.Nil(t, res.GetTelemetry())
}

func TestRunSaysWhyTelemetryIsUnavailable(t *testing.T) {
	c, srv := serve(t, Policy{})
	srv.newProbe = func(context.Context, time.Duration) (telemetry.Probe, error) {
		return nil, &telemetry.UnavailableError{Sampler: telemetry.SamplerPowermetrics, Reason: "powermetrics needs root", Fix: "run with sudo"}
	}
	res, err := c.Run(ctx(t), &agentpb.RunRequest{Workload: "fp", Qos: int32(qos.Default), Threads: 1, Loops: 1 << 20, TelemetryIntervalMs: 100}, nil)
	require.NoError(t, err, "a cell runs without telemetry rather than failing")
	require.Len(t, res.GetRecords(), 1)
	assert.Contains(t, res.GetTelemetry().GetUnavailable(), "powermetrics needs root")
	assert.Contains(t, res.GetTelemetry().GetUnavailable(), "run with sudo")
}
