package summary

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/qoslab/qoslab/internal/telemetry"
)

// TelemetryRow is one cell run and view of telemetry, as text.
type TelemetryRow struct {
	Cell, View, Sampler string
	Repeat, Samples     int
	Types, Power        string
	Threads             string
	Notes               string
}

// TelemetryRows renders telemetry summaries as text, one row each;
// anything not read says "not measured".
func TelemetryRows(ss []telemetry.CellSummary) []TelemetryRow {
	var out []TelemetryRow
	for _, s := range ss {
		out = append(out, TelemetryRow{
			Cell: s.Cell, View: s.View, Sampler: s.Sampler, Repeat: s.Repeat, Samples: s.Samples,
			Types: typesText(s.Types), Power: powerText(s), Threads: threadsText(s.Threads), Notes: strings.Join(s.Notes, "; "),
		})
	}
	return out
}

func optText(v *float64, format string) string {
	if v == nil {
		return "not measured"
	}
	return fmt.Sprintf(format, *v)
}

func typesText(ts []telemetry.TypeSummary) string {
	var parts []string
	for _, t := range ts {
		name := t.Type
		if name == "" {
			name = "all"
		}
		parts = append(parts, fmt.Sprintf("%s (%d CPUs): busy %s, %s", name, t.CPUs, optText(pct(t.MeanBusy), "%.0f%%"), optText(t.MeanMHz, "%.0f MHz")))
	}
	return strings.Join(parts, "; ")
}

func pct(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return telemetry.Float(*v * 100)
}

func powerText(s telemetry.CellSummary) string {
	if s.PackageW == nil && s.CPUW == nil {
		return "not measured"
	}
	var parts []string
	if s.PackageW != nil {
		parts = append(parts, fmt.Sprintf("package %.2f W", *s.PackageW))
	}
	if s.CPUW != nil {
		parts = append(parts, fmt.Sprintf("CPU %.2f W", *s.CPUW))
	}
	return strings.Join(parts, ", ")
}

func threadsText(ts []telemetry.ThreadSummary) string {
	var parts []string
	for _, t := range ts {
		cpus := make([]string, len(t.CPUs))
		for i, c := range t.CPUs {
			cpus[i] = fmt.Sprint(c)
		}
		p := fmt.Sprintf("%s (tid %d): busy %s on CPUs %s", t.Role, t.TID, optText(pct(t.MeanBusy), "%.0f%%"), strings.Join(cpus, ","))
		if t.Policy != "" {
			p += ", " + telemetry.PolicyText(t.Policy)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// telemetryView condenses every cell run's telemetry seen from one view of
// one target into one line of text.
type telemetryView struct {
	Target, View, Sampler string
	Runs, Samples         int
	// Types are the CPUs per core type: mean busy share and frequency over
	// every sample of every run.
	Types, Power string
	// Threads is the followed threads' mean busy share over the runs, and
	// its range from run to run.
	Threads string
}

// telemetryViews condenses summaries to one line per target and view, in
// the order they first appear; notes are the distinct notes, each once.
func telemetryViews(ss []telemetry.CellSummary) (views []telemetryView, notes []string) {
	var order []*viewAcc
	byKey := map[[2]string]*viewAcc{}
	var distinct distinctNotes
	for _, s := range ss {
		k := [2]string{s.Target, s.View}
		a := byKey[k]
		if a == nil {
			a = &viewAcc{v: telemetryView{Target: s.Target, View: s.View, Sampler: s.Sampler}, busy: map[string]*weighted{}, mhz: map[string]*weighted{}, cpus: map[string]int{}}
			byKey[k] = a
			order = append(order, a)
		}
		a.add(s)
		for _, n := range s.Notes {
			distinct.add(n)
		}
	}
	for _, a := range order {
		views = append(views, a.view())
	}
	return views, distinct.list()
}

// viewAcc gathers the cell runs of one target and view.
type viewAcc struct {
	v            telemetryView
	busy, mhz    map[string]*weighted // by core type
	cpus         map[string]int       // by core type
	types        []string             // in the order they first appear
	pkg, cpuw    weighted
	threads      weighted
	tmin, tmax   float64
	threadedRuns int
}

// add counts one cell run in, its means weighted by its samples; the
// threads' mean busy share is each run's, unweighted.
func (a *viewAcc) add(s telemetry.CellSummary) {
	a.v.Runs++
	a.v.Samples += s.Samples
	w := float64(max(s.Samples, 1))
	for _, t := range s.Types {
		if a.busy[t.Type] == nil {
			a.busy[t.Type], a.mhz[t.Type] = &weighted{}, &weighted{}
			a.types = append(a.types, t.Type)
		}
		a.busy[t.Type].add(t.MeanBusy, w)
		a.mhz[t.Type].add(t.MeanMHz, w)
		a.cpus[t.Type] = max(a.cpus[t.Type], t.CPUs)
	}
	a.pkg.add(s.PackageW, w)
	a.cpuw.add(s.CPUW, w)
	var run weighted
	for _, t := range s.Threads {
		run.add(t.MeanBusy, 1)
	}
	if m := run.value(); m != nil {
		a.threads.add(m, 1)
		if a.threadedRuns == 0 || *m < a.tmin {
			a.tmin = *m
		}
		a.tmax = max(a.tmax, *m)
		a.threadedRuns++
	}
}

// view is the line of text of the runs added.
func (a *viewAcc) view() telemetryView {
	v := a.v
	var types []telemetry.TypeSummary
	for _, t := range a.types {
		types = append(types, telemetry.TypeSummary{Type: t, CPUs: a.cpus[t], MeanBusy: a.busy[t].value(), MeanMHz: a.mhz[t].value()})
	}
	v.Types = typesText(types)
	v.Power = powerText(telemetry.CellSummary{PackageW: a.pkg.value(), CPUW: a.cpuw.value()})
	v.Threads = "none followed"
	if m := a.threads.value(); m != nil {
		v.Threads = fmt.Sprintf("mean busy %.0f%% (%.0f%%..%.0f%% from run to run)", *m*100, a.tmin*100, a.tmax*100)
	}
	return v
}

// distinctNotes counts notes that differ only in their numbers (a thread
// id, a count) as one note, said once with how often it came.
type distinctNotes struct {
	kinds []string // in the order they first came
	first map[string]string
	count map[string]int
}

func (d *distinctNotes) add(n string) {
	if d.first == nil {
		d.first, d.count = map[string]string{}, map[string]int{}
	}
	k := digits.ReplaceAllString(n, "N")
	if d.count[k] == 0 {
		d.kinds = append(d.kinds, k)
		d.first[k] = n
	}
	d.count[k]++
}

// list is each kind's first note, with how many more came like it.
func (d *distinctNotes) list() []string {
	var notes []string
	for _, k := range d.kinds {
		n := d.first[k]
		if c := d.count[k]; c > 1 && k != n {
			n += fmt.Sprintf(" (and %d more like it)", c-1)
		}
		notes = append(notes, n)
	}
	return notes
}

var digits = regexp.MustCompile(`\d+`)

// weighted is a weighted mean of the values that were measured.
type weighted struct{ sum, w float64 }

func (m *weighted) add(v *float64, w float64) {
	if v != nil {
		m.sum += *v * w
		m.w += w
	}
}

func (m weighted) value() *float64 {
	if m.w == 0 {
		return nil
	}
	return telemetry.Float(m.sum / m.w)
}
