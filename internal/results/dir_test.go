package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var start = time.Date(2026, 11, 21, 1, 55, 0, 123, time.FixedZone("CET", 3600))

func TestCreate(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "qoslab-results")
	d, err := Create(parent, "subsumption", start)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(parent, "subsumption-20261121T005500Z"), d.Path, "the name carries the UTC time")

	b, err := os.ReadFile(filepath.Join(d.Path, RunFile))
	require.NoError(t, err)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(b, &raw))
	assert.Equal(t, SchemaVersion, raw["schema_version"])
	assert.Equal(t, "subsumption", raw["name"])
	assert.Contains(t, raw, "finished")
	assert.Nil(t, raw["finished"], "a run that has not ended says finished: null")
	assert.NotEmpty(t, raw["tool_version"])

	again, err := Open(d.Path)
	require.NoError(t, err)
	assert.True(t, start.Equal(again.Run.Started))
	assert.False(t, again.Run.Complete())

	_, err = Create(parent, "subsumption", start.Add(500*time.Millisecond))
	require.Error(t, err, "the same second gives the same name, which must not be reused")
	assert.ErrorContains(t, err, "already exists")
	assert.ErrorContains(t, err, "--resume")

	entries, err := os.ReadDir(d.Path)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left beside run.json")
	assert.Equal(t, RunFile, entries[0].Name())
}

func TestCreateRefusesBadNames(t *testing.T) {
	for _, name := range []string{"", "a/b", "..", ".hidden", "-flag", "two words", `back\slash`} {
		_, err := Create(t.TempDir(), name, start)
		assert.ErrorContains(t, err, "cannot name a results directory", "%q", name)
	}
	_, err := Create(t.TempDir(), "ok_name-1.2", start)
	assert.NoError(t, err)
}

func writeRunJSON(t *testing.T, dir, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunFile), []byte(body), 0o644))
}

func TestOpenRefuses(t *testing.T) {
	base := t.TempDir()
	newer := filepath.Join(base, "newer")
	writeRunJSON(t, newer, `{"schema_version": "2.1", "tool_version": "v9.0.0", "name": "x", "targets": "a new shape"}`)
	noVersion := filepath.Join(base, "noversion")
	writeRunJSON(t, noVersion, `{"name": "x"}`)
	notJSON := filepath.Join(base, "notjson")
	writeRunJSON(t, notJSON, `{"schema_version": "1.0", `)
	empty := filepath.Join(base, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))

	for _, tc := range []struct {
		path string
		want []string
	}{
		{newer, []string{newer, "schema 2.1", "reads 1.x", "v9.0.0"}},
		{noVersion, []string{"not MAJOR.MINOR"}},
		{notJSON, []string{"not a qoslab run description"}},
		{empty, []string{"no run.json", "not a qoslab results directory"}},
		{filepath.Join(base, "missing"), []string{"no such file"}},
	} {
		_, err := Open(tc.path)
		require.Error(t, err, tc.path)
		for _, w := range tc.want {
			assert.ErrorContains(t, err, w)
		}
	}
}

func TestFinishAndResume(t *testing.T) {
	d, err := Create(t.TempDir(), "run", start)
	require.NoError(t, err)
	d.Run.Spec, err = DecodeSpec(json.RawMessage(`{"name":"subsumption","repeat":5}`))
	require.NoError(t, err)
	d.Run.Targets["host"], err = RecordInfo(json.RawMessage(`{"os":"linux"}`))
	require.NoError(t, err)
	require.NoError(t, d.Finish(start.Add(time.Minute), errors.New("interrupted")))

	d, err = Open(d.Path)
	require.NoError(t, err)
	require.NotNil(t, d.Run.Finished)
	assert.Equal(t, "interrupted", d.Run.Error)
	assert.False(t, d.Run.Complete())
	assert.JSONEq(t, `{"name":"subsumption","repeat":5}`, string(d.Run.Spec.raw), "the spec as recorded, not as this build's type has it")
	assert.Equal(t, "subsumption", d.Run.Spec.Value().Name)
	assert.Equal(t, "linux", d.Run.Targets["host"].Value().OS)

	partial := Completeness{State: StatePartial, Planned: 2, Measured: 1}
	whole := Completeness{State: StateComplete, Planned: 2, Measured: 2}
	require.NoError(t, d.Resume(start.Add(time.Hour), partial))
	d, err = Open(d.Path)
	require.NoError(t, err)
	assert.Nil(t, d.Run.Finished, "a resumed run is unfinished again")
	assert.Empty(t, d.Run.Error)
	require.Len(t, d.Run.Resumed, 1)
	assert.True(t, start.Add(time.Hour).Equal(d.Run.Resumed[0]))
	require.NotEmpty(t, d.Run.Notes)
	assert.Contains(t, d.Run.Notes[0], "interrupted", "how it stopped is kept")

	require.NoError(t, d.Resume(start.Add(2*time.Hour), partial), "a crash (no finish recorded) can be resumed")
	assert.Contains(t, d.Run.Notes[len(d.Run.Notes)-1], "without recording why")

	require.NoError(t, d.Finish(start.Add(3*time.Hour), nil))
	assert.True(t, d.Run.Complete())
	err = d.Resume(start.Add(4*time.Hour), whole)
	assert.ErrorIs(t, err, ErrComplete)
	assert.ErrorContains(t, err, "nothing left to measure")

	// Finished, but the samples lost a cell run since: taken up again.
	require.NoError(t, d.Resume(start.Add(5*time.Hour), partial))
	assert.Nil(t, d.Run.Finished)
	assert.Contains(t, d.Run.Notes[len(d.Run.Notes)-1], "samples.jsonl holds 1 of its 2 cell runs: the rest measured again")

	err = d.Resume(start.Add(6*time.Hour), Completeness{State: StateDamaged, Problem: "samples.jsonl holds 1 cell runs the run's plan does not have"})
	assert.EqualError(t, err, "resume "+d.Path+": samples.jsonl holds 1 cell runs the run's plan does not have")
}

func TestResumeRefusesNewerMinor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	writeRunJSON(t, dir, `{"schema_version": "1.9", "tool_version": "v1.9.0", "name": "r", "started": "2026-11-21T00:00:00Z", "finished": null, "future_field": 1}`)
	d, err := Open(dir)
	require.NoError(t, err, "a newer minor is readable")
	assert.NotNil(t, d.Run.Targets, "targets can be added even when run.json had none")
	err = d.Resume(start, Completeness{State: StatePartial})
	assert.ErrorContains(t, err, "newer than this qoslab's "+SchemaVersion)
	b, rerr := os.ReadFile(filepath.Join(dir, RunFile))
	require.NoError(t, rerr)
	assert.Contains(t, string(b), "future_field", "run.json is left as it was")
}

func TestList(t *testing.T) {
	parent := t.TempDir()
	old, err := Create(parent, "old", start)
	require.NoError(t, err)
	old.Run.Spec, err = DecodeSpec(json.RawMessage(`{"name": "subsumption-spec"}`))
	require.NoError(t, err)
	log, _, err := old.OpenSamples()
	require.NoError(t, err)
	require.NoError(t, log.Append(cellRun("host/fp/33/2", "host", 1, 2)...))
	require.NoError(t, log.Close())
	require.NoError(t, old.Finish(start.Add(time.Minute), nil))

	torn, err := Create(parent, "torn", start.Add(time.Hour))
	require.NoError(t, err)
	log, _, err = torn.OpenSamples()
	require.NoError(t, err)
	require.NoError(t, log.Append(cellRun("host/fp/33/1", "host", 1, 1)...))
	require.NoError(t, log.Close())
	appendBytes(t, filepath.Join(torn.Path, SamplesFile), `{"schema_version":"1.0","cell":"host/fp/9/1"`)

	writeRunJSON(t, filepath.Join(parent, "newer-20300101T000000Z"), `{"schema_version": "3.0"}`)
	require.NoError(t, os.Mkdir(filepath.Join(parent, "stray"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(parent, ".hidden"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(parent, "notes.txt"), nil, 0o644))

	entries, err := List(parent)
	require.NoError(t, err)
	require.Len(t, entries, 4)
	// Unreadable directories have no start time, so they come first, by path.
	assert.Equal(t, filepath.Join(parent, "newer-20300101T000000Z"), entries[0].Path)
	assert.ErrorContains(t, entries[0].Err, "schema 3.0")
	assert.Equal(t, filepath.Join(parent, "stray"), entries[1].Path)
	assert.ErrorContains(t, entries[1].Err, "no run.json")

	assert.Equal(t, old.Path, entries[2].Path)
	assert.NoError(t, entries[2].Err)
	assert.Equal(t, "old", entries[2].Run.Name)
	assert.Equal(t, "subsumption-spec", entries[2].SpecName)
	assert.True(t, entries[2].Run.Complete())
	assert.Equal(t, 2, entries[2].Samples)

	assert.Equal(t, torn.Path, entries[3].Path)
	assert.NoError(t, entries[3].Err)
	assert.False(t, entries[3].Run.Complete())
	assert.Equal(t, 1, entries[3].Samples)
	require.NotNil(t, entries[3].Torn)
	assert.Equal(t, 2, entries[3].Torn.Line)

	_, err = List(filepath.Join(parent, "missing"))
	assert.ErrorContains(t, err, "list results in")
}

// One run or resume at a time: the second lock attempt (another open file,
// as another process would have) fails at once naming the holder, results
// list shows the run as running with its pid, and the lock goes with
// Unlock (or the process).
func TestLockIsExclusive(t *testing.T) {
	d, err := Create(t.TempDir(), "locked", time.Now())
	require.NoError(t, err)
	_, err = d.Lock()
	require.NoError(t, err)
	h, running := Running(d.Path)
	assert.True(t, running)
	assert.Equal(t, os.Getpid(), h.PID)

	other, err := Open(d.Path)
	require.NoError(t, err)
	_, err = other.Lock()
	var inUse *InUseError
	require.ErrorAs(t, err, &inUse)
	assert.Equal(t, os.Getpid(), inUse.Holder.PID)
	assert.Contains(t, err.Error(), fmt.Sprintf("results %s is in use by qoslab (pid %d, since ", d.Path, os.Getpid()))
	assert.Contains(t, err.Error(), "wait for it or stop it")

	entries, err := List(filepath.Dir(d.Path))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, fmt.Sprintf("running (pid %d)", os.Getpid()), entries[0].State(), "never a resume hint for a running run")
	assert.True(t, entries[0].Listing().Running)

	d.Unlock()
	_, running = Running(d.Path)
	assert.False(t, running)
	_, err = other.Lock()
	require.NoError(t, err, "free once unlocked")
	other.Unlock()
}
