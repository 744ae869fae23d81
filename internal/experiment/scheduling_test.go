package experiment

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
)

// A run records how the controller itself runs, and warns about a child
// that could not be started at the default class.
func TestExecuteRecordsScheduling(t *testing.T) {
	s, err := spec.ParseSpec([]byte("name: sched\ntargets: [host]\nmatrix: [{workload: fp, qos: 9, threads: 1, loops: 10}]\nrepeats: 1\ncontention: 1\ntelemetry_ms: 0\n"), "sched")
	require.NoError(t, err)
	dir, s, err := CreateRun(t.TempDir(), s, time.Now())
	require.NoError(t, err)
	defer dir.Unlock()
	refused := qos.Applied{Asked: qos.Default, Applied: qos.Unspecified, Detail: "SCHED_OTHER nice=10", Reason: "sched_setattr(SCHED_OTHER, nice 0): operation not permitted"}
	env := Env{
		StartTarget: func(context.Context, string, spec.Spec, io.Writer) (Target, []string, error) {
			return &fakeTarget{}, nil, nil
		},
		StartContention: func(_ context.Context, n int) (*contention.Contention, error) {
			return &contention.Contention{Threads: n, StartClass: refused}, nil
		},
	}
	out, err := Execute(context.Background(), s, dir, env)
	require.NoError(t, err)

	warning := "the contention spinners started at unspecified (SCHED_OTHER nice=10), default asked: sched_setattr(SCHED_OTHER, nice 0): operation not permitted"
	assert.True(t, slices.ContainsFunc(out.Notes, func(n Note) bool { return n.Kind == NoteWarning && strings.HasPrefix(n.Text, warning) }),
		"a warning, as a value: %v", out.Notes)

	b, err := os.ReadFile(filepath.Join(dir.Path, results.RunFile))
	require.NoError(t, err)
	var run struct {
		Scheduling Scheduling `json:"scheduling"`
		Notes      []string   `json:"notes"`
	}
	require.NoError(t, json.Unmarshal(b, &run))
	assert.Equal(t, out.Scheduling.Controller, run.Scheduling.Controller)
	assert.NotEmpty(t, run.Scheduling.Controller.Policy, "the controller's policy is read")
	assert.Equal(t, "unspecified", run.Scheduling.Started[startedContention].Applied)
	assert.Equal(t, "default", run.Scheduling.Started[startedContention].Asked)
	assert.True(t, slices.ContainsFunc(run.Notes, func(n string) bool { return strings.HasPrefix(n, "warning: "+warning) }),
		"run.json keeps it with its prefix: %v", run.Notes)

	// Read back as every reader takes it: typed, once.
	d, err := results.Open(dir.Path)
	require.NoError(t, err)
	assert.Equal(t, results.Scheduling(out.Scheduling), d.Run.Scheduling.Value())
	assert.Equal(t, 1, d.Run.Contention.Value().Threads)
	assert.Equal(t, refused, d.Run.Contention.Value().StartClass)
	assert.Equal(t, "linux", d.Run.Targets[spec.TargetHost].Value().OS)
	assert.Equal(t, s.Name, d.Run.Spec.Value().Name)
}
