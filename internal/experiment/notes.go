package experiment

// NoteKind is what a run's note is, for those who show notes: they pick
// among them by kind (bench says its short cells' warnings under its
// table, not as the run goes), never by their words.
type NoteKind int

// The kinds of note.
const (
	// NoteInfo is said "note: ..." and kept without the prefix.
	NoteInfo NoteKind = iota
	// NoteHostQoS is what vm.host_qos did, said and kept "host_qos: ...".
	NoteHostQoS
	// NoteWarning is a warning, said and kept "warning: ...".
	NoteWarning
	// NoteShortCell is the warning of a fixed-work host cell run too
	// short for its class, not where its threads landed, to decide it.
	NoteShortCell
	// NoteTelemetry is a note about telemetry as a whole (a target that
	// could not sample, samples dropped), said and kept as NoteInfo's are,
	// and recorded besides in run.json's telemetry_notes, where the report
	// finds them.
	NoteTelemetry
)

// Warning says whether a note of kind k is a warning.
func (k NoteKind) Warning() bool { return k == NoteWarning || k == NoteShortCell }

// saidPrefix is what a note of kind k opens with when it is said.
func (k NoteKind) saidPrefix() string {
	switch {
	case k.Warning():
		return "warning: "
	case k == NoteHostQoS:
		return "host_qos: "
	}
	return "note: "
}

// Note is something the user should know about how a run was carried out
// (a value changed to fit the host, a class the vCPU threads got, a cell
// too short), with its kind.
type Note struct {
	Kind NoteKind
	// Text is what it says, without the prefix its kind gives it.
	Text string
}

// String is the note as run.json keeps it: a warning's (and host_qos's)
// with its prefix, a plain note's without.
func (n Note) String() string {
	if n.Kind == NoteInfo || n.Kind == NoteTelemetry {
		return n.Text
	}
	return n.Kind.saidPrefix() + n.Text
}
