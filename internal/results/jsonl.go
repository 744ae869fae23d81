package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Record is one line of samples.jsonl: a sample and the cell run it came
// from. The records of one cell run (one repeat of one cell on one target)
// are appended together, so a run is in the file whole or, after a crash, is
// recognizably not.
type Record struct {
	SchemaVersion string `json:"schema_version"`
	// Cell is the runner's name for the cell, target included; it must stay
	// the same when the run is resumed, which is how finished cells are
	// recognized.
	Cell string `json:"cell"`
	// RunRecords is how many records the cell run produced: a repeat with
	// fewer in the file was torn by a crash and is not finished.
	RunRecords int `json:"run_records"`
	// Params are the cell's parameters (nil in records written before
	// schema 1.1, whose label holds them; see RunKey).
	Params *catalog.Params `json:"params,omitempty"`
	Sample
	// Metrics are the cell run's own measurements (bytes in and out,
	// compression ratio), the same on each of its records.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// HostView is what the host saw of the cell run (schema 1.3), the same
	// on each of its records; nil where it was not recorded.
	HostView   *hostview.Use `json:"host_view,omitempty"`
	RecordedAt time.Time     `json:"recorded_at"`
}

// damage says why r cannot be what was measured, "" when it can be: its
// sample's damage (Sample.damage), and a host view no read of the host
// gives (hostview.Use.Damage: times below zero, a vCPU that ran or waited
// longer than the cell run, more CPU time than the host had).
func (r Record) damage() string {
	why := r.Sample.damage()
	if r.HostView != nil {
		if hv := r.HostView.Damage(); hv != "" {
			if why != "" {
				why += "; "
			}
			why += "its host_view: " + hv
		}
	}
	return why
}

// SampleLog appends records to a samples.jsonl, each cell run synced to disk
// before Append returns. It is safe for concurrent use, but only one
// SampleLog (one process) may write a file at a time.
type SampleLog struct {
	mu   sync.Mutex
	path string
	f    *os.File
	// size is the length of the file's finished cell runs, all synced: where
	// a failed append is cut back to.
	size    int64
	records int
	// broken is set when a failed append could not be cut back, leaving
	// part of a line that later appends would bury in the middle.
	broken error
}

// OpenSampleLog opens path for appending, creating it if need be. A torn end
// left by a crash (see TornTail) is cut off first, so the next append starts
// on a clean line; it is returned so the caller can say so. A file damaged
// anywhere else, or from an unknown schema major, is refused.
func OpenSampleLog(path string) (*SampleLog, *TornTail, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644) //nolint:gosec // G304: the samples file of the results directory the user names
	if err != nil {
		return nil, nil, fmt.Errorf("open samples: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	recs, torn, err := parseSamples(path, b)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	l := &SampleLog{path: path, f: f, size: int64(len(b)), records: len(recs)}
	if torn != nil {
		if err := l.cutBack(torn.Offset); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("cut the torn end off %s: %w", path, err)
		}
	}
	if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, nil, err
	}
	return l, torn, nil
}

// Path is the file's name.
func (l *SampleLog) Path() string { return l.path }

