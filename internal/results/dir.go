package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/contention"
	"github.com/qoslab/qoslab/internal/version"
)

// The files of a results directory (docs/design.md, "Results").
const (
	RunFile         = "run.json"
	SamplesFile     = "samples.jsonl"
	TelemetryFile   = "telemetry.jsonl"
	SummaryJSONFile = "summary.json"
	SummaryCSVFile  = "summary.csv"
	SummaryMDFile   = "summary.md"
	PlotsDir        = "plots"
	ReportFile      = "report.html"
	// VMConsoleFile keeps the console log of every VM a run booted.
	VMConsoleFile = "vm-console.log"
	// TraceFile is where the run's wall time went, step by step (run
	// --trace; internal/runtrace).
	TraceFile = "trace.jsonl"
)

// timestampLayout is the UTC timestamp in a results directory's name: basic
// ISO 8601, so names sort by start time and hold no colons (which macOS
// Finder and Windows shares show or take badly).
const timestampLayout = "20060102T150405Z"

// Run is run.json: what was run, by which qoslab, on what, and how it ended.
type Run struct {
	SchemaVersion string `json:"schema_version"`
	ToolVersion   string `json:"tool_version"`
	Name          string `json:"name"`
	// Spec is the experiment spec as applied (defaults filled in).
	Spec RunSpec `json:"spec"`
	// SpecFile is Spec as a spec file, in the spec's own keys and units
	// (spec.Encode: duration: 1s where Spec has duration_ns), so a run can
	// be repeated from its record with `qoslab run --spec`. A copy, not
	// more: Spec is what readers decode, and a run recorded before it (or
	// resumed by an older build, which drops it) has none.
	SpecFile string `json:"spec_file,omitempty"`
	Seed     uint64 `json:"seed"`
	// Planned is how many timed cell runs the plan has (0 in run.json
	// files written before it was recorded).
	Planned int       `json:"planned,omitempty"`
	Started time.Time `json:"started"`
	// Finished is when the run last ended, with or without an error; null
	// while it runs and after a crash.
	Finished *time.Time `json:"finished"`
	// Targets maps a target's name ("host", "vm") to its agent's Info.
	Targets Targets `json:"targets"`
	// Machines describes the VMs as the host sees them.
	Machines Machines `json:"machines,omitzero"`
	// Contention is the host's spinners as the last session ran them:
	// what was asked, how many, the CPU each was pinned to, its class.
	Contention Recorded[contention.Contention] `json:"contention,omitzero"`
	// Scheduling is how qoslab's own processes were scheduled as the last
	// session ran: the controller's policy, nice and cgroup CPU limit, and
	// the class each child (host agent, hypervisor, spinners) started at.
	Scheduling Recorded[Scheduling] `json:"scheduling,omitzero"`
	Notes      []string             `json:"notes,omitempty"`
	// TelemetryNotes are the notes about telemetry as a whole (a target
	// that could not sample, and why), also among Notes: the report lists
	// them beside the telemetry. Runs recorded before results schema 1.5
	// have none here.
	TelemetryNotes []string `json:"telemetry_notes,omitempty"`
	// Error is why the run stopped before finishing every cell; empty when
	// it did not.
	Error string `json:"error,omitempty"`
	// Interrupted is when a signal stopped the run (Error says which);
	// Finished stays null, as the run did not finish.
	Interrupted *time.Time `json:"interrupted,omitempty"`
	// Resumed lists when the run was taken up again with --resume.
	Resumed []time.Time `json:"resumed,omitempty"`
	// Looks are the blocks of repeats the run added to its plan while a
	// verdict was undecided (spec max_repeats), in order; each is recorded
	// before its first cell run, so a resume finishes it. Empty when the
	// planned cells decided every verdict, or looks were off.
	Looks []Look `json:"looks,omitempty"`
}

// Look is one block of repeats a run added, and the look (the verdicts
// decided again) after it. The planned cells are look 1; the first block
// leads to look 2.
type Look struct {
	// Index is the look the block leads to; Of the most looks the run's
	// cap allows.
	Index int `json:"index"`
	Of    int `json:"of"`
	// Seed seeds the block's interleaved order, as Run.Seed the plan's.
	Seed uint64 `json:"seed"`
	// Blocks are the cells each undecided verdict asked for.
	Blocks []LookBlock `json:"blocks"`
	// Added counts the block's timed cell runs; Planned the plan's with
	// this block and every one before it.
	Added   int `json:"added"`
	Planned int `json:"planned"`
	// At is when the block was planned.
	At time.Time `json:"at"`
}

