package compare

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/units"
)

// Formats are the output formats Write takes.
var Formats = []string{"table", "csv", "markdown", "json"}

// Write writes the comparison in format, one of Formats.
func Write(w io.Writer, format string, c *Comparison) error {
	switch format {
	case "table", "":
		return writeText(w, c, false)
	case "markdown":
		return writeText(w, c, true)
	case "csv":
		return WriteCSV(w, c)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	}
	return fmt.Errorf("unknown format %q: allowed %s", format, strings.Join(Formats, ", "))
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
		if t := col.OtherWork.Text(); t != "" {
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
		f := newSection("findings", "subsumption index with its interval, over both sides' 95% intervals, and verdict; QoS sensitivity: rate at the highest class over the lowest, Hodges-Lehmann, with its interval",
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
			s := analysis.FormatRatio(v.Median)
			if !v.Low.IsNaN() && !v.High.IsNaN() {
				s += " [" + analysis.FormatRatio(v.Low) + ".." + analysis.FormatRatio(v.High) + "]"
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
	s += " (" + analysis.FormatP(v.Delta.P) + ")"
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
		cell := fmt.Sprintf("%s %s qos=%d threads=%d", r.Target, analysis.WorkloadText(r.Workload, r.Phase), r.QoS, r.Threads)
		if r.Params != "" {
			cell += " " + r.Params
		}
		n := fmt.Sprintf("%s %s in %s: other work on the host took %s CPU during %d of %d of its cell runs (the baseline's and this run's)",
			InterferenceMark, cell, c.Columns[i].Heading(), strconv.FormatFloat(float64(d.OtherCPU), 'g', 2, 64), d.Runs, d.Of)
		switch w := d.Without; {
		case w == nil:
			n += "; without them a cell has no repeat left, so --fail-on does not count it"
		case w.Significant:
			n += fmt.Sprintf("; without them %s (%s): a change --fail-on counts when beyond its limit", ChangeText(w.Ratio), analysis.FormatP(w.P))
		default:
			n += fmt.Sprintf("; without them ~ (%s): other work explains it, and --fail-on does not count it", analysis.FormatP(w.P))
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
	return analysis.FormatRatio(r)
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

// markdownWidth is where Markdown's prose lines wrap (a rendered page
// joins them again); a table's rows cannot wrap.
const markdownWidth = 100

// The widths the text formats fit their tables to (fit): a Markdown
// table's rows under 160 characters, so that compare.md reads as text
// and in a diff; a terminal table's within 100 columns.
const (
	markdownTableWidth = 159
	textTableWidth     = 100
)

// shortRunName is the longest a run's name may be and still be worth its
// room: while every run's is this short, the tables name the runs in full
// however wide they are, since keys would save a few characters and cost
// the reader a look-up in the legend.
const shortRunName = 24

// fit is c as a text format (Markdown, or the terminal's) sets it out so
// that its tables keep within the format's width where they can: as it
// is when they do; else with the per-machine table's widest machine
// columns (CPU, OS, VM, mechanism) written as keys its Keys list, one by
// one until that table fits; and, where that leaves fewer tables too wide
// and a run's name is longer than shortRunName, with the runs named #1,
// #2, ... in every table, the legend naming each in full. A table that no key narrows enough (a column per run, asked
// for many runs) stays as wide as it is.
func (c *Comparison) fit(markdown bool) *Comparison {
	limit := textTableWidth
	if markdown {
		limit = markdownTableWidth
	}
	try := func(keyRuns bool) (*Comparison, int) {
		fitted := *c
		fitted.keyRuns, fitted.keyed = keyRuns, map[string]bool{}
		for {
			s := fitted.MachineSection()
			col := fitted.widestMachineColumn(s)
			if tableWidth(s.Header, s.Rows, markdown, 0) <= limit || col == "" {
				break
			}
			fitted.keyed[col] = true
		}
		return &fitted, fitted.overflow(markdown, limit)
	}
	plain, n := try(false)
	long := false
	for i := range len(c.Columns) + len(c.Missing) {
		long = long || utf8.RuneCountInString(c.runName(i)) > shortRunName
	}
	if n == 0 || !long {
		return plain
	}
	if keyed, m := try(true); m < n {
		return keyed
	}
	return plain
}

// widestMachineColumn is the heading of the machine column of s (the
// per-machine table) that is not yet keyed and takes the most room; ""
// when none is left.
func (c *Comparison) widestMachineColumn(s Section) string {
	widest, best := "", 0
	for _, f := range verdictFields {
		if f.key == "" || c.keyed[f.head("")] {
			continue
		}
		col := slices.Index(s.Header, f.head(""))
		if col < 0 {
			continue
		}
		w := 0
		for _, r := range s.Rows {
			w = max(w, utf8.RuneCountInString(r[col]))
		}
		if w > best {
			widest, best = f.head(""), w
		}
	}
	return widest
}

// overflow counts c's tables wider than limit in the format.
func (c *Comparison) overflow(markdown bool, limit int) int {
	s := c.MachineSection()
	widths := []int{tableWidth(s.Header, s.Rows, markdown, 0)}
	if len(c.Differences) > 0 {
		head, rows := c.DifferenceTable()
		switch {
		case markdown:
			widths = append(widths, tableWidth(head, rows, true, 0))
		case c.Rowwise():
			widths = append(widths, tableWidth(head, rows, false, 2))
		default: // "  key:\tvalues", no header
			keyed := make([][]string, len(rows))
			for i, r := range rows {
				keyed[i] = append([]string{r[0] + ":"}, r[1:]...)
			}
			widths = append(widths, tableWidth(nil, keyed, false, 2))
		}
	}
	for _, s := range c.Sections() {
		widths = append(widths, tableWidth(s.Header, s.Rows, markdown, 0))
	}
	n := 0
	for _, w := range widths {
		if w > limit {
			n++
		}
	}
	return n
}

// tableWidth is how wide the table's widest line is in characters: as a
// Markdown table, or as tabwriter aligns it (two spaces between columns,
// none after the last), after indent.
func tableWidth(head []string, rows [][]string, markdown bool, indent int) int {
	all := append([][]string{head}, rows...)
	if head == nil {
		all = rows
	}
	widest := 0
	if markdown {
		for _, r := range all {
			w := 4 + 3*(len(r)-1) // "| ", " | " between, " |"
			for _, cell := range r {
				w += utf8.RuneCountInString(mdEscape(cell))
			}
			widest = max(widest, w)
		}
		return widest
	}
	var cols []int
	for _, r := range all {
		for i, cell := range r {
			if i == len(cols) {
				cols = append(cols, 0)
			}
			cols[i] = max(cols[i], utf8.RuneCountInString(cell))
		}
	}
	for i, w := range cols {
		widest += w
		if i < len(cols)-1 {
			widest += 2
		}
	}
	return indent + widest
}

// writeText writes the table as aligned text, or as Markdown, fitted to
// the format's width (fit).
func writeText(w io.Writer, c *Comparison, markdown bool) error {
	c = c.fit(markdown)
	var b strings.Builder
	if markdown {
		writeMarkdownSection(&b, c.MachineSection())
		b.WriteString("Runs, the first the baseline:\n\n")
		for _, l := range c.Legend() {
			b.WriteString(wrapText("- "+mdEscape(l), markdownWidth, "  ") + "\n")
		}
		for _, n := range c.Notes {
			b.WriteString("\n" + wrapText("**Note:** "+mdEscape(n), markdownWidth, "") + "\n")
		}
		b.WriteString("\n" + wrapText(c.DifferenceText(), markdownWidth, "") + "\n\n")
		if len(c.Differences) > 0 {
			head, rows := c.DifferenceTable()
			writeMarkdownTable(&b, head, rows)
			b.WriteString("\n")
		}
		for _, s := range c.Sections() {
			writeMarkdownSection(&b, s)
		}
		for _, f := range c.Footer() {
			b.WriteString(wrapText("- "+mdEscape(f), markdownWidth, "  ") + "\n")
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	writeTextSection(&b, c.MachineSection())
	b.WriteString("\nruns (the first is the baseline):\n")
	for _, l := range c.Legend() {
		b.WriteString("  " + l + "\n")
	}
	for _, n := range c.Notes {
		b.WriteString("note: " + n + "\n")
	}
	b.WriteString(c.DifferenceText() + "\n")
	if len(c.Differences) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		head, rows := c.DifferenceTable()
		if c.Rowwise() {
			fmt.Fprintf(tw, "  %s\n", strings.Join(head, "\t"))
			for _, r := range rows {
				fmt.Fprintf(tw, "  %s\n", strings.Join(r, "\t"))
			}
		} else {
			for _, r := range rows {
				fmt.Fprintf(tw, "  %s:\t%s\n", r[0], strings.Join(r[1:], "\t"))
			}
		}
		tw.Flush()
	}
	for _, s := range c.Sections() {
		b.WriteString("\n")
		writeTextSection(&b, s)
	}
	b.WriteString("\n")
	for _, f := range c.Footer() {
		b.WriteString(f + "\n")
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ") // tabwriter pads a row's empty last cells
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// writeTextSection writes a section as aligned text: its title, its lead,
// the table, its notes.
func writeTextSection(b *strings.Builder, s Section) {
	b.WriteString(s.Title + "\n")
	if s.Lead != "" {
		b.WriteString(s.Lead + "\n")
	}
	for _, k := range s.Keys {
		b.WriteString(k + "\n")
	}
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(s.Header, "\t"))
	for _, r := range s.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	for _, n := range s.Notes {
		b.WriteString(n + "\n")
	}
}

// writeMarkdownSection writes a section as Markdown: its title as a
// heading, or, when that would run past markdownWidth, its name as the
// heading and what it shows in a paragraph; its lead, the table, and its
// notes as a list.
func writeMarkdownSection(b *strings.Builder, s Section) {
	if head := "### " + mdEscape(s.Title); len(head) <= markdownWidth {
		b.WriteString(head + "\n\n")
	} else {
		b.WriteString("### " + mdEscape(s.Name) + "\n\n" + wrapText(mdEscape(s.About)+".", markdownWidth, "") + "\n\n")
	}
	if s.Lead != "" {
		b.WriteString(wrapText(mdEscape(s.Lead), markdownWidth, "") + "\n\n")
	}
	for _, k := range s.Keys {
		b.WriteString(wrapText("- "+mdEscape(k), markdownWidth, "  ") + "\n")
	}
	if len(s.Keys) > 0 {
		b.WriteString("\n")
	}
	writeMarkdownTable(b, s.Header, s.Rows)
	b.WriteString("\n")
	for _, n := range s.Notes {
		b.WriteString(wrapText("- "+mdEscape(n), markdownWidth, "  ") + "\n")
	}
	if len(s.Notes) > 0 {
		b.WriteString("\n")
	}
}

// wrapText breaks s at spaces into lines of at most width bytes (a word
// longer than that stands alone on its line), the lines after the first
// indented by indent: a Markdown paragraph or list item stays one. A word
// that would start a new block at the start of a line (a list's "-" or
// "1.", a quote's ">") stays on the line before.
func wrapText(s string, width int, indent string) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) > width && !blockMarker(word):
			lines = append(lines, line)
			line = indent + word
		default:
			line += " " + word
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// blockMarker reports whether word, first on a line, could open a Markdown
// block: a list item, a quote, a heading, a rule or a table row.
func blockMarker(word string) bool {
	if strings.Trim(word, "-") == "" || strings.Trim(word, "=") == "" || strings.Trim(word, "#") == "" {
		return true
	}
	switch word {
	case "+", "*", ">", "|":
		return true
	}
	digits := strings.TrimRight(word[:len(word)-1], "0123456789")
	return digits == "" && len(word) > 1 && strings.ContainsAny(word[len(word)-1:], ".)")
}

func writeMarkdownTable(b *strings.Builder, head []string, rows [][]string) {
	esc := func(cells []string) string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = mdEscape(c)
		}
		return "| " + strings.Join(out, " | ") + " |\n"
	}
	b.WriteString(esc(head))
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = "---"
	}
	b.WriteString("|" + strings.Join(sep, "|") + "|\n")
	for _, r := range rows {
		b.WriteString(esc(r))
	}
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`).Replace(s)
}

// csvHeader is the header of WriteCSV: one line per run per cell or
// finding, and first a line per run and judged workload, whose machine
// and verdict take the columns after outcome (verdictFields).
func csvHeader() []string {
	h := []string{"kind", "workload", "phase", "target", "qos", "threads", "run", "label", "dir", "present", "n", "value", "low", "high", "unit", "ratio", "p", "significant", "outcome"}
	for _, f := range verdictFields {
		h = append(h, f.csv...)
	}
	return h
}

// KindVerdict is the CSV's kind of a machine's verdict line.
const KindVerdict = "verdict"

// WriteCSV writes the comparison long-form. First a line per run and
// judged workload (kind verdict, in the per-machine table's order): the
// classes compared in qos ("33/9"), the thread counts in threads ("1,2"),
// the subsumption index in value, low and high, the verdict in outcome
// (empty when the run has none), and the machine and both ratios in the
// columns after it. Then a line per run for every cell (kind cell; value
// the median total rate, low and high its interval), geometric mean (kind
// geomean; n the cells it is over), subsumption index and QoS sensitivity
// (qos "high/low"); ratio and p compare with the baseline (run 1), empty
// for it. A run that did not come back is a line of kind missing: its
// label, and why in outcome. The columns after outcome are empty but on
// verdict lines.
func WriteCSV(w io.Writer, c *Comparison) error {
	cw := csv.NewWriter(w)
	header := csvHeader()
	if err := cw.Write(header); err != nil {
		return err
	}
	pad := func(rec []string) []string { return append(rec, make([]string, len(header)-len(rec))...) }
	for _, m := range c.Machines {
		col := c.Columns[m.Run]
		present := m.Outcome != ""
		rec := []string{KindVerdict, m.Workload, m.Phase, "", m.classesText(), threadsList(m.Threads), strconv.Itoa(m.Run + 1), col.Label, col.Dir,
			strconv.FormatBool(present), "", num(m.SI), num(m.SILow), num(m.SIHigh), "index", "", "", "", m.Outcome}
		for _, f := range verdictFields {
			if f.value != nil {
				rec = append(rec, f.value(m)...)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	line := func(kind, workload, phase, target, q, threads string, i int, v Value, unit, outcome string) error {
		col := c.Columns[i]
		rec := []string{kind, workload, phase, target, q, threads, strconv.Itoa(i + 1), col.Label, col.Dir, strconv.FormatBool(v.Present), "", "", "", "", unit, "", "", "", outcome}
		if v.Present {
			rec[10] = strconv.Itoa(v.N)
			rec[11], rec[12], rec[13] = num(v.Median), num(v.Low), num(v.High)
		}
		if v.Delta != nil {
			rec[15], rec[16], rec[17] = num(v.Delta.Ratio), num(v.Delta.P), strconv.FormatBool(v.Delta.Significant)
		}
		return cw.Write(pad(rec))
	}
	for _, r := range c.Rows {
		unit := r.Unit + "/s"
		for i, v := range r.Values {
			if err := line("cell", r.Workload, r.Phase, r.Target, strconv.Itoa(r.QoS), strconv.Itoa(r.Threads), i, v, unit, ""); err != nil {
				return err
			}
		}
	}
	for _, g := range c.Geomeans {
		unit := g.Unit + "/s"
		for i, v := range g.Values {
			v.N = g.Cells
			if err := line("geomean", g.Workload, "", g.Target, "", "", i, v, unit, ""); err != nil {
				return err
			}
		}
	}
	for _, m := range c.Missing {
		// A run that is not there: its label, and why in outcome.
		if err := cw.Write(pad([]string{"missing", "", "", "", "", "", "", m.Label, "", "false", "", "", "", "", "", "", "", "", m.Reason})); err != nil {
			return err
		}
	}
	for _, f := range c.Findings {
		q, unit := "", ""
		if f.Kind == KindSensitivity {
			q, unit = fmt.Sprintf("%d/%d", f.High, f.Low), "ratio"
		}
		for i, v := range f.Values {
			if err := line(f.Kind, f.Workload, f.Phase, f.Target, q, "", i, v.Value, unit, v.Outcome); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// num writes a number exactly (the shortest digits that read back as it),
// so a CSV round trip loses nothing; NaN is empty.
func num(f analysis.Float) string {
	if f.IsNaN() {
		return ""
	}
	return results.FormatCSVFloat(float64(f))
}
