package benchdoc

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/units"
)

// more says where the columns a narrow terminal leaves out can be seen.
const more = "--format md shows every column."

// rateSpread is a cell's total rate as spread shows it, with the
// coefficient of variation of its repeats ("cv 2.1%") and "!" when they
// disagree (analysis.Dispersion; the warning under the table says how),
// in the Warning tone then.
func rateSpread(c analysis.Cell, scale float64) render.Cell {
	s := spread(c.TotalRate, scale)
	if s == "-" {
		return render.Cell{Text: s}
	}
	if cv := c.Dispersion.CV; !cv.IsNaN() {
		s += fmt.Sprintf(" cv %.1f%%", float64(cv)*100)
	}
	if c.Flagged() {
		return render.Cell{Text: s + " !", Tone: render.Warning}
	}
	return render.Cell{Text: s}
}

func spread(s analysis.OrderStats, scale float64) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%s [%s..%s]", units.SI(float64(s.Median)/scale), units.SI(float64(s.Min)/scale), units.SI(float64(s.Max)/scale))
}

// applied is a cell's class as its threads read it back (summary.AppliedText),
// in the Warning tone when they ran at another class than asked or only
// part of its OS mapping took.
func applied(c analysis.Cell) render.Tone {
	if len(c.QoSApplied) > 0 && (len(c.QoSApplied) != 1 || c.QoSApplied[0] != c.QoS || c.QoSPartial > 0) {
		return render.Warning
	}
	return render.Plain
}

// cellTable lays cells out one per row, or, with several targets, one row
// per (workload, qos, threads, phase) with the targets side by side and
// the ratio of each target's median total rate to the first target's.
func cellTable(cells []analysis.Cell, found map[runKey]string) *render.Table {
	var targets []string
	seen := map[string]bool{}
	for _, c := range cells {
		if !seen[c.Target] {
			seen[c.Target] = true
			targets = append(targets, c.Target)
		}
	}
	slices.SortStableFunc(targets, func(a, b string) int { return analysis.TargetRank(a) - analysis.TargetRank(b) })
	if len(targets) < 2 {
		return oneTargetTable(cells, found)
	}
	return sideBySideTable(cells, targets, found)
}

// phaseText is a cell's phase, or a dash for none.
func phaseText(p string) string {
	if p == "" {
		return "-"
	}
	return p
}

// Columns of bench's tables: a key column is never left out, a spread
// or a list may wrap at its spaces, and where the terminal is too narrow
// for all, the columns go in this order (highest Drop first): the
// per-thread rate, the seconds, the target, threads and phase where every
// row says the same (sameDrop), the result (pi's estimate, the
// compression ratio), then the class applied; the total rate and the
// ratio stay.
var (
	keyCol     = render.Column{}
	countCol   = render.Column{Right: true, Wrap: true}
	wrapCol    = render.Column{Wrap: true}
	appliedCol = render.Column{Wrap: true, Drop: 1}
	resultCol  = render.Column{Wrap: true, Drop: 2}
	secsCol    = render.Column{Wrap: true, Drop: 5}
	threadCol  = render.Column{Wrap: true, Drop: 6}
)

// sameDrop is the Drop rank of a column every row of which says the same
// (the target of a table of one, one thread count, no phase): its heading
// or the note of the columns left out says what it would.
const sameDrop = 4

// dropSame lets t's columns heads go (sameDrop) where every row's cell in
// them is the same.
func dropSame(t *render.Table, heads ...string) {
	for i, c := range t.Columns {
		if !slices.Contains(heads, c.Head) || len(t.Rows) == 0 {
			continue
		}
		same := !slices.ContainsFunc(t.Rows, func(r []render.Cell) bool { return r[i].Text != t.Rows[0][i].Text })
		if same {
			t.Columns[i].Drop = sameDrop
		}
	}
}

// col is c headed head.
func col(c render.Column, head string) render.Column {
	c.Head = head
	return c
}

// oneTargetTable lays cells out one per row.
func oneTargetTable(cells []analysis.Cell, found map[runKey]string) *render.Table {
	t := &render.Table{More: more, Columns: []render.Column{
		col(keyCol, "target"), col(keyCol, "workload"), col(wrapCol, "qos"), col(countCol, "threads"), col(keyCol, "phase"),
		col(countCol, "n"), col(secsCol, "seconds median [min..max]"), col(wrapCol, "total rate"),
		col(threadCol, "per-thread rate"), col(keyCol, "unit"), col(appliedCol, "qos applied"),
	}}
	if len(found) > 0 {
		t.Columns = append(t.Columns, col(resultCol, "result"))
	}
	for _, c := range cells {
		unit, scale := units.RateUnit(c.Unit)
		row := append(render.TextCells(
			c.Target, c.Workload, fmt.Sprintf("%d %s", c.QoS, qos.Class(c.QoS)), fmt.Sprint(c.Threads), phaseText(c.Phase),
			summary.RepeatsText(c),
			fmt.Sprintf("%.3f [%.3f..%.3f]", c.Seconds.Median, c.Seconds.Min, c.Seconds.Max)),
			rateSpread(c, scale), render.Cell{Text: spread(c.ThreadRate, scale)}, render.Cell{Text: unit},
			render.Cell{Text: summary.AppliedText(c), Tone: applied(c)})
		if len(found) > 0 {
			row = append(row, render.Cell{Text: orDash(found[runKey{c.Target, c.Workload, c.QoS, c.Threads}])})
		}
		t.Rows = append(t.Rows, row)
	}
	dropSame(t, "target", "threads", "phase")
	return t
}

