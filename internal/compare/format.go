package compare

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/units"
)

// Write writes the comparison in format, one of render.Formats or render.FormatAliases
// ("" is render.FormatText).
func Write(w io.Writer, format string, c *Comparison) error {
	switch render.FormatOf(cmp.Or(format, render.FormatText)) {
	case render.FormatText:
		return WriteText(w, c, TextWidth, false)
	case render.FormatMarkdown:
		return WriteMarkdown(w, c)
	case render.FormatCSV:
		return WriteCSV(w, c)
	case render.FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	return fmt.Errorf("unknown format %q: allowed %s (or %s)", format, strings.Join(render.Formats, ", "), strings.Join(slices.Sorted(maps.Keys(render.FormatAliases)), ", "))
}

// Section is one block of the table: the verdict per machine, a
// workload's cells and geometric means, or the findings.
type Section struct {
	// Title is Name with About in parentheses, the whole heading; Markdown
	// puts About in a paragraph of its own, under a short heading.
	Title, Name, About string
	// Lead, when set, is said under the heading, above the rows; Keys
	// after it, one a line, what each short key in the rows stands for
	// (set where a text format abbreviated a column to fit its width);
	// Notes below the rows.
	Lead   string
	Keys   []string
	Notes  []string
	Header []string
	Rows   [][]string
	// Numeric marks the columns to right-align.
	Numeric []bool
}

// newSection starts a section headed name (about).
func newSection(name, about string, header []string) *Section {
	return &Section{Title: name + " (" + about + ")", Name: name, About: about, Header: header, Numeric: make([]bool, len(header))}
}

// The layouts of the text tables (Comparison.Layout): LayoutColumns sets
// the runs side by side, a column per run and its change against the
// baseline after it; LayoutRows gives each run a row per cell, with its
// change and mark in the row, so that the width does not grow with the
// number of runs. Without one, columns up to MaxColumns runs, rows beyond.
const (
	LayoutRows    = "rows"
	LayoutColumns = "columns"
	MaxColumns    = 4
)

// Layouts are the layouts --layout takes.
var Layouts = []string{LayoutRows, LayoutColumns}

// Rowwise reports whether the tables give each run its own rows.
func (c *Comparison) Rowwise() bool {
	switch c.Layout {
	case LayoutRows:
		return true
	case LayoutColumns:
		return false
	}
	return len(c.Columns) > MaxColumns
}

// Legend lines: one per run, the first the baseline.
func (c *Comparison) Legend() []string {
	var out []string
	for i, col := range c.Columns {
		role := ""
		if i == 0 {
			role = " (baseline)"
		}
		parts := []string{col.Dir, "started " + col.Started}
		if col.Quick {
			parts = append(parts, "quick (loops and sizes shrunk: a smoke run)")
		}
		if col.Machine != "" {
			parts = append(parts, col.Machine)
		}
		if col.OS != "" {
			parts = append(parts, col.OS)
		}
		parts = append(parts, col.State)
		if t := render.OtherWork(col.OtherWork); t != "" {
			parts = append(parts, "other work on the host took "+t)
		}
		out = append(out, c.runKey(i)+fmt.Sprintf("%s%s: %s", col.Label, role, strings.Join(parts, "; ")))
	}
	for j, m := range c.Missing {
		out = append(out, c.runKey(len(c.Columns)+j)+missingText(m))
	}
	return out
}

// runName is how the tables name run i (a run that did not come back
// after the columns, Missing's): its heading, or, where a text format
// keys the runs to fit its width, "#1", "#2", ..., which the legend
// gives in full.
func (c *Comparison) runName(i int) string {
	switch {
	case c.keyRuns:
		return "#" + strconv.Itoa(i+1)
	case i < len(c.Columns):
		return c.Columns[i].Heading()
	}
	return c.Missing[i-len(c.Columns)].Label
}

// runKey is the start of run i's legend line where the tables key the
// runs: "#1 "; "" where they name them.
func (c *Comparison) runKey(i int) string {
	if !c.keyRuns {
		return ""
	}
	return "#" + strconv.Itoa(i+1) + " "
}

// missingText is the legend line of a run that is not there: "gone: did
// not come back (unreachable)".
func missingText(m Missing) string {
	return fmt.Sprintf("%s: did not come back (%s); it has no column", m.Label, m.Reason)
}

// DifferenceText says, above the rows, whether the runs differ in what
// shapes their numbers.
func (c *Comparison) DifferenceText() string {
	if len(c.Differences) == 0 {
		return "Every run has the same " + strings.Join(shapeKeys, ", ") + " and work per cell."
	}
	return "The runs differ in what shapes the numbers: a change below may come from these, not from the machines:"
}

// Sections renders the comparison's tables as text blocks: one per
// workload (its cells, then a geometric mean per target), then the
// findings; in the layout Rowwise says.
func (c *Comparison) Sections() []Section {
	var out []Section
	var sec *Section
	// A section per workload, and per set of its parameters where its cells
	// carry them (analysis.CellKey.Params); the workload's geometric means
	// close its last.
	type sectionKey struct{ workload, params string }
	flush := func(workload string, last bool) {
		if sec == nil {
			return
		}
		for _, g := range c.Geomeans {
			if last && g.Workload == workload {
				sec.Rows = append(sec.Rows, c.spread(c.geomeanRow(g, len(sec.Header)-len(c.valueHeader())))...)
			}
		}
		out = append(out, *sec)
		sec = nil
	}
	var current sectionKey
	for _, r := range c.Rows {
		if k := (sectionKey{r.Workload, r.Params}); sec == nil || k != current {
			flush(current.workload, r.Workload != current.workload)
			current = k
			sec = c.newSection(r.Workload, r.Params, r.Unit)
		}
		sec.Rows = append(sec.Rows, c.spread(c.cellRow(r, len(sec.Header)-len(c.valueHeader())))...)
		sec.Notes = append(sec.Notes, c.interferenceNotes(r)...)
	}
	flush(current.workload, true)
	if len(c.Findings) > 0 {
		f := newSection("findings", "subsumption index with its interval, over both sides' 95% intervals, and verdict; QoS sensitivity: rate at the highest class over the lowest, Hodges-Lehmann, with the verdict's 90% interval (95% where the run has no verdict)",
			append([]string{"FINDING", "WORKLOAD", "THREADS"}, c.valueHeader()...))
		for i := 3; i < len(f.Numeric); i++ {
			f.Numeric[i] = true
		}
		c.spreadNumeric(f, 3)
		for _, r := range c.Findings {
			f.Rows = append(f.Rows, c.spread(c.findingRow(r))...)
		}
		out = append(out, *f)
	}
	return out
}

// valueHeader heads the runs' columns: in columns, each run's label and
// after each but the baseline "vs base"; in rows, the run, its value and
// its change.
func (c *Comparison) valueHeader() []string {
	if c.Rowwise() {
		return []string{"RUN", "VALUE", "VS BASE"}
	}
	var h []string
	for i := range c.Columns {
		h = append(h, c.runName(i))
		if i > 0 {
			h = append(h, "vs base")
		}
	}
	return h
}

// spread lays a row built in columns (its keys, then the baseline's value,
// then each later run's value and change) out in the layout: as it is, or
// a row per run repeating the keys, with the run's label, value and change
// ("baseline" for the baseline's own).
func (c *Comparison) spread(row []string) [][]string {
	if !c.Rowwise() {
		return [][]string{row}
	}
	keys := len(row) - (2*len(c.Columns) - 1)
	out := make([][]string, len(c.Columns))
	for i := range c.Columns {
		r := append(slices.Clone(row[:keys]), c.runName(i))
		if i == 0 {
			r = append(r, row[keys], "baseline")
		} else {
			r = append(r, row[keys+2*i-1], row[keys+2*i])
		}
		out[i] = r
	}
	return out
}

// spreadNumeric marks a section's value columns, after its keys key
// columns, in rows: the run's label reads as text.
func (c *Comparison) spreadNumeric(s *Section, keys int) {
	if c.Rowwise() {
		s.Numeric[keys] = false
	}
}

// newSection is the table of a workload's cells, of one set of its
// parameters where they carry them (params, then in its title).
func (c *Comparison) newSection(workload, params, unit string) *Section {
	label, _ := units.RateUnit(unit)
	phases := false
	for _, r := range c.Rows {
		phases = phases || (r.Workload == workload && r.Phase != "")
	}
	head := []string{"TARGET", "QOS", "THREADS"}
	if phases {
		head = append(head, "PHASE")
	}
	s := newSection(strings.TrimSpace(workload+" "+params), label+"; median with its 95% interval", append(head, c.valueHeader()...))
	for i := 2; i < len(s.Numeric); i++ {
		s.Numeric[i] = !phases || i != 3
	}
	c.spreadNumeric(s, len(head))
	return s
}

func (c *Comparison) cellRow(r Row, keyCols int) []string {
	row := []string{r.Target, fmt.Sprintf("%d %s", r.QoS, qos.Class(r.QoS)), strconv.Itoa(r.Threads)}
	if keyCols == 4 {
		row = append(row, orDash(r.Phase))
	}
	_, scale := units.RateUnit(r.Unit)
	maxN := 0
	for _, v := range r.Values {
		maxN = max(maxN, v.N)
	}
	for i, v := range r.Values {
		row = append(row, rateText(v, scale, maxN))
		if i > 0 {
			row = append(row, c.deltaText(r.Values[0], v))
		}
	}
	return row
}

func (c *Comparison) geomeanRow(g Geomean, keyCols int) []string {
	row := []string{g.Target, "geomean", units.Plural(g.Cells, "cell")}
	if keyCols == 4 {
		row = append(row, "")
	}
	_, scale := units.RateUnit(g.Unit)
	for i, v := range g.Values {
		switch g.Cells {
		case 0:
			row = append(row, "no cell in every run")
		default:
			row = append(row, units.SI(float64(v.Median)/scale))
		}
		if i > 0 {
			if v.Delta == nil {
				row = append(row, "")
			} else {
				row = append(row, ChangeText(v.Delta.Ratio))
			}
		}
	}
	return row
}

func (c *Comparison) findingRow(r FindingRow) []string {
	name := "subsumption index"
	if r.Kind == KindSensitivity {
		name = fmt.Sprintf("QoS sensitivity %s %d/%d", r.Target, r.High, r.Low)
	}
	row := []string{name, workloadText(summary.WorkloadPhase{Workload: r.Workload, Phase: r.Phase, Params: r.Params}), threadsText(r.Threads)}
	for i, v := range r.Values {
		switch {
		case !v.Present:
			row = append(row, "missing")
		case r.Kind == KindSubsumption:
			s := strconv.FormatFloat(float64(v.Median), 'f', 3, 64)
			if !v.Low.IsNaN() && !v.High.IsNaN() {
				s += fmt.Sprintf(" [%.3f..%.3f]", float64(v.Low), float64(v.High))
			}
			row = append(row, s+" "+v.Outcome)
		default:
			s := render.FormatRatio(v.Median)
			if !v.Low.IsNaN() && !v.High.IsNaN() {
				s += " [" + render.FormatRatio(v.Low) + ".." + render.FormatRatio(v.High) + "]"
			}
			row = append(row, s)
		}
		if i == 0 {
			continue
		}
		switch {
		case v.Delta == nil && v.Present:
			row = append(row, "no baseline")
		case v.Delta == nil:
			row = append(row, "")
		case !v.Delta.Significant:
			row = append(row, "~")
		case r.Kind == KindSubsumption:
			row = append(row, fmt.Sprintf("%+.3f", float64(v.Delta.Ratio)))
		default:
			row = append(row, ChangeText(v.Delta.Ratio))
		}
	}
	return row
}

// rateText is a cell's median with its 95% interval: benchstat's
// "1.15M ±3%" when the interval is small and about symmetric, else the
// interval itself, "1.15M [0.52M..1.98M]" (a "±" would hide which side is
// long); with n when the run has fewer repeats of the cell than another run.
func rateText(v Value, scale float64, maxN int) string {
	switch {
	case !v.Present:
		return "missing"
	case v.N == 0:
		return fmt.Sprintf("no work (%d idle)", v.Idle)
	}
	s := units.SI(float64(v.Median) / scale)
	m, lo, hi := float64(v.Median), float64(v.Low), float64(v.High)
	if !math.IsNaN(lo) && !math.IsNaN(hi) && m > 0 {
		if pm, ok := symmetric(m, lo, hi); ok {
			s += fmt.Sprintf(" ±%.0f%%", pm)
		} else {
			s += " [" + units.SI(lo/scale) + ".." + units.SI(hi/scale) + "]"
		}
	}
	switch {
	case v.Idle > 0:
		s += fmt.Sprintf(" (n=%d +%d idle)", v.N, v.Idle)
	case v.N < maxN:
		s += fmt.Sprintf(" (n=%d)", v.N)
	}
	return s
}

// symmetric returns an interval's half-width in percent of m when the
// interval is small (within 25% of m either way) and about symmetric (the
// longer side at most 1.5 times the shorter, or both under 1%).
func symmetric(m, lo, hi float64) (float64, bool) {
	below, above := (m-lo)/m, (hi-m)/m
	long, short := math.Max(below, above), math.Min(below, above)
	if long > 0.25 || short < 0 || (long > 0.01 && long > 1.5*short) {
		return 0, false
	}
	return 100 * long, true
}

// deltaText is a cell's change against the baseline: "~ (p=0.40)" or
// "+4.0% (p=0.002)"; " *" when these repeats could not reach Alpha.
func (c *Comparison) deltaText(base, v Value) string {
	switch {
	case !v.Present:
		return ""
	case !base.Present:
		return "no baseline"
	case v.Delta == nil:
		return ""
	}
	s := "~"
	if v.Delta.Significant {
		s = ChangeText(v.Delta.Ratio)
	}
	s += " (" + render.FormatP(v.Delta.P) + ")"
	if analysis.SmallestP([][2]int{{base.N, v.N}}) >= c.Alpha {
		s += " *"
	}
	if v.Delta.Interference != nil {
		s += " " + InterferenceMark
	}
	return s
}

// InterferenceMark marks a change behind which stand cell runs that other
// work on the host took CPU from; the note under the table says how many
// and what the change is without them.
const InterferenceMark = "†"

// interferenceNotes say, for each change of r behind which interfered cell
// runs stand, how much CPU other work took during how many of its cell
// runs, and the change without them: "† vm fp qos=9 threads=2 in b: other
// work on the host took 0.6 CPU during 3 of 12 of its cell runs; without
// them ~ (p=0.31), so --fail-on does not count it".
func (c *Comparison) interferenceNotes(r Row) []string {
	var out []string
	for i, v := range r.Values {
		if i == 0 || v.Delta == nil || v.Delta.Interference == nil {
			continue
		}
		d := v.Delta.Interference
		cell := fmt.Sprintf("%s %s qos=%d threads=%d", r.Target, render.WorkloadText(r.Workload, r.Phase), r.QoS, r.Threads)
		if r.Params != "" {
			cell += " " + r.Params
		}
		n := fmt.Sprintf("%s %s in %s: other work on the host took %s CPU during %d of %d of its cell runs (the baseline's and this run's)",
			InterferenceMark, cell, c.Columns[i].Heading(), strconv.FormatFloat(float64(d.OtherCPU), 'g', 2, 64), d.Runs, d.Of)
		switch w := d.Without; {
		case w == nil:
			n += "; without them a cell has no repeat left, so --fail-on does not count it"
		case w.Significant:
			n += fmt.Sprintf("; without them %s (%s): a change --fail-on counts when beyond its limit", ChangeText(w.Ratio), render.FormatP(w.P))
		default:
			n += fmt.Sprintf("; without them ~ (%s): other work explains it, and --fail-on does not count it", render.FormatP(w.P))
		}
		out = append(out, n)
	}
	return out
}

// threadsText lists the thread counts a finding is over: "1,2", or "own"
// when the runs share none.
func threadsText(ts []int) string {
	if len(ts) == 0 {
		return "own"
	}
	return threadsList(ts)
}

// threadsList is thread counts as "1,2"; "" for none.
func threadsList(ts []int) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = strconv.Itoa(t)
	}
	return strings.Join(parts, ",")
}

