package results

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// CellRunKey names one timed run of one cell by the cell's structured
// fields: target, workload, class, threads, parameters and repeat. It, not
// the free-text Cell label, decides which cell runs a samples.jsonl holds,
// which are there twice and which --resume skips: a label is text a hand
// edit can change without changing what was measured.
type CellRunKey struct {
	catalog.SeriesKey
	Repeat int
}

// String is the key's text: the series key's, then "repeat=N".
func (k CellRunKey) String() string {
	return fmt.Sprintf("%s repeat=%d", k.SeriesKey, k.Repeat)
}

// RunKey is the cell run r belongs to. A record written before records
// carried their parameters (schema 1.0) has them only in its Cell label,
// as the runner wrote it; they are read from there, for such records
// alone.
func (r Record) RunKey() CellRunKey {
	var p catalog.Params
	if r.Params != nil {
		p = *r.Params
	} else {
		label, _, _ := catalog.ParseSeriesKey(r.Cell)
		p = label.Params
	}
	if p.Duration == 0 {
		p.Duration = time.Duration(r.DurationNs)
	}
	return CellRunKey{SeriesKey: catalog.SeriesKey{Target: r.Target, Workload: r.Workload, QoS: r.QoS, Threads: r.Threads, Params: p}, Repeat: r.Repeat}
}

// FinishedRuns returns the cell runs whose every record is present: what
// --resume skips.
func FinishedRuns(records []Record) map[CellRunKey]bool {
	count := map[CellRunKey]int{}
	want := map[CellRunKey]int{}
	for _, r := range records {
		k := r.RunKey()
		count[k]++
		want[k] = max(r.RunRecords, 1)
	}
	out := map[CellRunKey]bool{}
	for k, n := range count {
		if n >= want[k] {
			out[k] = true
		}
	}
	return out
}

// The states of a run's samples (Completeness.State).
const (
	StateComplete = "complete"
	StatePartial  = "partial"
	StateDamaged  = "damaged"
)

// Completeness is what a run's samples hold against its plan, read from
// samples.jsonl itself, never from what run.json says of how the run ended.
type Completeness struct {
	// State is StateComplete (every planned cell run is whole in the
	// samples), StatePartial (some are missing, or a torn end left one
	// out: --resume measures them) or StateDamaged (the samples cannot be
	// read as they are, or hold cell runs the plan does not have).
	State string `json:"state"`
	// Planned and Measured count the plan's cell runs and those whole in
	// the samples; Unplanned the cell runs the samples hold that the plan
	// does not.
	Planned   int `json:"planned"`
	Measured  int `json:"measured"`
	Unplanned int `json:"unplanned,omitempty"`
	// Missing names the first planned cell runs the samples lack, at most
	// maxNamed of them.
	Missing []string `json:"missing,omitempty"`
	// Torn is the unfinished end of samples.jsonl a crash left, if any.
	Torn *TornTail `json:"-"`
	// Problem says why the samples are damaged.
	Problem string `json:"problem,omitempty"`
}

// maxNamed is how many missing or unplanned cell runs Completeness names.
const maxNamed = 3

// Assess sets a run's samples (records, a torn end, or the error reading
// them gave) against its plan: the keys of every timed cell run planned.
// Without the plan (planned nil: a spec that cannot be read) it counts
// against plannedCount (run.json's planned), and cannot tell a missing
// cell run from another's extra one.
func Assess(planned []CellRunKey, plannedCount int, records []Record, torn *TornTail, readErr error) Completeness {
	if readErr != nil {
		return Completeness{State: StateDamaged, Planned: max(len(planned), plannedCount), Problem: readErr.Error()}
	}
	finished := FinishedRuns(records)
	c := Completeness{State: StateComplete, Torn: torn}
	var unplanned []string
	if planned == nil {
		c.Planned, c.Measured = plannedCount, len(finished)
		if plannedCount == 0 {
			// A run.json from before the plan's size was recorded: the
			// samples are all there is to go by.
			c.Planned = c.Measured
		}
		if c.Measured > c.Planned {
			c.Unplanned = c.Measured - c.Planned
			c.Measured = c.Planned
		}
	} else {
		inPlan := make(map[CellRunKey]bool, len(planned))
		for _, k := range planned {
			inPlan[k] = true
			if finished[k] {
				c.Measured++
			} else if len(c.Missing) < maxNamed {
				c.Missing = append(c.Missing, k.String())
			}
		}
		c.Planned = len(inPlan)
		seen := map[CellRunKey]bool{}
		for _, r := range records {
			if k := r.RunKey(); !inPlan[k] && !seen[k] {
				seen[k] = true
				unplanned = append(unplanned, k.String())
			}
		}
		sort.Strings(unplanned)
		c.Unplanned = len(unplanned)
	}
	switch {
	case c.Unplanned > 0:
		c.State = StateDamaged
		c.Problem = fmt.Sprintf("samples.jsonl holds %d cell runs the run's plan does not have", c.Unplanned)
		if len(unplanned) > 0 {
			c.Problem += " (" + strings.Join(unplanned[:min(len(unplanned), maxNamed)], "; ") + ")"
		}
		c.Problem += ": they were not measured by this run; remove their lines by hand"
	case c.Measured < c.Planned || torn != nil:
		c.State = StatePartial
	}
	return c
}

// Text says the completeness in a few words: "complete", "partial: 66 of
// 72 cell runs measured", "damaged: ...".
func (c Completeness) Text() string {
	switch c.State {
	case StateComplete:
		return StateComplete
	case StatePartial:
		s := fmt.Sprintf("%s: %d of %d cell runs measured", StatePartial, c.Measured, c.Planned)
		if c.Torn != nil {
			s += ", a torn end left out"
		}
		return s
	}
	return StateDamaged + ": " + c.Problem
}
