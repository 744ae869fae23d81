package summary

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/units"
)

// tablesIntro says what the tables' columns are: summary.md's opening
// paragraph.
func tablesIntro() string {
	return fmt.Sprintf("Per cell, the total rate is all threads' work from the first start to the last end, one value per repeat: "+
		"median, its distribution-free %g%% confidence interval (lower coverage, in parentheses, when there are too few repeats), min and max. "+
		"The per-thread rate is the mean of each repeat's threads' own rates, one value per repeat. "+
		"max/min and CV (the standard deviation over the mean) say how far the repeats' total rates agree; "+
		"a cell whose repeats are more than %gx apart, or fall in two groups, is flagged (!): one number cannot stand for it.", analysis.Confidence*100, analysis.DisagreeRatio)
}

// section is the cells of one workload (and phase, and set of parameters
// where the run measured it with more than one) in one unit: one table.
type section struct {
	workload, phase, params, unit string
	cells                         []analysis.Cell
}

func sections(cells []analysis.Cell) []*section {
	var out []*section
	byKey := map[[4]string]*section{}
	for _, c := range cells {
		k := [4]string{c.Workload, c.Phase, c.Params, c.Unit}
		s := byKey[k]
		if s == nil {
			s = &section{workload: c.Workload, phase: c.Phase, params: c.Params, unit: c.Unit}
			byKey[k] = s
			out = append(out, s)
		}
		s.cells = append(s.cells, c)
	}
	return out
}

// Table is one workload's (and phase's) cells as summary.md shows them, in
// plain text, for any renderer: summary.md and the HTML report draw the same
// rows.
type Table struct {
	// Title names the workload (and phase).
	Title string
	// Header names the columns, with units; RightAlign marks numeric ones.
	Header     []string
	RightAlign []bool
	Rows       [][]string
	// QoSNotes give the reasons behind the "(partial)" and "(other
	// class)" of the "QoS applied" column.
	QoSNotes []string
	// Marks explain the symbols the rows use, one line per symbol used
	// (DispersionMark), and the idle repeats beside n (IdleNote): the
	// legend beside the table.
	Marks []string
	// RateUnit is the regressions' unit (loops/s); Regressions are printed
	// as [game] (docs/references.md) prints them.
	RateUnit    string
	Regressions []string
	// Short are the columns' headings where a terminal has little room
	// (Header without the units, which Units says once), and Drop the rank
	// at which each column gives way to fit a terminal's width (0 never,
	// the highest first): the text view's (View).
	Short []string
	Drop  []int
	Units string
}

// QoSNotesIntro explains the words of the "QoS applied" column.
const QoSNotesIntro = "QoS applied: the class the threads read back as; (partial): part of the class's OS mapping did not take effect; (other class): the threads ran at another class than asked. Why:"

// DispersionMark is the one symbol of the tables, "!", and its legend:
// the repeats of the cell disagree, so no single number stands for it.
const DispersionMark = "!: the repeats disagree (more than 3x apart, or in two groups): one number cannot stand for the cell; see its warning"

// IdleNote is the legend of the idle repeats beside a cell's n,
// "4 (+2 idle)" (RepeatsText).
const IdleNote = "n (+k idle): k repeats did no work (a total rate of 0); every column leaves them out alike, as the tests do, and the cell's warning names them"

// RepeatsText is a cell's n as the tables print it: how many repeats its
// statistics rest on, and beside it how many did no work and are left out
// of every column ("4 (+2 idle)"; "0 (+6 idle)" when none did work).
func RepeatsText(c analysis.Cell) string {
	n := strconv.Itoa(c.TotalRate.N)
	if k := c.Idle(); k > 0 {
		n += fmt.Sprintf(" (+%d idle)", k)
	}
	return n
}

// Tables returns one table per workload (and phase), in the order the cells
// first show them.
func Tables(a Summary) []Table {
	var out []Table
	for _, sec := range sections(a.Cells) {
		out = append(out, sectionTable(sec, a.Regressions))
	}
	return out
}