// LookBlock is the cells one undecided verdict asked more repeats of:
// repeats From..To of its workload at its classes and thread counts, on
// its targets.
type LookBlock struct {
	Workload string   `json:"workload"`
	Phase    string   `json:"phase,omitempty"`
	QoS      []int    `json:"qos"`
	Threads  []int    `json:"threads"`
	Targets  []string `json:"targets"`
	From     int      `json:"from"`
	To       int      `json:"to"`
	// Reason is why the verdict was undecided when the block was planned.
	Reason string `json:"reason,omitempty"`
}

// Complete reports whether the run ended having finished every cell.
func (r *Run) Complete() bool { return r.Finished != nil && r.Error == "" }

// Dir is one run's results directory. It is not safe for concurrent use.
type Dir struct {
	Path string
	// Run is run.json as last saved or read; change it and call SaveRun.
	Run Run
	// unlock releases the lock Lock took; nil when not held.
	unlock func()
}

// ErrComplete is a run that already finished every cell: resuming it has
// nothing left to measure.
var ErrComplete = errors.New("the run finished every cell")

// Unlock releases the lock Lock took, if it holds one.
func (d *Dir) Unlock() {
	if d != nil && d.unlock != nil {
		d.unlock()
		d.unlock = nil
	}
}

// Create makes the results directory <parent>/<name>-<UTC timestamp>/ for a
// run starting at now and writes its run.json. It never reuses a directory:
// finishing an interrupted run is Open and Resume.
func Create(parent, name string, now time.Time) (*Dir, error) {
	if err := checkRunName(name); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil { //nolint:gosec // G301: results are readable by others, as the files in them (0644)
		return nil, fmt.Errorf("create results directory in %s: %w", parent, err)
	}
	now = now.UTC()
	path := filepath.Join(parent, name+"-"+now.Format(timestampLayout))
	if err := os.Mkdir(path, 0o755); err != nil { //nolint:gosec // G301: results are readable by others, as the files in them (0644)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("results directory %s already exists (another run named %q started in the same second?): wait a second and start again, or use --resume %s to finish that run", path, name, path)
		}
		return nil, fmt.Errorf("create results directory: %w", err)
	}
	d := &Dir{Path: path, Run: Run{
		SchemaVersion: SchemaVersion, ToolVersion: version.String(), Name: name,
		Started: now, Targets: Targets{},
	}}
	// The new name must survive a crash as well as the files in it.
	if err := atomicfile.SyncDir(parent); err != nil {
		return nil, fmt.Errorf("create results directory %s: %w", path, err)
	}
	if err := d.SaveRun(); err != nil {
		os.Remove(path) // empty still: leave no directory List would call broken
		return nil, err
	}
	return d, nil
}

func checkRunName(name string) error {
	ok := name != "" && name[0] != '.' && name[0] != '-'
	for _, c := range name {
		if !ok {
			break
		}
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("run name %q cannot name a results directory: use letters, digits, '.', '_' and '-', not first '.' or '-'", name)
	}
	return nil
}

