package cli

import (
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/render"
)

// results list's --format md and csv are the table with every column
// (QUICK and SPEC their own, each directory as it is), its verdicts as
// text; --format json is --json; --json refuses another --format.
func TestResultsListFormats(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "results", "constructed")
	quick := filepath.Join(dir, "flagged-quick")

	out, stderr, code := runRoot(t, nil, "results", "list", "--results", dir, "--format", "md")
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(out, "| DIRECTORY | SPEC | STARTED | QUICK | STATE | CELL RUNS | VERDICT |\n|---|"), out)
	assert.Contains(t, out, "| "+render.Escape(quick)+" | flagged-quick | 2026-12-01 10:00:00Z | quick | complete | 48 | fp yes |\n")
	assert.Contains(t, out, "- **warning:** "+render.Escape(filepath.Join(dir, "core-share"))+": finish it with")

	out, stderr, code = runRoot(t, nil, "results", "list", "--results", dir, "--format", "csv")
	require.Equal(t, 0, code, stderr)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"DIRECTORY", "SPEC", "STARTED", "QUICK", "STATE", "CELL RUNS", "VERDICT"}, recs[0])
	assert.Contains(t, recs, []string{quick, "flagged-quick", "2026-12-01 10:00:00Z", "quick", "complete", "48", "fp yes"})
	assert.NotContains(t, out, "finish it with", "a CSV is the table alone")

	asJSON, _, code := runRoot(t, nil, "results", "list", "--results", dir, "--json")
	require.Equal(t, 0, code)
	out, _, code = runRoot(t, nil, "results", "list", "--results", dir, "--format", "json")
	require.Equal(t, 0, code)
	assert.Equal(t, asJSON, out)
	assert.True(t, strings.HasPrefix(out, "[\n"), out)

	_, stderr, code = runRoot(t, nil, "results", "list", "--results", dir, "--json", "--format", "md")
	assert.Equal(t, 2, code, "a usage error")
	assert.Contains(t, stderr, "--json is --format json: it cannot go with --format md")
	_, stderr, code = runRoot(t, nil, "results", "list", "--results", dir, "--format", "html")
	assert.Equal(t, 2, code, "a usage error")
	assert.Contains(t, stderr, "--format")
}

// Where nothing has run, --format csv is the headings alone, for a
// program; the text says so.
func TestResultsListEmptyCSV(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := runRoot(t, nil, "results", "list", "--results", dir, "--format", "csv")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "DIRECTORY,SPEC,STARTED,QUICK,STATE,CELL RUNS,VERDICT\n", out)
	out, _, code = runRoot(t, nil, "results", "list", "--results", dir)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "no results in "+dir+" yet")
}
