package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/units"
)

// Loaded is a results directory read whole, once: what its summaries,
// report, charts and comparisons are made from. A run still being written,
// or one that crashed, loads too.
type Loaded struct {
	*Dir
	Records []Record
	Samples []Sample
	// Torn is the unfinished end of samples.jsonl a crash left, if any.
	Torn      *TornTail
	Telemetry []telemetry.Sample
	// Notes are what a reader should know about the data itself: a torn
	// end, telemetry lines that could not be read.
	Notes []string
}

// Load reads the results directory at path: run.json, samples.jsonl and
// telemetry.jsonl (either may be missing while a run has not finished a
// cell). It refuses what Open refuses.
func Load(path string) (*Loaded, error) {
	d, err := Open(path)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Dir: d}
	if l.Records, l.Torn, err = d.ReadSamples(); err != nil {
		return nil, err
	}
	l.Samples = Samples(l.Records)
	if l.Torn != nil {
		l.Notes = append(l.Notes, SamplesFile+": "+l.Torn.String())
	}
	var tnotes []string
	l.Telemetry, tnotes, err = telemetry.ReadFile(filepath.Join(d.Path, TelemetryFile))
	if err != nil {
		return nil, err
	}
	l.Notes = append(l.Notes, tnotes...)
	return l, nil
}

// Cells summarizes the loaded samples into cells, sorted as
// analysis.SortCells does.
func (l *Loaded) Cells() []analysis.Cell { return analysis.SortCells(Cells(l.Samples)) }

// TelemetryNotes are the run's notes about telemetry (a target that could
// not sample, and how to enable it), as run.json recorded them apart.
func (l *Loaded) TelemetryNotes() []string { return l.Run.TelemetryNotes }

// Latest is the results directory under parent whose run started last.
func Latest(parent string) (string, error) {
	entries, err := List(parent)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var runs []Entry
	for _, e := range entries {
		if e.Err == nil {
			runs = append(runs, e)
		}
	}
	if len(runs) == 0 {
		return "", fmt.Errorf("no results in %s: make some with `qoslab run`, or give the results location with --results", parent)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Run.Started.Before(runs[j].Run.Started) })
	return runs[len(runs)-1].Path, nil
}

// Named is the results directory name stands for: name itself when it
// exists (a path), else a bare run name (no directory in it) under parent,
// the results location, as `results list` and completion show them. A
// name that is neither is given back as it is, for its reader to say what
// is wrong with it.
func Named(parent, name string) string {
	if _, err := os.Stat(name); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return name
	}
	if filepath.Base(name) == name && parent != "" {
		under := filepath.Join(parent, name)
		if _, err := os.Stat(under); err == nil {
			return under
		}
	}
	return name
}

// hasFile reports whether the results directory holds the named file.
func (d *Dir) hasFile(name string) bool {
	_, err := os.Stat(filepath.Join(d.Path, name))
	return !errors.Is(err, fs.ErrNotExist)
}

// HasSummary reports whether the run's summary.md was written.
func (d *Dir) HasSummary() bool { return d.hasFile(SummaryMDFile) }

// Completeness is what the loaded samples hold against the run's planned
// count (Assess without the plan: results knows no plans; the CLI's
// experiment.Assess sets them against the plan itself).
func (l *Loaded) Completeness() Completeness {
	return Assess(nil, l.Run.Planned, l.Records, l.Torn, nil)
}

// Partial says, for a run whose samples do not hold every planned cell
// run, how far it got and how to finish it: "partial: 20 of 32 cell runs
// measured (interrupted by SIGTERM); finish it with qoslab run --resume
// DIR". Empty for a complete run. It goes by the samples, not by what
// run.json says: a run that finished and lost a cell run since is partial.
func (l *Loaded) Partial() string {
	c := l.Completeness()
	if l.Run.Complete() && c.State == StateComplete {
		return ""
	}
	if c.State == StateDamaged {
		return c.Text()
	}
	of := ""
	if l.Run.Planned > 0 {
		of = fmt.Sprintf(" of %d", l.Run.Planned)
	}
	why := ""
	switch {
	case l.Run.Complete():
		why = fmt.Sprintf(" (the run finished, but %s has lost %s since%s)", SamplesFile, units.Plural(c.Planned-c.Measured, "cell run"), tornText(c.Torn))
		return fmt.Sprintf("partial: %d%s cell runs measured%s; measure the rest again with qoslab run --resume %s", c.Measured, of, why, l.Path)
	case l.Run.Error != "":
		why = " (" + l.Run.Error + ")"
	case l.Run.Finished == nil:
		if h, ok := Running(l.Path); ok {
			return fmt.Sprintf("partial: %d%s cell runs measured so far; the run is still going (%s)", c.Measured, of, h)
		}
		why = " (it stopped without recording why: a crash or a kill)"
	}
	return fmt.Sprintf("partial: %d%s cell runs measured%s; finish it with qoslab run --resume %s", c.Measured, of, why, l.Path)
}