// Open reads the results directory at path, for --resume or to show it. It
// refuses a directory written with a schema major this build cannot read.
func Open(path string) (*Dir, error) {
	b, err := os.ReadFile(filepath.Join(path, RunFile)) //nolint:gosec // G304: the run file of the results directory the user names
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(path); serr != nil {
			return nil, fmt.Errorf("open results %s: %w", path, serr)
		}
		return nil, fmt.Errorf("open results %s: it has no %s, so it is not a qoslab results directory (or its run crashed as it began)", path, RunFile)
	}
	if err != nil {
		return nil, fmt.Errorf("open results %s: %w", path, err)
	}
	// Check the version before anything else: a newer major may have
	// changed what the other fields mean.
	var head struct {
		SchemaVersion string `json:"schema_version"`
		ToolVersion   string `json:"tool_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("open results %s: %s is not a qoslab run description: %w", path, RunFile, err)
	}
	if err := checkSchema(head.SchemaVersion); err != nil {
		return nil, fmt.Errorf("open results %s (written by qoslab %s): %w", path, orUnknown(head.ToolVersion), err)
	}
	run, err := decodeRun(b)
	if err != nil {
		return nil, fmt.Errorf("open results %s: %s: %w", path, filepath.Join(path, RunFile), err)
	}
	d := &Dir{Path: path, Run: run}
	if d.Run.Targets == nil { // so that a resumed run can add its targets
		d.Run.Targets = Targets{}
	}
	return d, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "of unknown version"
	}
	return s
}

// SaveRun replaces run.json with d.Run, atomically: a crash leaves the old
// file or the new one, never part of either.
func (d *Dir) SaveRun() error {
	b, err := json.MarshalIndent(&d.Run, "", "  ")
	if err != nil {
		return fmt.Errorf("save %s: %w", filepath.Join(d.Path, RunFile), err)
	}
	return atomicfile.Write(filepath.Join(d.Path, RunFile), append(b, '\n'))
}

// Finish records that the run ended at now, with runErr saying why it
// stopped early (nil when every cell finished), and saves run.json.
func (d *Dir) Finish(now time.Time, runErr error) error {
	t := now.UTC()
	d.Run.Finished = &t
	d.Run.Error = ""
	if runErr != nil {
		d.Run.Error = runErr.Error()
	}
	return d.SaveRun()
}

// Interrupted records that the run was stopped from outside at now (why:
// "interrupted by SIGTERM") with cells still to measure: it is not
// finished, and saves run.json.
func (d *Dir) Interrupted(now time.Time, why string) error {
	t := now.UTC()
	d.Run.Finished = nil
	d.Run.Interrupted = &t
	d.Run.Error = why
	return d.SaveRun()
}

// Resume records that the run is taken up again at now: it is unfinished
// again, and how it stopped before moves to its notes. held is what its
// samples hold (Assess): a run whose samples hold every planned cell run
// and that recorded its end is refused with ErrComplete, but one that
// recorded its end while its samples lack cell runs (a torn last line, a
// cell run deleted) is taken up again, to measure them. It refuses damaged
// samples, and a run written with a newer schema minor, whose fields this
// build would drop when it saves run.json.
func (d *Dir) Resume(now time.Time, held Completeness) error {
	if held.State == StateDamaged {
		return fmt.Errorf("resume %s: %s", d.Path, held.Problem)
	}
	if d.Run.Complete() && held.State == StateComplete {
		return fmt.Errorf("resume %s: %w at %s; there is nothing left to measure", d.Path, ErrComplete, d.Run.Finished.Format(time.RFC3339))
	}
	if newerMinor(d.Run.SchemaVersion) {
		return fmt.Errorf("resume %s: it was written with result schema %s, newer than this qoslab's %s: resume it with qoslab %s or later", d.Path, d.Run.SchemaVersion, SchemaVersion, orUnknown(d.Run.ToolVersion))
	}
	now = now.UTC()
	switch {
	case d.Run.Complete():
		d.Run.Notes = append(d.Run.Notes, fmt.Sprintf("finished at %s, but %s holds %d of its %d cell runs%s: the rest measured again",
			d.Run.Finished.Format(time.RFC3339), SamplesFile, held.Measured, held.Planned, tornText(held.Torn)))
	case d.Run.Error != "" && d.Run.Finished != nil:
		d.Run.Notes = append(d.Run.Notes, fmt.Sprintf("stopped at %s: %s", d.Run.Finished.Format(time.RFC3339), d.Run.Error))
	case d.Run.Interrupted != nil:
		d.Run.Notes = append(d.Run.Notes, fmt.Sprintf("stopped at %s: %s", d.Run.Interrupted.Format(time.RFC3339), d.Run.Error))
	case d.Run.Finished == nil:
		d.Run.Notes = append(d.Run.Notes, "stopped without recording why (a crash or kill)")
	}
	if v := version.String(); v != d.Run.ToolVersion {
		d.Run.Notes = append(d.Run.Notes, fmt.Sprintf("resumed at %s by qoslab %s (it was started by qoslab %s)", now.Format(time.RFC3339), v, orUnknown(d.Run.ToolVersion)))
		d.Run.ToolVersion = v
	}
	d.Run.SchemaVersion = SchemaVersion
	d.Run.Finished = nil
	d.Run.Interrupted = nil
	d.Run.Error = ""
	d.Run.Resumed = append(d.Run.Resumed, now)
	return d.SaveRun()
}

func tornText(t *TornTail) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf(" (its end from line %d is torn)", t.Line)
}

// newerMinor reports whether v, of this build's major, has a newer minor.
func newerMinor(v string) bool {
	_, minor, _ := strings.Cut(v, ".")
	_, ours, _ := strings.Cut(SchemaVersion, ".")
	m, err1 := strconv.Atoi(minor)
	o, err2 := strconv.Atoi(ours)
	return err1 == nil && err2 == nil && m > o
}

// OpenSamples opens the directory's samples.jsonl for appending (see
// OpenSampleLog).
func (d *Dir) OpenSamples() (*SampleLog, *TornTail, error) {
	return OpenSampleLog(filepath.Join(d.Path, SamplesFile))
}

// ReadSamples reads the directory's samples.jsonl (see ReadSamples); a run
// that has not finished a cell yet may have none, which gives no records.
func (d *Dir) ReadSamples() ([]Record, *TornTail, error) {
	recs, torn, err := ReadSamples(filepath.Join(d.Path, SamplesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	return recs, torn, err
}

// Entry is one results directory as `qoslab results list` shows it.
type Entry struct {
	Path string
	// Run is its run.json; zero when that could not be read (see Err).
	Run Run
	// Dir is the directory as Open read it; nil when it could not.
	Dir *Dir
	// SpecName is the name inside the spec, when it has one.
	SpecName string
	// Samples counts the records of finished cell runs in samples.jsonl.
	Samples int
	// Torn is the unfinished end of samples.jsonl a crash left, if any.
	Torn *TornTail
	// Err says why the directory could not be read in full; nil when it
	// could.
	Err error
	// Holder is the process running in the directory (it holds its lock);
	// nil when none does.
	Holder *Holder
	// Completeness is what its samples hold against its plan.
	Completeness Completeness
}

// State says in a few words how the run stands, from its samples (see
// Completeness), never from run.json alone: running, complete, partial
// (and how to finish it) or damaged (and why).
func (e Entry) State() string {
	switch {
	case e.Err != nil:
		return StateDamaged + ": " + e.Err.Error()
	case e.Holder != nil:
		return fmt.Sprintf("running (%s)", e.Holder)
	case e.Completeness.State == StateDamaged:
		return e.Completeness.Text()
	case e.Run.Complete() && e.Completeness.State == StateComplete:
		return StateComplete
	}
	return e.Completeness.Text() + "; resume with qoslab run --resume " + e.Path
}

// Paths lists the results directories under parent, oldest first; none
// when it cannot be read.
func Paths(parent string) []string {
	entries, _ := List(parent)
	var out []string
	for _, e := range entries {
		out = append(out, e.Path)
	}
	return out
}

// Listing is an Entry as `qoslab results list --json` prints it.
type Listing struct {
	Path     string     `json:"path"`
	Spec     string     `json:"spec"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished"`
	// Complete says the samples hold every planned cell run and run.json
	// says the run ended (Entry.Completeness).
	Complete bool `json:"complete"`
	// Running is true while a qoslab runs in the directory; PID is its.
	Running bool `json:"running"`
	PID     int  `json:"pid,omitempty"`
	Samples int  `json:"samples"`
	// Error is why the run stopped early, or why the directory could not
	// be read.
	Error string `json:"error,omitempty"`
}

