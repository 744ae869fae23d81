package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
)

// runAt writes a complete results directory started at t.
func runAt(t *testing.T, parent, name string, at time.Time) string {
	t.Helper()
	d, err := results.Create(parent, name, at)
	require.NoError(t, err)
	require.NoError(t, d.Finish(at.Add(time.Minute), nil))
	return d.Path
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestResultsRm(t *testing.T) {
	parent := t.TempDir()
	a := runAt(t, parent, "a", time.Now().Add(-2*time.Hour))
	b := runAt(t, parent, "b", time.Now().Add(-time.Hour))
	other := filepath.Join(parent, "notes")
	require.NoError(t, os.Mkdir(other, 0o755))

	_, stderr, code := runRoot(t, nil, "results", "rm", a, other)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "removed nothing: "+other+" has no run.json: not a qoslab results directory")
	assert.True(t, exists(a), "nothing goes when one argument is refused")

	// A run writing the directory holds its lock: refused.
	d, err := results.Open(b)
	require.NoError(t, err)
	_, err = d.Lock()
	require.NoError(t, err)
	_, stderr, code = runRoot(t, nil, "results", "rm", b)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, b+" is being written by qoslab (pid")
	assert.True(t, exists(b))
	d.Unlock()

	out, stderr, code := runRoot(t, nil, "results", "rm", "--results", parent, a, "latest")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "removed "+a)
	assert.Contains(t, out, "removed "+b, "latest names the newest")
	assert.False(t, exists(a))
	assert.False(t, exists(b))
	assert.True(t, exists(other))
}

func TestResultsPrune(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	setup := func(t *testing.T) (string, []string) {
		parent := t.TempDir()
		var dirs []string // oldest first: 40, 20, 10 and 1 days old
		for _, days := range []int{40, 20, 10, 1} {
			dirs = append(dirs, runAt(t, parent, "r", now.Add(-time.Duration(days)*24*time.Hour)))
		}
		return parent, dirs
	}

	cases := []struct {
		name string
		args []string
		gone []int // indexes into the runs, oldest first
	}{
		{"keep 2", []string{"--keep", "2"}, []int{0, 1}},
		{"keep 0", []string{"--keep", "0"}, []int{0, 1, 2, 3}},
		{"keep more than there are", []string{"--keep", "9"}, nil},
		{"older than 15 days", []string{"--older-than", "15d"}, []int{0, 1}},
		{"older than 2 weeks", []string{"--older-than", "2w"}, []int{0, 1}},
		{"older than 48h", []string{"--older-than", "48h"}, []int{0, 1, 2}},
		{"both: outside the newest 3 and older than 15 days", []string{"--keep", "3", "--older-than", "15d"}, []int{0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent, dirs := setup(t)
			o := pruneOptions(t, parent, now, c.args...)
			streams, out, _ := testIO()
			o.IO = streams
			dry := *o
			dry.DryRun = true
			require.NoError(t, resultsPruneRun(t.Context(), &dry))
			for _, d := range dirs {
				assert.True(t, exists(d), "--dry-run removes nothing")
			}
			for _, i := range c.gone {
				assert.Contains(t, out.String(), "would remove "+dirs[i])
			}
			require.NoError(t, resultsPruneRun(t.Context(), o))
			for i, d := range dirs {
				assert.Equal(t, !slices.Contains(c.gone, i), exists(d), "%s (%d)", d, i)
			}
		})
	}

	for _, bad := range [][]string{{}, {"--keep", "-3"}, {"--older-than", "soon"}, {"--older-than", "0d"}} {
		_, stderr, code := runRoot(t, nil, append([]string{"results", "prune"}, bad...)...)
		assert.Equal(t, 2, code, "%q", bad)
		assert.Contains(t, stderr, "Run 'qoslab results prune --help'", "%q", bad)
	}
}

// pruneOptions parses `results prune args` as the command would.
func pruneOptions(t *testing.T, parent string, now time.Time, args ...string) *resultsPruneOptions {
	t.Helper()
	var got *resultsPruneOptions
	cmd := newCmdResultsPrune(testFactory(t, nil), func(_ context.Context, o *resultsPruneOptions) error { got = o; return nil })
	cmd.SetArgs(append([]string{"--results", parent}, args...))
	require.NoError(t, cmd.Execute())
	got.Now = func() time.Time { return now }
	return got
}

// A running run is never pruned.
func TestPruneKeepsARunningRun(t *testing.T) {
	parent := t.TempDir()
	old := runAt(t, parent, "old", time.Now().Add(-100*24*time.Hour))
	d, err := results.Open(old)
	require.NoError(t, err)
	_, err = d.Lock()
	require.NoError(t, err)
	defer d.Unlock()
	_, stderr, code := runRoot(t, nil, "results", "prune", "--results", parent, "--keep", "0")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "kept "+old+": a run is writing it")
	assert.True(t, exists(old))
}

// results list shows each run's verdicts, quick and state, and an empty
// list where nothing has run; --json has the verdicts as summary.json does.
func TestResultsListShowsVerdictsAndState(t *testing.T) {
	t.Chdir(t.TempDir())
	out, stderr, code := runRoot(t, nil, "results", "list")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "no results in qoslab-results yet")
	out, _, code = runRoot(t, nil, "results", "list", "--json")
	require.Equal(t, 0, code)
	assert.JSONEq(t, "[]", out)

	parent := t.TempDir()
	yes := verdictRun(t, parent, "yes", 6, 1)
	no := verdictRun(t, parent, "no", 6, 100)
	partial, err := results.Create(parent, "partial", time.Now())
	require.NoError(t, err)
	partial.Run.Planned = 12
	require.NoError(t, partial.SaveRun())
	out, stderr, code = runRoot(t, nil, "results", "list", "--results", parent)
	require.Equal(t, 0, code, stderr)
	// At 100 columns the temporary directory's long path is said once
	// above the table, each run named under it (issue 40).
	assert.Contains(t, out, "DIRECTORY under "+parent+"\n")
	yes, no, name := filepath.Base(yes), filepath.Base(no), filepath.Base(partial.Path)
	assert.Regexp(t, yes+`\s+yes\s+\S+ \S+\s+complete\s+24\s+fp yes\n`, out)
	assert.Regexp(t, no+`\s+no\s+.*complete\s+24\s+fp no\n`, out)
	assert.Regexp(t, name+`\s+partial\s+.*partial 0/12\s+0\s+-\n`, out)
	assert.Contains(t, strings.Join(strings.Fields(out), " "), "finish it with qoslab run --resume "+partial.Path)

	out, _, code = runRoot(t, nil, "results", "list", "--results", parent, "--json")
	require.Equal(t, 0, code)
	var rows []struct {
		Path     string `json:"path"`
		Quick    bool   `json:"quick"`
		State    string `json:"state"`
		Planned  int    `json:"planned"`
		Measured int    `json:"measured"`
		Verdicts []struct {
			Outcome string  `json:"outcome"`
			SI      float64 `json:"si"`
		} `json:"verdicts"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 3)
	assert.Equal(t, "complete", rows[0].State)
	require.Len(t, rows[0].Verdicts, 1)
	assert.Equal(t, "yes", rows[0].Verdicts[0].Outcome)
	assert.Equal(t, "no", rows[1].Verdicts[0].Outcome)
	assert.Equal(t, "partial", rows[2].State)
	assert.Equal(t, 12, rows[2].Planned)
}
