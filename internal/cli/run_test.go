package cli

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run's --vm-model overrides the spec's vm.model, and names what is
// allowed when it is not a model.
func TestRunVMModel(t *testing.T) {
	t.Chdir(t.TempDir())
	var run *runOptions
	cmd := newCmdRun(testFactory(t, nil), func(_ context.Context, o *runOptions) error { run = o; return nil })
	cmd.SetArgs([]string{"--vm-model", "vz"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, "vz", run.VMEnv.Model, "run's --vm-model overrides the spec's vm.model")
	cmd = newCmdRun(testFactory(t, nil), func(context.Context, *runOptions) error { return nil })
	cmd.SetArgs([]string{"--vm-model", "hyperv"})
	err := cmd.Execute()
	assert.ErrorContains(t, err, `--vm-model "hyperv": allowed default, vz`)
}

func TestRunRefusesAnUnknownBackend(t *testing.T) {
	t.Chdir(t.TempDir())
	cmd := newCmdRun(testFactory(t, nil), func(context.Context, *runOptions) error { return nil })
	cmd.SetArgs([]string{"--vm-backend", "xen"})
	err := cmd.Execute()
	assert.ErrorContains(t, err, `unknown VM backend "xen"`)
}

// --cell-timeout fills run's options, from the flag or the environment,
// and a value outside 1s..24h is a usage error naming where it came from.
func TestRunCellTimeout(t *testing.T) {
	t.Chdir(t.TempDir())
	var run *runOptions
	cmd := newCmdRun(testFactory(t, nil), func(_ context.Context, o *runOptions) error { run = o; return nil })
	cmd.SetArgs([]string{"--cell-timeout", "10m"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, 10*time.Minute, run.CellTimeout)

	cmd = newCmdRun(testFactory(t, map[string]string{"QOSLAB_RUN_CELL_TIMEOUT": "2s"}), func(_ context.Context, o *runOptions) error { run = o; return nil })
	cmd.SetArgs(nil)
	require.NoError(t, cmd.Execute())
	assert.Equal(t, 2*time.Second, run.CellTimeout)

	cmd = newCmdRun(testFactory(t, nil), func(context.Context, *runOptions) error { return nil })
	cmd.SetArgs([]string{"--cell-timeout", "100ms"})
	err := cmd.Execute()
	assert.ErrorContains(t, err, "--cell-timeout 100ms: allowed 1s..24h0m0s, or leave it out for no limit")
	assert.True(t, isUsageError(err))
}
