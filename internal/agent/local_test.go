package agent

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLocalAgentThatExitsFailsCallsAtOnce(t *testing.T) {
	bin := "/bin/false"
	if _, err := os.Stat(bin); err != nil {
		t.Skip("no /bin/false")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := StartLocal(ctx, LocalOptions{Path: bin})
	require.NoError(t, err)
	defer l.Close()
	_, err = l.Info(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited: exit status 1")
	assert.NoError(t, ctx.Err(), "the call failed because the agent exited, not by timing out")
}

func TestFindAgent(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "agent")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	got, err := FindAgent(exe)
	require.NoError(t, err)
	assert.Equal(t, exe, got)

	_, err = FindAgent(filepath.Join(dir, "missing"))
	assert.ErrorContains(t, err, "missing")
	assert.ErrorContains(t, err, "--agent or QOSLAB_AGENT")

	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))
	_, err = FindAgent(plain)
	assert.ErrorContains(t, err, "not an executable file")

	// Next to the test binary there is no qoslab-agent: the error says how to get one.
	_, err = FindAgent("")
	assert.ErrorContains(t, err, "make build")
}

func TestDialOnce(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	dial := DialOnce(a)
	c, err := dial(context.Background())
	require.NoError(t, err)
	assert.Same(t, a, c)
	_, err = dial(context.Background())
	assert.ErrorContains(t, err, "cannot be redialled")
}
