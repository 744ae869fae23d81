package compare

import (
	"math"
	"slices"

	"github.com/qoslab/qoslab/internal/analysis"
)

// rows is every cell any run has, in table order, with each run's value.
func rows(cells [][]analysis.Cell) []Row {
	interfered := make([]map[analysis.CellKey][]analysis.InterferedRun, len(cells))
	for i, cs := range cells {
		interfered[i] = map[analysis.CellKey][]analysis.InterferedRun{}
		for _, r := range analysis.Interfered(cs).Runs {
			interfered[i][r.CellKey] = append(interfered[i][r.CellKey], r)
		}
	}
	byKey := map[analysis.CellKey][]*analysis.Cell{}
	var keys []analysis.CellKey
	unit := map[analysis.CellKey]string{}
	for i, cs := range cells {
		for j := range cs {
			k := cs[j].CellKey
			if byKey[k] == nil {
				byKey[k] = make([]*analysis.Cell, len(cells))
				keys = append(keys, k)
				unit[k] = cs[j].Unit
			}
			byKey[k][i] = &cs[j]
		}
	}
	slices.SortFunc(keys, analysis.CompareKeys)
	out := make([]Row, 0, len(keys))
	for _, k := range keys {
		r := Row{CellKey: k, Unit: unit[k]}
		base := byKey[k][0]
		for i, c := range byKey[k] {
			if c == nil || c.TotalRate.N == 0 && c.Idle() == 0 {
				r.Values = append(r.Values, Value{Median: nan(), Low: nan(), High: nan()})
				continue
			}
			v := Value{Present: true, N: c.TotalRate.N, Idle: c.Idle(), Median: c.TotalRate.Median, Low: c.TotalRate.CILow, High: c.TotalRate.CIHigh}
			if c != base && base != nil && base.TotalRate.N > 0 && c.TotalRate.N > 0 {
				ch := analysis.Compare(*base, *c)
				v.Delta = &Delta{Ratio: ch.Ratio, P: ch.Test.P, Significant: ch.Test.Significant(analysis.Alpha) && base.TotalRate.Median != 0 && !ch.Ratio.IsNaN()}
				v.Delta.Interference = deltaInterference(*base, *c, interfered[0][k], interfered[i][k])
			}
			r.Values = append(r.Values, v)
		}
		out = append(out, r)
	}
	return out
}

// deltaInterference is what the interfered cell runs of the baseline's
// cell (baseRuns) and the other run's (runs) do to their change: nil when
// there are none.
func deltaInterference(base, c analysis.Cell, baseRuns, runs []analysis.InterferedRun) *DeltaInterference {
	if len(baseRuns)+len(runs) == 0 {
		return nil
	}
	var other []float64
	for _, r := range append(slices.Clone(baseRuns), runs...) {
		other = append(other, float64(r.OtherCPU))
	}
	slices.Sort(other)
	d := &DeltaInterference{Runs: len(other), Of: len(base.Repeats) + len(c.Repeats), OtherCPU: analysis.OrderStatsOf(other).Median}
	b := analysis.WithoutRepeats([]analysis.Cell{base}, baseRuns)[0]
	n := analysis.WithoutRepeats([]analysis.Cell{c}, runs)[0]
	if b.TotalRate.N > 0 && n.TotalRate.N > 0 {
		ch := analysis.Compare(b, n)
		d.Without = &Delta{Ratio: ch.Ratio, P: ch.Test.P, Significant: ch.Test.Significant(analysis.Alpha) && b.TotalRate.Median != 0 && !ch.Ratio.IsNaN()}
	}
	return d
}

func nan() analysis.Float { return analysis.Float(math.NaN()) }

// geomeans is, per workload and target in row order, the geometric mean of
// the median rates of the cells every run has (with a positive median): the
// same cells in every column, so the means compare.
func geomeans(rows []Row, n int) []Geomean {
	type key struct{ workload, target string }
	var order []key
	sums := map[key][]float64{}
	counts := map[key]int{}
	unit := map[key]string{}
	for _, r := range rows {
		k := key{r.Workload, r.Target}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
			sums[k] = make([]float64, n)
			unit[k] = r.Unit
		}
		all := true
		for _, v := range r.Values {
			all = all && v.Present && v.Median > 0
		}
		if !all {
			continue
		}
		counts[k]++
		for i, v := range r.Values {
			sums[k][i] += math.Log(float64(v.Median))
		}
	}
	var out []Geomean
	for _, k := range order {
		g := Geomean{Workload: k.workload, Target: k.target, Unit: unit[k], Cells: counts[k]}
		for i := range n {
			if g.Cells == 0 {
				g.Values = append(g.Values, Value{Median: nan(), Low: nan(), High: nan()})
				continue
			}
			m := math.Exp(sums[k][i] / float64(g.Cells))
			v := Value{Present: true, Median: analysis.Float(m), Low: nan(), High: nan()}
			if i > 0 {
				v.Delta = &Delta{Ratio: analysis.Float(m / math.Exp(sums[k][0]/float64(g.Cells))), P: nan()}
			}
			g.Values = append(g.Values, v)
		}
		out = append(out, g)
	}
	return out
}
