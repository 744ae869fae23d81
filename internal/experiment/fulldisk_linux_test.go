package experiment

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/testdisk"
)

// fill writes into dir until the disk is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			return
		}
	}
}

// fillingTarget fills the disk while it measures its second cell run, and
// fails the third (failAt).
type fillingTarget struct {
	fakeTarget
	disk string
	t    *testing.T
}

func (f *fillingTarget) Run(ctx context.Context, req *agentpb.RunRequest, p func(*agentpb.Progress)) (*agentpb.Result, error) {
	if len(f.calls) == 1 {
		fill(f.t, f.disk)
	}
	return f.fakeTarget.Run(ctx, req, p)
}

// A run that fails on a full disk loses neither the failure nor the fact
// that run.json could not record it: the error says both, and what to do.
func TestFullDiskEndIsSaid(t *testing.T) {
	disk := testdisk.Tiny(t, "256k")
	s, err := spec.ParseSpec([]byte("name: full\ntargets: [host]\nmatrix: [{workload: fp, qos: [9, 33], threads: 1, loops: 10}]\nrepeats: 3\ntelemetry_ms: 0\n"), "full")
	require.NoError(t, err)
	dir, s, err := CreateRun(disk, s, time.Now())
	require.NoError(t, err)
	defer dir.Unlock()
	target := &fillingTarget{fakeTarget: fakeTarget{failAt: 3}, disk: disk, t: t}
	env := Env{StartTarget: func(context.Context, string, spec.Spec, io.Writer) (Target, []string, error) { return target, nil, nil }}
	_, err = Execute(context.Background(), s, dir, env)
	require.Error(t, err)
	assert.True(t, errors.Is(err, syscall.ENOSPC), "%v", err)
	msg := err.Error()
	assert.Contains(t, msg, "cell 3/6 (host: fp", "the failure itself")
	assert.Contains(t, msg, "channel closed")
	var notRecorded *endNotRecordedError
	require.ErrorAs(t, err, &notRecorded, msg)
	assert.Contains(t, msg, "how the run ended could not be recorded in "+filepath.Join(dir.Path, results.RunFile))
	assert.Contains(t, msg, "free space, then run qoslab run --resume "+dir.Path)
}

// A console that cannot be copied into the results directory (a full disk)
// is left where it is, and the error says where.
func TestConsoleNotKeptLeavesTheStateDirectory(t *testing.T) {
	disk := testdisk.Tiny(t, "256k")
	state := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(state, "console.log"), []byte(strings.Repeat("boot line\n", 100)), 0o644))
	keep := filepath.Join(disk, results.VMConsoleFile)
	fill(t, disk)
	err := releaseStateDir(state, keep, "run-1")
	var notKept *consoleNotKeptError
	require.ErrorAs(t, err, &notKept)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Contains(t, err.Error(), "the console of vm run-1 could not be kept in "+keep)
	assert.Contains(t, err.Error(), "it is left in "+state)
	assert.FileExists(t, filepath.Join(state, "console.log"), "the state directory stays")

	// With room, it is copied and the directory goes.
	require.NoError(t, os.Remove(filepath.Join(disk, "filler")))
	require.NoError(t, os.Remove(keep))
	require.NoError(t, releaseStateDir(state, keep, "run-1"))
	assert.NoDirExists(t, state)
	b, err := os.ReadFile(keep)
	require.NoError(t, err)
	assert.Contains(t, string(b), "=== vm run-1 console, kept ")
	assert.Contains(t, string(b), "boot line\n")
}
