package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLogRoundTripAndTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telemetry.jsonl")
	l, err := OpenLog(path)
	require.NoError(t, err)
	in := Sample{Cell: "host fp qos=9 threads=1", Repeat: 2, Target: "host", View: ViewHost, Sampler: SamplerProc,
		TNs: 100e6, IntervalNs: 100e6, CPUs: []CPU{{ID: 0, Busy: Float(0.5), MHz: Float(2400)}, {ID: 1}}}
	require.NoError(t, l.Append(in))
	require.NoError(t, l.Close())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"schema_version":"1.0","cell":"host fp`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	got, notes, err := ReadFile(path)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, SchemaVersion, got[0].SchemaVersion)
	assert.Equal(t, 0.5, *got[0].CPUs[0].Busy)
	assert.Nil(t, got[0].CPUs[1].MHz, "an unread frequency stays missing, not 0")
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "line 2 skipped")
}

func TestReadRefusesUnknownMajor(t *testing.T) {
	_, _, err := readSamples(strings.NewReader(`{"schema_version":"2.0","cell":"x"}`+"\n"), "t.jsonl")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"2.0"`)
}

func TestReadFileMissingIsNoTelemetry(t *testing.T) {
	got, notes, err := ReadFile(filepath.Join(t.TempDir(), "none.jsonl"))
	require.NoError(t, err)
	assert.Nil(t, got)
	assert.Nil(t, notes)
}

// Before a resume appends, a torn last line is cut off (so the next sample
// does not land in the middle of it) and the samples of cell runs that did
// not finish are dropped (they are measured again); finished ones stay.
func TestOpenLogKeepingCutsTornLineAndUnfinishedRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telemetry.jsonl")
	l, err := OpenLog(path)
	require.NoError(t, err)
	done := Sample{Cell: "host fp qos=9 threads=1", Repeat: 1, Target: "host", View: ViewHost}
	undone := Sample{Cell: "host fp qos=9 threads=1", Repeat: 2, Target: "host", View: ViewHost}
	require.NoError(t, l.Append(done, done, undone))
	require.NoError(t, l.Close())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"schema_version":"1.0","cell":"host fp`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	l, notes, err := OpenLogKeeping(path, func(cell string, repeat int) bool { return repeat == 1 })
	require.NoError(t, err)
	require.Len(t, notes, 2)
	assert.Contains(t, notes[0], "cut off a last line without its end")
	assert.Contains(t, notes[1], "dropped 1 samples of host fp qos=9 threads=1 repeat 2")
	again := Sample{Cell: "host fp qos=9 threads=1", Repeat: 2, Target: "host", View: ViewHost, TNs: 7}
	require.NoError(t, l.Append(again))
	require.NoError(t, l.Close())

	got, readNotes, err := ReadFile(path)
	require.NoError(t, err)
	assert.Empty(t, readNotes, "no damaged line is left")
	require.Len(t, got, 3)
	assert.Equal(t, 1, got[0].Repeat)
	assert.Equal(t, 1, got[1].Repeat)
	assert.Equal(t, int64(7), got[2].TNs, "repeat 2's telemetry once, from the run measured again")
}