// ChangeText is a change against the baseline, a ratio r of two values:
// in percent while it is small ("+4.0%", "-9.1%", for r from 2/3 to 1.5,
// where a percentage reads about the same either way), else as the ratio
// itself ("0.005x", "201x"), which a percentage would make lopsided
// (-99.5% against +19900%).
func ChangeText(r analysis.Float) string {
	x := float64(r)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0) || x <= 0:
		return "n/a"
	case x >= 2.0/3 && x <= 1.5:
		return fmt.Sprintf("%+.1f%%", 100*(x-1))
	}
	return render.FormatRatio(r)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Footer explains the marks in the table.
func (c *Comparison) Footer() []string {
	out := []string{
		fmt.Sprintf("vs base: the change against the baseline, %s, in percent while small (2/3x to 1.5x), else as a ratio (0.005x, 201x); ~ means no significant difference (Mann-Whitney U of the repeats, two-sided, alpha %.2f)", c.Columns[0].Label, c.Alpha),
		"median ±N%: its 95% interval when that is within 25% and about symmetric; [low..high] the interval itself otherwise",
		"missing: the run has no repeat of that cell; geomean: over the cells every run has, no test",
		"findings: over the thread counts every run has (THREADS; own: each run's), so a run's own report may differ; ~ where the two intervals overlap; a subsumption index's change is a difference, a sensitivity's a ratio",
	}
	marks := map[string]bool{}
	for _, col := range c.Columns {
		marks["quick"] = marks["quick"] || col.Quick
		marks["partial"] = marks["partial"] || col.Partial
	}
	if marks["quick"] {
		out = append(out, "(quick): a --quick run, loops and sizes shrunk for a smoke run; its numbers do not compare with a full run's")
	}
	if marks["partial"] {
		out = append(out, "(partial): a run that did not finish every cell (the legend says how far it got)")
	}
	short := false
	for _, r := range c.Rows {
		for i, v := range r.Values {
			if i > 0 && v.Present && r.Values[0].Present && analysis.SmallestP([][2]int{{r.Values[0].N, v.N}}) >= c.Alpha {
				short = true
			}
		}
	}
	if short {
		out = append(out, fmt.Sprintf("*: these repeats cannot reach p<%.2f however large the change: use 6 or more repeats", c.Alpha))
	}
	return out
}

// DifferenceTable is the table of Differences: in columns, a row per key
// with a column per run; in rows, a row per run with a column per key.
func (c *Comparison) DifferenceTable() (header []string, rows [][]string) {
	if !c.Rowwise() {
		header = []string{""}
		for i := range c.Columns {
			header = append(header, c.runName(i))
		}
		for _, d := range c.Differences {
			rows = append(rows, append([]string{d.Key}, d.Values...))
		}
		return header, rows
	}
	header = []string{"RUN"}
	for _, d := range c.Differences {
		header = append(header, d.Key)
	}
	for i := range c.Columns {
		row := []string{c.runName(i)}
		for _, d := range c.Differences {
			row = append(row, d.Values[i])
		}
		rows = append(rows, row)
	}
	return header, rows
}