func sectionTable(sec *section, regressions []analysis.ClassRegression) Table {
	var largest float64
	for _, c := range sec.cells {
		if m := math.Abs(float64(c.TotalRate.Median)); !math.IsNaN(m) && !math.IsInf(m, 0) {
			largest = max(largest, m)
		}
	}
	unit, scale := units.ScaleRate(sec.unit, largest)
	speedLabel, speedScale := speedScale(sec)
	// The host's view (schema 1.3) gets its columns, beside the share the
	// threads saw, only where some cell recorded one: an older run's table
	// is as it was.
	hostView := slices.ContainsFunc(sec.cells, func(c analysis.Cell) bool {
		return slices.ContainsFunc(c.HostViews, func(u *hostview.Use) bool { return u != nil })
	})
	header := []string{"target", "QoS", "threads", "n",
		"total rate median (" + unit + ")", fmt.Sprintf("%g%% CI (%s)", analysis.Confidence*100, unit), "min (" + unit + ")", "max (" + unit + ")", "max/min", "CV",
		"per-thread rate median (" + unit + ")", "CPU share median"}
	if hostView {
		header = append(header, HostVCPUsHeader, HostOtherHeader)
	}
	header = append(header, "speed median ("+speedLabel+")", "time median (s)", "QoS applied")
	right := make([]bool, len(header))
	for i := 2; i < len(header)-1; i++ {
		right[i] = true
	}
	t := Table{
		Title:      strings.TrimSpace(render.WorkloadText(sec.workload, sec.phase) + " " + sec.params),
		Header:     header,
		RightAlign: right,
		RateUnit:   rateUnit(sec.unit),
		Units:      "Total rate (median, its interval, min, max) and per-thread rate in " + unit + "; speed in " + speedLabel + ".",
	}
	t.Short, t.Drop = shortColumns(hostView)
	for _, c := range sec.cells {
		tr := c.TotalRate
		ci := "-"
		if tr.N > 0 {
			ci = sig(float64(tr.CILow)/scale) + " – " + sig(float64(tr.CIHigh)/scale)
		}
		if tr.N > 0 && tr.CIConfidence < analysis.Confidence {
			ci += fmt.Sprintf(" (%.1f%%)", tr.CIConfidence*100)
		}
		row := []string{c.Target, fmt.Sprintf("%d %s", c.QoS, qos.Class(c.QoS)), strconv.Itoa(c.Threads), RepeatsText(c),
			sig(float64(tr.Median) / scale), ci, sig(float64(tr.Min) / scale), sig(float64(tr.Max) / scale), spreadText(c), cvText(c.Dispersion),
			sig(float64(c.ThreadRate.Median) / scale), shareText(c)}
		if hostView {
			row = append(row, hostCPUsText(analysis.MedianOf(c.VCPUShares)), hostCPUsText(analysis.MedianOf(c.OtherCPU)))
		}
		t.Rows = append(t.Rows, append(row, speedText(c, speedScale), sig(float64(c.Seconds.Median)), AppliedText(c)))
	}
	t.QoSNotes = QoSNotes(sec.cells)
	for _, c := range sec.cells {
		if c.Flagged() {
			t.Marks = []string{DispersionMark}
			break
		}
	}
	for _, c := range sec.cells {
		if c.Idle() > 0 {
			t.Marks = append(t.Marks, IdleNote)
			break
		}
	}
	for _, r := range regressions {
		if r.Workload != sec.workload || r.Phase != sec.phase || r.Params != sec.params {
			continue
		}
		line := render.ClassRegression(r)
		if !r.R2.IsNaN() {
			line += fmt.Sprintf(" (R² %.3f, %d points)", r.R2, r.N)
		}
		t.Regressions = append(t.Regressions, line)
	}
	return t
}

// shortColumns are a workload's table's columns as a terminal heads them
// (Table.Short), and the rank at which each gives way to fit its width
// (Table.Drop): the spread of the repeats and the CPU figures before the
// median, its interval, max/min and the class applied.
func shortColumns(hostView bool) (short []string, drop []int) {
	short = []string{"target", "QoS", "threads", "n", "median", fmt.Sprintf("%g%% CI", analysis.Confidence*100), "min", "max", "max/min", "CV",
		"per-thread", "CPU share"}
	drop = []int{0, 0, 0, 0, 0, 0, 11, 10, 0, 3, 8, 2}
	if hostView {
		short = append(short, "vCPUs on host", "other work on host")
		drop = append(drop, 4, 5)
	}
	return append(short, "speed", "time (s)", "QoS applied"), append(drop, 7, 9, 0)
}