// Append writes the records of one cell run, one JSON object per line, in
// one write, and syncs the file. Each record gets this build's
// SchemaVersion, RunRecords = len(records), and RecordedAt = now when unset.
// The records must share Cell, Target and Repeat. If the write or sync fails
// (a full disk), the file is cut back to its length before the call, so no
// partial line remains, and the error names the file, what is safe, and the
// cause (errors.Is finds syscall.ENOSPC).
func (l *SampleLog) Append(records ...Record) error {
	if len(records) == 0 {
		return nil
	}
	first := records[0]
	if first.Cell == "" {
		return fmt.Errorf("append to %s: record has no cell name", l.path)
	}
	now := time.Now().UTC()
	var buf []byte
	for i, r := range records {
		if r.Cell != first.Cell || r.Target != first.Target || r.Repeat != first.Repeat {
			return fmt.Errorf("append to %s: record %d is of cell %q %s repeat %d, not of cell %q %s repeat %d like the first: append one cell run at a time",
				l.path, i, r.Cell, r.Target, r.Repeat, first.Cell, first.Target, first.Repeat)
		}
		r.SchemaVersion = SchemaVersion
		r.RunRecords = len(records)
		if r.RecordedAt.IsZero() {
			r.RecordedAt = now
		}
		line, err := json.Marshal(r)
		if err != nil { // a NaN or Inf, which JSON cannot hold
			return fmt.Errorf("append cell %q repeat %d to %s: record %d (thread %d): %w", first.Cell, first.Repeat, l.path, i, r.Index, err)
		}
		// What a reader would refuse as damage is never written: the
		// whole file would be refused with it.
		if why := r.damage(); why != "" {
			return fmt.Errorf("append cell %q repeat %d to %s: record %d (thread %d) cannot be a measurement: %s; nothing of the cell run was written",
				first.Cell, first.Repeat, l.path, i, r.Index, why)
		}
		buf = append(append(buf, line...), '\n')
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return l.broken
	}
	if l.f == nil {
		return fmt.Errorf("append to %s: the sample log is closed", l.path)
	}
	// One write, so that only a crash in the middle of it can tear a line;
	// the sync makes the cell run survive a power cut once we return.
	_, err := l.f.Write(buf)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		what := fmt.Sprintf("append %d records of cell %q repeat %d to %s", len(records), first.Cell, first.Repeat, l.path)
		if cerr := l.cutBack(l.size); cerr != nil {
			l.broken = fmt.Errorf("%s: %w; cutting the file back to its %d bytes of finished cell runs also failed (%v), so its end may hold part of a line: "+
				"stop, free space, and resume the run, which cuts the torn end off", what, err, l.size, cerr)
			return l.broken
		}
		return fmt.Errorf("%s: %w; the file was cut back to the %d bytes (%d records) already safe on disk, with no partial line: free space (or fix the cause) and resume the run",
			what, err, l.size, l.records)
	}
	l.size += int64(len(buf))
	l.records += len(records)
	return nil
}

// cutBack truncates the file to size and syncs it.
func (l *SampleLog) cutBack(size int64) error {
	if err := l.f.Truncate(size); err != nil {
		return err
	}
	if err := l.f.Sync(); err != nil {
		return err
	}
	l.size = size
	return nil
}

// Close closes the file; every appended record is already on disk.
func (l *SampleLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("close %s: %w", l.path, err)
	}
	return nil
}

// TornTail is the unfinished end of a samples.jsonl that a crash in the
// middle of an append left (kill -9, power cut): a last line without its
// newline, and before it the whole records, if any, of the cell run that
// line belonged to; or whole records of a cell run that has fewer than it
// says. Readers leave it out; OpenSampleLog cuts it off. A whole last line
// that is not a record is not a torn tail but damage, refused as damage
// anywhere else is.
type TornTail struct {
	Path string
	// Line is the 1-based line the torn end starts on.
	Line int
	// Offset is where the finished cell runs end: the file's length once
	// the torn end is cut off.
	Offset int64
	// Bytes is the torn end's length.
	Bytes int64
	// Records counts whole records left out with it because their cell run
	// is incomplete.
	Records int
}

func (t *TornTail) String() string {
	s := fmt.Sprintf("%s: left out its unfinished end from line %d (%d bytes", t.Path, t.Line, t.Bytes)
	if t.Records > 0 {
		s += fmt.Sprintf(", %d whole records of a cell run the rest of which was lost", t.Records)
	}
	return s + "), written when the run was killed mid-write; that cell run will be measured again on resume"
}

// ReadSamples reads a samples.jsonl. It leaves out a torn end a crash may
// have left, returning it so the caller can say so, but refuses damage
// anywhere else, naming the line, and any record whose schema major it cannot
// read.
func ReadSamples(path string) ([]Record, *TornTail, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the samples file of the results directory the user names
	if err != nil {
		return nil, nil, fmt.Errorf("read samples: %w", err)
	}
	return parseSamples(path, b)
}

