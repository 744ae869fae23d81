package telemetry

import (
	"slices"
	"sort"
)

// CellSummary condenses one cell run's telemetry as seen from one view.
type CellSummary struct {
	Cell    string `json:"cell"`
	Repeat  int    `json:"repeat"`
	Target  string `json:"target"`
	View    string `json:"view"`
	Sampler string `json:"sampler"`
	// Samples counts the samples with rates (a first, priming sample has
	// none).
	Samples int `json:"samples"`
	// Types summarizes the CPUs by core type ("" when all are alike).
	Types    []TypeSummary   `json:"types"`
	PackageW *float64        `json:"package_w,omitempty"`
	CPUW     *float64        `json:"cpu_w,omitempty"`
	Threads  []ThreadSummary `json:"threads,omitempty"`
	Notes    []string        `json:"notes,omitempty"`
}

// TypeSummary is one core type's mean busy share (over its CPUs and the
// samples) and mean frequency.
type TypeSummary struct {
	Type     string   `json:"type"`
	CPUs     int      `json:"cpus"`
	MeanBusy *float64 `json:"mean_busy,omitempty"`
	MeanMHz  *float64 `json:"mean_mhz,omitempty"`
}

// ThreadSummary is one followed thread over a cell run: its mean busy share
// of one CPU, every CPU it was seen on, and its scheduling policy.
type ThreadSummary struct {
	Role     string   `json:"role"`
	TID      int      `json:"tid"`
	MeanBusy *float64 `json:"mean_busy,omitempty"`
	CPUs     []int    `json:"cpus"`
	Policy   string   `json:"policy,omitempty"`
}

type mean struct {
	sum float64
	n   int
}

func (m *mean) add(v *float64) {
	if v != nil {
		m.sum += *v
		m.n++
	}
}

func (m mean) value() *float64 {
	if m.n == 0 {
		return nil
	}
	return Float(m.sum / float64(m.n))
}

// Summarize groups samples by cell run and view, in the order they first
// appear, and averages each group's samples that carry rates. Notes are kept
// once each.
func Summarize(samples []Sample) []CellSummary {
	type key struct {
		cell, target, view string
		repeat             int
	}
	var order []key
	byKey := map[key]*cellAcc{}
	for _, smp := range samples {
		k := key{smp.Cell, smp.Target, smp.View, smp.Repeat}
		a := byKey[k]
		if a == nil {
			a = newCellAcc(smp)
			byKey[k] = a
			order = append(order, k)
		}
		a.add(smp)
	}
	out := make([]CellSummary, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k].summary())
	}
	return out
}

// cellAcc is one cell run and view's summary as Summarize builds it.
type cellAcc struct {
	s              CellSummary
	busy, mhz      map[string]*mean
	cpus           map[string]map[int]bool
	pkg, cpuw      mean
	threads        map[int]*ThreadSummary
	threadBusy     map[int]*mean
	threadCPUs     map[int]map[int]bool
	threadOrder    []int
	notes          map[string]bool
	typeOrderFirst []string
}

// newCellAcc starts the summary of smp's cell run and view.
func newCellAcc(smp Sample) *cellAcc {
	return &cellAcc{
		s:    CellSummary{Cell: smp.Cell, Repeat: smp.Repeat, Target: smp.Target, View: smp.View, Sampler: smp.Sampler},
		busy: map[string]*mean{}, mhz: map[string]*mean{}, cpus: map[string]map[int]bool{},
		threads: map[int]*ThreadSummary{}, threadBusy: map[int]*mean{}, threadCPUs: map[int]map[int]bool{},
		notes: map[string]bool{},
	}
}

// add takes in one sample: its notes, CPUs and threads always, its rates
// only when it has an interval.
func (a *cellAcc) add(smp Sample) {
	for _, n := range smp.Notes {
		if !a.notes[n] {
			a.notes[n] = true
			a.s.Notes = append(a.s.Notes, n)
		}
	}
	for _, c := range smp.CPUs {
		if a.cpus[c.Type] == nil {
			a.cpus[c.Type] = map[int]bool{}
			a.busy[c.Type], a.mhz[c.Type] = &mean{}, &mean{}
			a.typeOrderFirst = append(a.typeOrderFirst, c.Type)
		}
		a.cpus[c.Type][c.ID] = true
	}
	for _, t := range smp.Threads {
		ts := a.threads[t.TID]
		if ts == nil {
			ts = &ThreadSummary{Role: t.Role, TID: t.TID}
			a.threads[t.TID] = ts
			a.threadBusy[t.TID] = &mean{}
			a.threadCPUs[t.TID] = map[int]bool{}
			a.threadOrder = append(a.threadOrder, t.TID)
		}
		if t.Policy != "" {
			ts.Policy = t.Policy
		}
		a.threadCPUs[t.TID][t.CPU] = true
	}
	if smp.IntervalNs <= 0 {
		return
	}
	a.s.Samples++
	for _, c := range smp.CPUs {
		a.busy[c.Type].add(c.Busy)
		a.mhz[c.Type].add(c.MHz)
	}
	a.pkg.add(smp.PackageW)
	a.cpuw.add(smp.CPUW)
	for _, t := range smp.Threads {
		a.threadBusy[t.TID].add(t.Busy)
	}
}

// summary is the finished summary: core types in name order, threads in
// the order first seen, each thread's CPUs in order.
func (a *cellAcc) summary() CellSummary {
	types := slices.Clone(a.typeOrderFirst)
	sort.Strings(types)
	for _, t := range types {
		a.s.Types = append(a.s.Types, TypeSummary{Type: t, CPUs: len(a.cpus[t]), MeanBusy: a.busy[t].value(), MeanMHz: a.mhz[t].value()})
	}
	a.s.PackageW, a.s.CPUW = a.pkg.value(), a.cpuw.value()
	for _, tid := range a.threadOrder {
		ts := a.threads[tid]
		ts.MeanBusy = a.threadBusy[tid].value()
		for c := range a.threadCPUs[tid] {
			ts.CPUs = append(ts.CPUs, c)
		}
		sort.Ints(ts.CPUs)
		a.s.Threads = append(a.s.Threads, *ts)
	}
	return a.s
}