// The host view's columns in a workload's table: the host CPUs the VM's
// vCPU threads got and those the host's other work took, medians over the
// cell's repeats.
const (
	HostVCPUsHeader = "vCPUs on host median (CPUs)"
	HostOtherHeader = "other work on host median (CPUs)"
)

// hostCPUsText is a number of host CPUs ("0.74"), "-" where it was not
// recorded (a host cell has no vCPUs).
func hostCPUsText(x analysis.Float) string {
	if math.IsNaN(float64(x)) {
		return "-"
	}
	return strconv.FormatFloat(float64(x), 'f', 2, 64)
}

// shareText is a cell's median CPU share ("99.8%"), "-" where its records
// carry no CPU time.
func shareText(c analysis.Cell) string {
	if c.CPUShare.N == 0 {
		return "-"
	}
	return render.Share(c.CPUShare.Median)
}

// speedText is a cell's median speed in the section's scale, "-" where its
// records carry no CPU time.
func speedText(c analysis.Cell, scale float64) string {
	if c.Speed.N == 0 {
		return "-"
	}
	return sig(float64(c.Speed.Median) / scale)
}

// speedScale is the unit and scale of a section's speeds (work per
// CPU-second), from its largest median speed: "M loops/CPU-s".
func speedScale(sec *section) (string, float64) {
	var largest float64
	for _, c := range sec.cells {
		if m := math.Abs(float64(c.Speed.Median)); !math.IsNaN(m) && !math.IsInf(m, 0) {
			largest = max(largest, m)
		}
	}
	label, scale := units.ScaleRate(sec.unit, largest)
	return strings.TrimSuffix(label, "/s") + "/CPU-s", scale
}

// spreadText is a cell's max/min, marked "!" when its repeats are flagged.
func spreadText(c analysis.Cell) string {
	d := c.Dispersion
	if d.N == 0 || d.MaxMin.IsNaN() {
		return "-"
	}
	s := fmt.Sprintf("%.3g", float64(d.MaxMin))
	if c.Flagged() {
		s += " !"
	}
	return s
}

// cvText is the repeats' coefficient of variation in percent ("2.1%"); "-"
// when undefined (fewer than 2 repeats).
func cvText(d analysis.Dispersion) string {
	if d.N < 2 || d.CV.IsNaN() {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", float64(d.CV)*100)
}

// sig renders x with four significant digits (every integer digit from
// 10000 up), never in exponent form; "-" when it is not a number.
func sig(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	if x == 0 {
		return "0"
	}
	return strconv.FormatFloat(x, 'f', max(0, 3-int(math.Floor(math.Log10(math.Abs(x))))), 64)
}

// QoSNotes are the lines under QoSNotesIntro: why each cell marked
// "(partial)" or "(other class)" is so, one line per target, class and
// reason, sorted; a marked cell whose agent gave no reason says so, so that
// no mark stands without its legend.
func QoSNotes(cells []analysis.Cell) []string {
	notes := map[string]bool{}
	for _, c := range cells {
		for _, r := range c.QoSReasons {
			notes[fmt.Sprintf("%s %s: %s", c.Target, qos.Class(c.QoS), r)] = true
		}
		if len(c.QoSReasons) == 0 && strings.HasSuffix(AppliedText(c), ")") {
			notes[fmt.Sprintf("%s %s: the agent gave no reason", c.Target, qos.Class(c.QoS))] = true
		}
	}
	return slices.Sorted(maps.Keys(notes))
}

// AppliedText says which class the threads ran at: the asked class's name
// when it took fully, with "(partial)" when part of its OS mapping did not,
// "(other class)" when the threads read back as another class; "-" without
// records. Words, not marks: "!" means one thing in every table (the
// repeats disagree, DispersionMark).
func AppliedText(c analysis.Cell) string {
	if len(c.QoSApplied) == 0 {
		return "-"
	}
	names := make([]string, len(c.QoSApplied))
	for i, q := range c.QoSApplied {
		names[i] = qos.Class(q).String()
	}
	s := strings.Join(names, "+")
	switch {
	case len(c.QoSApplied) != 1 || c.QoSApplied[0] != c.QoS:
		return s + " (other class)"
	case c.QoSPartial > 0:
		return s + " (partial)"
	}
	return s
}
