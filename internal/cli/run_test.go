package cli

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/spec"
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

// --max-repeats replaces the spec's max_repeats when given (0 too), from
// the flag or the environment; unset, the spec's stands. A cap below the
// spec's repeats is a usage error naming both, and a resumed run keeps
// its own.
func TestRunMaxRepeats(t *testing.T) {
	t.Chdir(t.TempDir())
	var run *runOptions
	for _, c := range []struct {
		args []string
		env  map[string]string
		want optionalInt
	}{
		{[]string{"--max-repeats", "12"}, nil, optionalInt{N: 12, Given: true}},
		{[]string{"--max-repeats", "0"}, nil, optionalInt{N: 0, Given: true}},
		{nil, nil, optionalInt{}},
		{nil, map[string]string{"QOSLAB_RUN_MAX_REPEATS": "30"}, optionalInt{N: 30, Given: true}},
	} {
		cmd := newCmdRun(testFactory(t, c.env), func(_ context.Context, o *runOptions) error { run = o; return nil })
		cmd.SetArgs(c.args)
		require.NoError(t, cmd.Execute(), c.args)
		assert.Equal(t, c.want, run.MaxRepeats, c.args)
	}

	s, err := spec.DefaultSpec("contention")
	require.NoError(t, err)
	assert.Equal(t, 18, s.MaxRepeats)
	o := &runOptions{MaxRepeats: optionalInt{N: 12, Given: true}}
	require.NoError(t, o.applyMaxRepeats(&s))
	assert.Equal(t, 12, s.MaxRepeats)
	o = &runOptions{}
	require.NoError(t, o.applyMaxRepeats(&s))
	assert.Equal(t, 12, s.MaxRepeats, "unset, the spec's stands")
	o = &runOptions{MaxRepeats: optionalInt{N: 4, Given: true}}
	err = o.applyMaxRepeats(&s)
	assert.EqualError(t, err, "--max-repeats 4: allowed 0 (add no repeats) or 6..1000 (at least the spec's repeats, 6)")
	assert.True(t, isUsageError(err))

	cmd := newCmdRun(testFactory(t, nil), func(context.Context, *runOptions) error { return nil })
	cmd.SetArgs([]string{"--max-repeats", "12", "--resume", "somewhere"})
	err = cmd.Execute()
	assert.ErrorContains(t, err, "--max-repeats and --resume exclude each other: a resumed run keeps the max_repeats it started with")
	assert.True(t, isUsageError(err))

	cmd = newCmdRun(testFactory(t, nil), func(context.Context, *runOptions) error { return nil })
	cmd.SetArgs([]string{"--max-repeats", "many"})
	assert.ErrorContains(t, cmd.Execute(), `"many" is not a whole number`)
}
