package guestvm

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/hv"
)

// stopRecorder is a VM that never goes down by itself and records the
// context its Stop was given.
type stopRecorder struct {
	done        chan struct{}
	hadDeadline bool
	stops       int
}

func (m *stopRecorder) DialAgent(context.Context) (net.Conn, error) {
	return nil, errors.New("no agent")
}
func (m *stopRecorder) Info() hv.MachineInfo  { return hv.MachineInfo{Name: "rec"} }
func (m *stopRecorder) Done() <-chan struct{} { return m.done }
func (m *stopRecorder) Err() error            { return nil }
func (m *stopRecorder) Stop(ctx context.Context) error {
	_, m.hadDeadline = ctx.Deadline()
	m.stops++
	close(m.done)
	return nil
}

// The VM's stop keeps the backend's own bounds: a deadline of ours would
// cut a macOS guest's 30 s shutdown short and force it off mid-write.
func TestStopLeavesTheStopItsOwnBounds(t *testing.T) {
	client, err := agent.NewClient(func(context.Context) (net.Conn, error) {
		return nil, errors.New("the agent is gone")
	})
	require.NoError(t, err)
	m := &stopRecorder{done: make(chan struct{})}
	require.NoError(t, Stop(client, m))
	assert.Equal(t, 1, m.stops)
	assert.False(t, m.hadDeadline, "Stop was given a deadline shorter than the backend's own")
}