// rowKey is a row of the side-by-side table.
type rowKey struct {
	workload, phase string
	qos, threads    int
}

// sideBySideTable lays cells out one row per (workload, qos, threads,
// phase), targets side by side in the order given, each later target's
// median total rate over the first's with the test of their repeats.
func sideBySideTable(cells []analysis.Cell, targets []string, found map[runKey]string) *render.Table {
	var order []rowKey
	byKey := map[rowKey]map[string]analysis.Cell{}
	for _, c := range cells {
		k := rowKey{c.Workload, c.Phase, c.QoS, c.Threads}
		if byKey[k] == nil {
			byKey[k] = map[string]analysis.Cell{}
			order = append(order, k)
		}
		byKey[k][c.Target] = c
	}
	// Each target against the first, with the test of their repeats.
	ratios := map[string]map[analysis.CellKey]analysis.TargetRatio{}
	for _, t := range targets[1:] {
		ratios[t] = map[analysis.CellKey]analysis.TargetRatio{}
		for _, r := range analysis.CompareTargets(cells, targets[0], t) {
			ratios[t][r.CellKey] = r
		}
	}
	t := &render.Table{More: more, Columns: []render.Column{
		col(keyCol, "workload"), col(wrapCol, "qos"), col(countCol, "threads"), col(keyCol, "phase"), col(countCol, "n")}}
	for _, target := range targets {
		t.Columns = append(t.Columns, col(secsCol, target+" seconds"), col(wrapCol, target+" total rate"))
	}
	for _, target := range targets[1:] {
		t.Columns = append(t.Columns, col(wrapCol, target+"/"+targets[0]))
	}
	t.Columns = append(t.Columns, col(keyCol, "unit"), col(appliedCol, "qos applied"))
	if len(found) > 0 {
		t.Columns = append(t.Columns, col(resultCol, "result"))
	}
	for _, k := range order {
		t.Rows = append(t.Rows, sideBySideRow(k, byKey[k], targets, ratios, found))
	}
	dropSame(t, "threads", "phase")
	return t
}

// sideBySideRow is row k of the side-by-side table: its targets' cells
// (a dash for one a target lacks), the ratios to the first target, and
// the results found.
func sideBySideRow(k rowKey, byTarget map[string]analysis.Cell, targets []string,
	ratios map[string]map[analysis.CellKey]analysis.TargetRatio, found map[runKey]string) []render.Cell {
	row := render.TextCells(k.workload, fmt.Sprintf("%d %s", k.qos, qos.Class(k.qos)), fmt.Sprint(k.threads), phaseText(k.phase))
	var ns, appliedText []string
	tone := render.Plain
	unit := "-"
	for _, t := range targets {
		c, ok := byTarget[t]
		if !ok {
			continue
		}
		ns = append(ns, summary.RepeatsText(c))
		appliedText = append(appliedText, t+" "+summary.AppliedText(c))
		tone = max(tone, applied(c))
	}
	row = append(row, render.Cell{Text: strings.Join(ns, "/")})
	for _, t := range targets {
		c, ok := byTarget[t]
		if !ok {
			row = append(row, render.TextCells("-", "-")...)
			continue
		}
		var scale float64
		unit, scale = units.RateUnit(c.Unit)
		row = append(row, render.Cell{Text: fmt.Sprintf("%.3f", c.Seconds.Median)}, rateSpread(c, scale))
	}
	for _, t := range targets[1:] {
		r, ok := ratios[t][analysis.CellKey{Target: t, Workload: k.workload, Phase: k.phase, QoS: k.qos, Threads: k.threads}]
		if !ok || r.Ratio.IsNaN() || math.IsInf(float64(r.Ratio), 0) {
			row = append(row, render.Cell{Text: "-"})
			continue
		}
		row = append(row, render.Cell{Text: fmt.Sprintf("%.3fx %s", float64(r.Ratio), render.FormatSignificance(r.Test.P, analysis.Alpha))})
	}
	row = append(row, render.Cell{Text: unit}, render.Cell{Text: strings.Join(appliedText, ", "), Tone: tone})
	if len(found) > 0 {
		var res []string
		for _, t := range targets {
			if f := found[runKey{t, k.workload, k.qos, k.threads}]; f != "" {
				res = append(res, t+" "+f)
			}
		}
		row = append(row, render.Cell{Text: orDash(strings.Join(res, ", "))})
	}
	return row
}

// runKey names a cell's runs.
type runKey struct {
	target, workload string
	qos, threads     int
}

// findings are what a cell computed beside its rate, from the runs'
// metrics, by cell: pi's estimate and its error, and the compression ratio
// (medians over the repeats).
func findings(runs []BenchRun) map[runKey]string {
	metrics := map[runKey]map[string][]float64{}
	for _, r := range runs {
		k := runKey{r.Target, r.Workload, r.QoS, r.Threads}
		if metrics[k] == nil {
			metrics[k] = map[string][]float64{}
		}
		for name, v := range r.Metrics {
			metrics[k][name] = append(metrics[k][name], v)
		}
	}
	out := map[runKey]string{}
	for k, m := range metrics {
		switch {
		case len(m["pi_estimate"]) > 0:
			out[k] = fmt.Sprintf("pi %.6f (error %.2g)", analysis.OrderStatsOf(m["pi_estimate"]).Median, analysis.OrderStatsOf(m["pi_error"]).Median)
		case len(m["compression_ratio"]) > 0:
			out[k] = fmt.Sprintf("ratio %.2f:1", analysis.OrderStatsOf(m["compression_ratio"]).Median)
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