// Listing is the entry for scripts.
func (e Entry) Listing() Listing {
	l := Listing{Path: e.Path, Spec: e.SpecName, Started: e.Run.Started, Finished: e.Run.Finished, Samples: e.Samples, Error: e.Run.Error}
	l.Complete = e.Err == nil && e.Holder == nil && e.Run.Complete() && e.Completeness.State == StateComplete
	switch {
	case e.Err != nil:
		l.Error = e.Err.Error()
	case e.Holder != nil:
		l.Running, l.PID = true, e.Holder.PID
	case e.Completeness.State == StateDamaged:
		l.Error = e.Completeness.Problem
	}
	return l
}

// List returns the results directories under parent, oldest first. A
// directory that cannot be read in full is listed with Err set rather than
// failing the list; hidden directories are skipped. Each one's samples are
// counted against the planned count in its run.json (ListPlanned sets
// them against the plan itself).
func List(parent string) ([]Entry, error) { return ListPlanned(parent, nil) }

// ListPlanned is List with each directory's samples set against its plan:
// planned gives the keys of its planned cell runs, nil when it cannot.
func ListPlanned(parent string, planned func(*Dir) []CellRunKey) ([]Entry, error) {
	des, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("list results in %s: %w", parent, err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		e := Entry{Path: filepath.Join(parent, de.Name())}
		if h, ok := Running(e.Path); ok {
			e.Holder = &h
		}
		d, err := Open(e.Path)
		if err != nil {
			e.Err = err
			out = append(out, e)
			continue
		}
		e.Run, e.Dir = d.Run, d
		e.SpecName = d.Run.Spec.Value().Name
		recs, torn, err := d.ReadSamples()
		e.Samples, e.Torn = len(recs), torn
		var plan []CellRunKey
		if planned != nil {
			plan = planned(d)
		}
		e.Completeness = Assess(plan, d.Run.Planned, recs, torn, err)
		if err != nil {
			e.Err = err
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Run.Started.Equal(out[j].Run.Started) {
			return out[i].Run.Started.Before(out[j].Run.Started)
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}