// recordKey is what makes a record unique in a samples.jsonl: one thread
// (index) of one phase of one cell run, by the cell's structured fields,
// never its label.
type recordKey struct {
	run   CellRunKey
	phase string
	index int
}

func parseSamples(path string, b []byte) ([]Record, *TornTail, error) {
	var recs []Record
	// seen maps each record's key to its line: a key twice means two runs
	// wrote into one directory at once, and their merged rates would be
	// false.
	type seenAt struct{ line, rec int }
	seen := map[recordKey]seenAt{}
	// The cell run being read: where it starts, and its records so far.
	var runOffset int64
	runLine, runStart := 1, 0
	var off int64
	for line := 1; off < int64(len(b)); line++ {
		rest := b[off:]
		end := bytes.IndexByte(rest, '\n')
		text := rest
		if end >= 0 {
			text = rest[:end]
		}
		if len(bytes.TrimSpace(text)) == 0 && end >= 0 {
			off += int64(end) + 1
			continue
		}
		if end < 0 {
			// Append writes a cell run in one write that ends with a
			// newline, so a last line without one, and only that, is an
			// append a crash cut short. A whole line, even the last, that
			// is not a record is damage.
			t := &TornTail{Path: path, Line: line, Offset: off, Bytes: int64(len(b)) - off}
			if runStart < len(recs) { // its cell run's earlier records
				t.Line, t.Offset, t.Bytes, t.Records = runLine, runOffset, int64(len(b))-runOffset, len(recs)-runStart
			}
			return recs[:runStart], t, nil
		}
		var r Record
		if err := json.Unmarshal(text, &r); err != nil {
			last := len(bytes.TrimSpace(rest[end+1:])) == 0
			return nil, nil, badLine(path, line, last, text, err)
		}
		if err := checkSchema(r.SchemaVersion); err != nil {
			return nil, nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		if why := r.damage(); why != "" {
			return nil, nil, fmt.Errorf("%s line %d: cell run %s thread %d%s is damaged: %s, which no measurement gives: "+
				"the line was changed after it was written; remove or repair it by hand", path, line, r.RunKey(), r.Index, phaseText(r.Phase), why)
		}
		if runStart < len(recs) {
			p := recs[runStart]
			if r.RunKey() != p.RunKey() {
				return nil, nil, fmt.Errorf("%s line %d: cell run %s (%q) has %d of its %d records before line %d starts another: "+
					"records were appended after a torn cell run without cutting it off; remove lines %d-%d by hand",
					path, runLine, p.RunKey(), p.Cell, len(recs)-runStart, p.RunRecords, line, runLine, line-1)
			}
		}
		if runStart == len(recs) {
			runOffset, runLine = off, line
		}
		k := recordKey{r.RunKey(), r.Phase, r.Index}
		if first, ok := seen[k]; ok {
			return nil, nil, twiceError(path, line, r, first.line, recs[first.rec].Cell)
		}
		seen[k] = seenAt{line, len(recs)}
		recs = append(recs, r)
		if len(recs)-runStart >= max(r.RunRecords, 1) {
			runStart = len(recs)
		}
		off += int64(end) + 1
	}
	if runStart < len(recs) { // every line whole, but the cell run is not
		return recs[:runStart], &TornTail{Path: path, Line: runLine, Offset: runOffset, Bytes: int64(len(b)) - runOffset, Records: len(recs) - runStart}, nil
	}
	return recs, nil, nil
}

// badLine is the error of a whole line (last or not) that is not a record:
// the schema's when the line names a newer major (which may have changed a
// field's type), else that the file is damaged.
func badLine(path string, line int, last bool, text []byte, err error) error {
	var head struct {
		SchemaVersion string `json:"schema_version"`
	}
	if json.Unmarshal(text, &head) == nil && head.SchemaVersion != "" {
		if serr := checkSchema(head.SchemaVersion); serr != nil {
			return fmt.Errorf("%s line %d: %w", path, line, serr)
		}
	}
	if last {
		return fmt.Errorf("%s line %d, its last, is not a sample record (%w) but is whole, ending in its newline: a crash while appending leaves a last line without one, "+
			"so the file is damaged, not torn; remove or repair that line by hand", path, line, err)
	}
	return fmt.Errorf("%s line %d is not a sample record (%w): the file is damaged before its end, which a crash while appending cannot do; "+
		"remove or repair that line by hand", path, line, err)
}

// twiceError is the error of record r on line, whose key a record on
// firstLine, of cell firstCell, had already.
func twiceError(path string, line int, r Record, firstLine int, firstCell string) error {
	labels := ""
	if firstCell != r.Cell {
		labels = fmt.Sprintf(", labelled %q there and %q here", firstCell, r.Cell)
	}
	return fmt.Errorf("%s line %d records cell run %s thread %d%s again (first on line %d%s): two runs wrote into this directory at once, or a cell run was copied, "+
		"and merged they would give false rates; keep one of the two cell runs (remove the other's lines by hand) and resume",
		path, line, r.RunKey(), r.Index, phaseText(r.Phase), firstLine, labels)
}

func phaseText(phase string) string {
	if phase == "" {
		return ""
	}
	return " phase " + phase
}

// FinishedRepeats returns, per cell, the repeats whose records are all
// present, ascending: what --resume skips.
func FinishedRepeats(records []Record) map[string][]int {
	type key struct {
		cell   string
		repeat int
	}
	count := map[key]int{}
	want := map[key]int{}
	for _, r := range records {
		k := key{r.Cell, r.Repeat}
		count[k]++
		want[k] = max(r.RunRecords, 1)
	}
	out := map[string][]int{}
	for k, n := range count {
		if n >= want[k] {
			out[k.cell] = append(out[k.cell], k.repeat)
		}
	}
	for _, reps := range out {
		sort.Ints(reps)
	}
	return out
}

// finishedCells returns, per cell, how many repeats finished. When repeats
// run in order 1, 2, ... these are the first ones; FinishedRepeats says which.
func finishedCells(records []Record) map[string]int {
	out := map[string]int{}
	for cell, reps := range FinishedRepeats(records) {
		out[cell] = len(reps)
	}
	return out
}

// Samples returns the records' samples, in file order.
func Samples(records []Record) []Sample {
	params := CellParams(records)
	out := make([]Sample, len(records))
	for i, r := range records {
		out[i] = r.Sample
		out[i].HostView = r.HostView
		out[i].CellParams = params[i]
	}
	return out
}

// CellParams are, per record, the parameters' text that tells its cell
// apart (analysis.CellKey.Params): its parameters as its series key writes
// them (catalog.ParamsText) where the records hold its workload (and
// phase) measured with more than one set of parameters at one target,
// class and thread count, so that without them two cells would be one;
// "" for every other record, so that a run whose cells differ in no
// parameter names its cells as it always did. (Parameters that change
// only with the thread count, loops scaled to the threads, tell no two
// cells apart and leave the workload as it was.)
func CellParams(records []Record) []string {
	type workloadPhase struct{ workload, phase string }
	type cell struct {
		workloadPhase
		target       string
		qos, threads int
	}
	texts := make([]string, len(records))
	sets := map[cell]string{}
	split := map[workloadPhase]bool{}
	for i, r := range records {
		k := r.RunKey()
		texts[i] = catalog.ParamsText(r.Workload, catalog.ParamsTaken(r.Workload, k.Params))
		c := cell{workloadPhase{r.Workload, r.Phase}, r.Target, r.QoS, r.Threads}
		if t, ok := sets[c]; ok && t != texts[i] {
			split[c.workloadPhase] = true
		}
		sets[c] = texts[i]
	}
	for i, r := range records {
		if !split[workloadPhase{r.Workload, r.Phase}] {
			texts[i] = ""
		}
	}
	return texts
}
