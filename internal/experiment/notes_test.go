package experiment

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/qoslab/qoslab/internal/results"
)

// A note about telemetry is kept among run.json's notes as a plain note
// is, and recorded apart by its kind, which the report reads; a note of
// another kind is never recorded apart, whatever its words.
func TestTelemetryNotesAreRecordedApart(t *testing.T) {
	x := &execution{dir: &results.Dir{}, log: io.Discard, out: &Session{}}
	x.note(Note{Kind: NoteTelemetry, Text: "telemetry unavailable on vm: no powermetrics"})
	x.note(Note{Kind: NoteInfo, Text: "telemetry: words of a note of another kind"})
	assert.Equal(t, []string{"telemetry unavailable on vm: no powermetrics"}, x.dir.Run.TelemetryNotes)
	assert.Equal(t, []string{"telemetry unavailable on vm: no powermetrics", "telemetry: words of a note of another kind"}, x.dir.Run.Notes)
	assert.Equal(t, "telemetry unavailable on vm: no powermetrics", Note{Kind: NoteTelemetry, Text: "telemetry unavailable on vm: no powermetrics"}.String(), "kept without a prefix")
}
