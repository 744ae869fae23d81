package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
)

// finishedRun runs a small host-only spec to its end: 2 classes x 3
// repeats, 6 cell runs of one record each.
func finishedRun(t *testing.T, dir string) (work, runDir string) {
	t.Helper()
	work = t.TempDir()
	spec := filepath.Join(work, "small.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("name: small\ntargets: [host]\nmatrix: [{workload: fp, qos: [9, 33], threads: 1, loops: 1e6}]\nrepeats: 3\ntelemetry_ms: 0\n"), 0o644))
	_, stderr, code := qoslab(t, dir, "run", "--spec", spec, "--results", work)
	require.Equal(t, 0, code, stderr)
	m, err := filepath.Glob(filepath.Join(work, "small-*"))
	require.NoError(t, err)
	require.Len(t, m, 1)
	return work, m[0]
}

// listState is the state `results list --json` gives the one run in work.
func listState(t *testing.T, dir, work string) (state string, complete bool) {
	t.Helper()
	out, stderr, code := qoslab(t, dir, "results", "list", "--json", "--results", work)
	require.Equal(t, 0, code, stderr)
	var rows []struct {
		State    string `json:"state"`
		Complete bool   `json:"complete"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows), out)
	require.Len(t, rows, 1)
	return rows[0].State, rows[0].Complete
}

// Completeness comes from the samples: a finished run whose samples lost
// a cell run (a torn last line, a cell run deleted) is partial until
// --resume measures it again, and a relabelled copy of a cell run is
// refused, not merged.
func TestCompletenessFromTheSamples(t *testing.T) {
	t.Parallel()
	dir := binaries(t)

	t.Run("torn last line", func(t *testing.T) {
		work, runDir := finishedRun(t, dir)
		samples := filepath.Join(runDir, results.SamplesFile)
		b, err := os.ReadFile(samples)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(samples, b[:len(b)-20], 0o644))

		state, complete := listState(t, dir, work)
		assert.Equal(t, "partial", state)
		assert.False(t, complete)
		out, _, code := qoslab(t, dir, "results", "list", "--results", work)
		require.Equal(t, 0, code)
		assert.Contains(t, out, "partial 5/6")
		assert.Contains(t, words(out), runDir+": its samples end torn at line 6; finish it with qoslab run --resume "+runDir, "the warning, wrapped to the width")

		out, stderr, code := qoslab(t, dir, "results", "show", "--format", "md", runDir)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out, "partial: 5 of 6 cell runs measured")
		assert.Contains(t, stderr, "older than what its samples hold (a torn end): computed from its samples, 5 cell runs, 5 records")
		assert.Regexp(t, `\| host \| 33 user-interactive \| 1 \| [23] \|`, out, "n counts what the samples hold now")

		_, stderr, code = qoslab(t, dir, "run", "--resume", runDir)
		require.Equal(t, 0, code, stderr)
		assert.NotContains(t, stderr, "nothing left to measure")
		assert.Contains(t, stderr, "measured again")
		recs, torn, err := results.ReadSamples(samples)
		require.NoError(t, err)
		assert.Nil(t, torn, "the torn bytes are cut off")
		assert.Len(t, recs, 6)
		state, complete = listState(t, dir, work)
		assert.Equal(t, "complete", state)
		assert.True(t, complete)
	})

	t.Run("a cell run deleted", func(t *testing.T) {
		work, runDir := finishedRun(t, dir)
		samples := filepath.Join(runDir, results.SamplesFile)
		b, err := os.ReadFile(samples)
		require.NoError(t, err)
		lines := strings.SplitAfter(string(b), "\n")
		require.Len(t, lines, 7, "6 lines and the empty rest")
		require.NoError(t, os.WriteFile(samples, []byte(strings.Join(append(lines[:2:2], lines[3:]...), "")), 0o644))

		out, _, code := qoslab(t, dir, "results", "list", "--results", work)
		require.Equal(t, 0, code)
		assert.Contains(t, out, "partial 5/6")
		assert.Contains(t, words(out), runDir+": finish it with qoslab run --resume "+runDir, "the warning, wrapped to the width")
		_, stderr, code := qoslab(t, dir, "run", "--resume", runDir)
		require.Equal(t, 0, code, stderr)
		recs, _, err := results.ReadSamples(samples)
		require.NoError(t, err)
		assert.Len(t, recs, 6, "the deleted cell run is measured again")
		state, _ := listState(t, dir, work)
		assert.Equal(t, "complete", state)
	})

	t.Run("a relabelled copy", func(t *testing.T) {
		work, runDir := finishedRun(t, dir)
		samples := filepath.Join(runDir, results.SamplesFile)
		b, err := os.ReadFile(samples)
		require.NoError(t, err)
		first := strings.SplitAfter(string(b), "\n")[0]
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(first), &rec))
		rec["cell"] = rec["cell"].(string) + " copy"
		rec["rate"] = rec["rate"].(float64) * 100
		forged, err := json.Marshal(rec)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(samples, append(b, append(forged, '\n')...), 0o644))

		for _, args := range [][]string{{"results", "show", runDir}, {"report", runDir}} {
			_, stderr, code := qoslab(t, dir, args...)
			assert.Equal(t, 1, code, "%v: %s", args, stderr)
			assert.Contains(t, stderr, "line 7 records cell run host fp qos=", "%v", args)
			assert.Contains(t, stderr, "again (first on line 1, labelled", "%v", args)
		}
		state, _ := listState(t, dir, work)
		assert.Equal(t, "damaged", state)
		_, stderr, code := qoslab(t, dir, "run", "--resume", runDir)
		assert.NotEqual(t, 0, code)
		assert.Contains(t, stderr, "again (first on line 1")
		after, err := os.ReadFile(samples)
		require.NoError(t, err)
		assert.True(t, bytes.HasSuffix(after, append(forged, '\n')), "nothing is changed in a damaged directory")
	})
}

// words is s with every run of white space one space: a wrapped line read
// as the line it was before it was wrapped to the width.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }
