package results

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/telemetry"
)

func TestLoadReadsTheDirectoryWhole(t *testing.T) {
	parent := t.TempDir()
	d, err := Create(parent, "whole", time.Now())
	require.NoError(t, err)

	// A run that has not finished a cell yet loads, empty.
	l, err := Load(d.Path)
	require.NoError(t, err)
	assert.Empty(t, l.Samples)
	assert.Empty(t, l.Telemetry)
	assert.Empty(t, l.Notes)
	assert.Empty(t, l.Cells())

	log, _, err := d.OpenSamples()
	require.NoError(t, err)
	for _, q := range []int{33, 9} {
		s := Sample{Target: "host", Workload: "fp", QoS: q, Threads: 1, Repeat: 1, EndNs: 1e9, Work: 10, Unit: "loops", Rate: 10, QoSApplied: q, QoSFull: true}
		require.NoError(t, log.Append(Record{Cell: "c", RunRecords: 1, Sample: s, RecordedAt: time.Now()}))
	}
	require.NoError(t, log.Close())
	tel, err := telemetry.OpenLog(filepath.Join(d.Path, TelemetryFile))
	require.NoError(t, err)
	require.NoError(t, tel.Append(telemetry.Sample{SchemaVersion: telemetry.SchemaVersion, Cell: "c", Target: "host", View: telemetry.ViewHost}))
	require.NoError(t, tel.Close())
	// A crash mid-write leaves half a line at the end of each file.
	for _, f := range []string{SamplesFile, TelemetryFile} {
		file, err := os.OpenFile(filepath.Join(d.Path, f), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = file.WriteString(`{"cell":"c","rep`)
		require.NoError(t, err)
		require.NoError(t, file.Close())
	}
	d.Run.Notes = []string{"telemetry unavailable on vm: no powermetrics", "something else", "telemetry-like words in a note of another kind"}
	d.Run.TelemetryNotes = []string{"telemetry unavailable on vm: no powermetrics"}
	require.NoError(t, d.SaveRun())

	l, err = Load(d.Path)
	require.NoError(t, err)
	assert.Equal(t, "whole", l.Run.Name)
	assert.Len(t, l.Samples, 2)
	require.NotNil(t, l.Torn)
	assert.Len(t, l.Telemetry, 1)
	assert.Len(t, l.Notes, 2, "the torn end of each file is said: %v", l.Notes)
	assert.Contains(t, l.Notes[0], SamplesFile+": ")
	assert.Equal(t, []string{"telemetry unavailable on vm: no powermetrics"}, l.TelemetryNotes(), "those run.json recorded apart, whatever the other notes say")
	cells := l.Cells()
	require.Len(t, cells, 2)
	assert.Equal(t, 9, cells[0].QoS, "in table order")
	assert.False(t, l.HasSummary())

	_, err = Load(t.TempDir())
	assert.ErrorContains(t, err, "not a qoslab results directory")
}

func TestLatest(t *testing.T) {
	parent := t.TempDir()
	_, err := Latest(parent)
	assert.ErrorContains(t, err, "no results in "+parent)
	_, err = Latest(filepath.Join(parent, "missing"))
	assert.ErrorContains(t, err, "no results in", "a results location not made yet has no results, plainly")

	now := time.Now()
	older, err := Create(parent, "b-older", now.Add(-time.Hour))
	require.NoError(t, err)
	newer, err := Create(parent, "a-newer", now)
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(parent, "not-a-run"), 0o755))
	got, err := Latest(parent)
	require.NoError(t, err)
	assert.Equal(t, newer.Path, got, "by start time, not by name (%s is older)", older.Path)
}

// TestNamed: a run is named by its path, or by its bare name under the
// results location; what is neither is given back for its reader to refuse.
func TestNamed(t *testing.T) {
	parent := t.TempDir()
	run := filepath.Join(parent, "contention-20261124T224900Z")
	require.NoError(t, os.Mkdir(run, 0o755))
	elsewhere := t.TempDir()
	for _, tt := range []struct {
		name, parent, arg, want string
	}{
		{"a path", parent, run, run},
		{"a bare run name", parent, "contention-20261124T224900Z", run},
		{"a path elsewhere", parent, elsewhere, elsewhere},
		{"no such run", parent, "contention-nope", "contention-nope"},
		{"no such path", parent, "some/dir", "some/dir"},
		{"no results location", "", "contention-20261124T224900Z", "contention-20261124T224900Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Named(tt.parent, tt.arg))
		})
	}
}
