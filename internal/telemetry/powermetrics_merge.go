package telemetry

import (
	"fmt"
	"sort"
)

// mergePowermetricsSamples folds consecutive samples into one covering their
// total interval, so that a Sample call reports everything since the
// previous one even when powermetrics produced several samples meanwhile.
// Busy and power are averaged over time; MHz, a frequency while active, over
// active time. A sample without an interval weighs as much as the mean of
// the others (or 1 if none has one).
func mergePowermetricsSamples(in []Sample) Sample {
	if len(in) == 1 {
		return in[0]
	}
	out := Sample{Sampler: SamplerPowermetrics}
	if len(in) == 0 {
		return out
	}
	m := pmMerge{cpus: map[int]*pmAverage{}, clusters: map[string]*pmAverage{}, seen: map[string]bool{}}
	weights := pmWeights(in)
	for i, s := range in {
		out.IntervalNs += s.IntervalNs
		m.add(s, weights[i])
	}
	out.Notes = m.notes
	sort.Ints(m.cpuOrder)
	for _, id := range m.cpuOrder {
		a := m.cpus[id]
		out.CPUs = append(out.CPUs, CPU{ID: id, Type: a.typ, Busy: a.busy.value(), MHz: a.mhz()})
	}
	for _, name := range m.clusterOrder {
		a := m.clusters[name]
		out.Clusters = append(out.Clusters, Cluster{Name: name, Type: a.typ, Busy: a.busy.value(), MHz: a.mhz(), Power: a.power.value()})
	}
	out.PackageW = m.pkg.value()
	out.CPUW = m.cpuW.value()
	if m.pkg.n > 0 && m.pkg.n < len(in) {
		out.Notes = append(out.Notes, fmt.Sprintf("powermetrics: package power from %d of %d samples merged", m.pkg.n, len(in)))
	}
	if m.cpuW.n > 0 && m.cpuW.n < len(in) {
		out.Notes = append(out.Notes, fmt.Sprintf("powermetrics: CPU power from %d of %d samples merged", m.cpuW.n, len(in)))
	}
	return out
}

// pmWeights is each sample's weight in a merge: its interval, or for a
// sample without one the mean of the others' (1 if none has one).
func pmWeights(in []Sample) []float64 {
	var known, total float64
	for _, s := range in {
		if s.IntervalNs > 0 {
			known++
			total += float64(s.IntervalNs)
		}
	}
	fill := 1.0
	if known > 0 {
		fill = total / known
	}
	weights := make([]float64, len(in))
	for i, s := range in {
		weights[i] = fill
		if s.IntervalNs > 0 {
			weights[i] = float64(s.IntervalNs)
		}
	}
	return weights
}

// pmMerge is what mergePowermetricsSamples has folded in so far: CPUs and
// clusters in the order first seen, power, and each note once.
type pmMerge struct {
	cpus         map[int]*pmAverage
	cpuOrder     []int
	clusters     map[string]*pmAverage
	clusterOrder []string
	pkg, cpuW    pmMean
	seen         map[string]bool
	notes        []string
}

func (m *pmMerge) add(s Sample, w float64) {
	for _, c := range s.CPUs {
		a := m.cpus[c.ID]
		if a == nil {
			a = &pmAverage{}
			m.cpus[c.ID] = a
			m.cpuOrder = append(m.cpuOrder, c.ID)
		}
		a.add(w, c.Type, c.Busy, c.MHz)
	}
	for _, c := range s.Clusters {
		a := m.clusters[c.Name]
		if a == nil {
			a = &pmAverage{}
			m.clusters[c.Name] = a
			m.clusterOrder = append(m.clusterOrder, c.Name)
		}
		a.add(w, c.Type, c.Busy, c.MHz)
		a.power.add(w, c.Power)
	}
	m.pkg.add(w, s.PackageW)
	m.cpuW.add(w, s.CPUW)
	for _, n := range s.Notes {
		if !m.seen[n] {
			m.seen[n] = true
			m.notes = append(m.notes, n)
		}
	}
}

// pmMean is a weighted mean of the values that are known.
type pmMean struct {
	sum, weight float64
	n           int
}

func (m *pmMean) add(w float64, v *float64) {
	if v == nil {
		return
	}
	m.sum += w * *v
	m.weight += w
	m.n++
}

func (m pmMean) value() *float64 {
	if m.weight == 0 {
		return nil
	}
	return Float(m.sum / m.weight)
}

// pmAverage merges one CPU's or cluster's readings.
type pmAverage struct {
	typ   string
	busy  pmMean
	power pmMean
	// Frequency weighted by active time; plain time-weighted when the core
	// was never active, or its busy share is unknown.
	activeMHz, plainMHz pmMean
}

func (a *pmAverage) add(w float64, typ string, busy, mhz *float64) {
	if typ != "" {
		a.typ = typ
	}
	a.busy.add(w, busy)
	a.plainMHz.add(w, mhz)
	if busy != nil {
		activeTime := w * *busy
		a.activeMHz.add(activeTime, mhz)
	}
}

func (a *pmAverage) mhz() *float64 {
	if v := a.activeMHz.value(); v != nil {
		return v
	}
	return a.plainMHz.value()
}
