package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload"
)

// A traced call says where the agent's time went: every step of a thread
// workload, the cell's clock as long as its deadline, and steps that add up
// to no more than the call; an untraced call carries none.
func TestRunTrace(t *testing.T) {
	c, _ := serve(t, Policy{})
	const d = 50 * time.Millisecond
	req := func(trace bool) *agentpb.RunRequest {
		return &agentpb.RunRequest{Workload: "fp", Qos: int32(qos.Default), Threads: 2, DurationNs: int64(d), TelemetryIntervalMs: 10, Trace: trace}
	}
	res, err := c.Run(ctx(t), req(true), nil)
	require.NoError(t, err)
	tr := res.GetTraceNs()
	for _, k := range []string{traceValidate, traceTelStart, traceLaunch, traceThreads, traceThreadSetUp, traceThreadClass, traceStart, traceMeasured, traceFinish, traceTelStop, traceTelSend, traceTotal, traceClockRead} {
		require.Contains(t, tr, k)
		assert.GreaterOrEqual(t, tr[k], int64(0), k)
	}
	assert.NotContains(t, tr, traceWorkload, "a thread workload gives its phases")
	assert.GreaterOrEqual(t, tr[traceMeasured], int64(d), "the cell's clock runs to its deadline")
	var sum int64
	for _, k := range []string{traceValidate, traceTelStart, traceLaunch, traceThreads, traceStart, traceMeasured, traceFinish, traceTelStop, traceTelSend} {
		sum += tr[k]
	}
	assert.LessOrEqual(t, sum, tr[traceTotal], "the steps are parts of the call")
	assert.LessOrEqual(t, tr[traceThreadSetUp], tr[traceThreads], "the slowest set-up is part of the threads' start")
	assert.LessOrEqual(t, tr[traceThreadClass], tr[traceThreads], "and so is the slowest class")
	for _, r := range res.GetRecords() {
		assert.LessOrEqual(t, r.GetEndNs()-r.GetStartNs(), tr[traceMeasured], "a thread's interval is within the cell's clock")
	}

	res, err = c.Run(ctx(t), req(false), nil)
	require.NoError(t, err)
	assert.Nil(t, res.GetTraceNs(), "no trace unless asked")
}

// A workload that gives no phases (procs) is one workload step, from the
// previous step to its return.
func TestCallTraceWithoutPhases(t *testing.T) {
	tr := newCallTrace(true, 100)
	tr.workload(workload.Phases{}, 350)
	assert.Equal(t, map[string]int64{traceWorkload: 250}, tr.ns)
	tr = newCallTrace(true, 100)
	tr.workload(workload.Phases{Spawned: 110, Ready: 150, CellStart: 160, Finished: 300, SetUpNs: 5, ClassNs: 7}, 320)
	assert.Equal(t, map[string]int64{traceLaunch: 10, traceThreads: 40, traceThreadSetUp: 5, traceThreadClass: 7, traceStart: 10, traceMeasured: 140, traceFinish: 20}, tr.ns)
	assert.Nil(t, newCallTrace(false, 1).result(), "untraced: nothing")
}
