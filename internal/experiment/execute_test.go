package experiment

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/spec"
)

// A fixed-duration entry's cells carry the duration, their keys say it,
// and the agent request carries it instead of loops.
func TestDurationCells(t *testing.T) {
	s, err := spec.ParseSpec([]byte("matrix: [{workload: fp, qos: 9, duration: 1500ms}, {workload: int, qos: 9}]\n"), "t")
	require.NoError(t, err)
	cells, _ := Plan(s)
	var fp PlannedRun
	for _, c := range cells {
		if c.Workload == "fp" {
			fp = c
		}
	}
	assert.Equal(t, 1500*time.Millisecond, fp.Duration)
	assert.Contains(t, fp.SeriesKey(), " duration=1.5s")
	assert.NotContains(t, fp.SeriesKey(), "loops=")
	req := fp.Request()
	assert.Equal(t, int64(1500*time.Millisecond), req.GetDurationNs())
	assert.Zero(t, req.GetLoops())
}

// An agent older than duration cells is refused before anything runs, with
// what to do, rather than sent a request it would misread.
func TestCheckDurationRefusesOldAgents(t *testing.T) {
	s, err := spec.ParseSpec([]byte("matrix: [{workload: fp, duration: 1s}]\n"), "t")
	require.NoError(t, err)
	old := &agentpb.InfoReply{AgentVersion: "v0.1", Protocol: &agentpb.ProtocolVersion{Major: 1, Minor: 1}}
	err = checkDuration("vm", s, old)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "vm: matrix[0] runs for a duration (1s), which needs agent protocol 1.2; this agent (v0.1) speaks 1.1")
	cur := &agentpb.InfoReply{Protocol: &agentpb.ProtocolVersion{Major: 1, Minor: durationMinor}}
	assert.NoError(t, checkDuration("vm", s, cur))
	loops, err := spec.ParseSpec([]byte("matrix: [{workload: fp}]\n"), "t")
	require.NoError(t, err)
	assert.NoError(t, checkDuration("vm", loops, old), "loop cells run on any 1.x agent")
}
