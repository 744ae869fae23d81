package summary

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// coreShares says, from telemetry, where each cell's workers ran when its
// target has more than one core type: per cell, for each repeat the share
// of busy time the worker most on the slower type (E, or the lower
// capacity) spent there, as [allocation] (docs/references.md) put it ("67%
// on P, 33% on E"), and over the repeats their median and range. Every
// such cell gets its line, 0% included: the contrast between classes is
// what the finding is for. It is a share of time, from the CPU each sample
// saw the thread on, not of work. Where a target's telemetry shows one core
// type, or no thread's CPU (macOS powermetrics reports clusters, not
// threads), one finding per target says the share is not available and
// why. split are the workloads whose cells carry their parameters
// (SplitWorkloads): their findings name them too.
func coreShares(samples []telemetry.Sample, split map[string]bool) []analysis.Finding {
	order, runs := coreRuns(samples)
	cells := map[shareCell]*cellShares{}
	var cellOrder []shareCell
	unavailable := map[string]string{}
	var targets []string
	for _, k := range order {
		a := runs[k]
		kinds := map[string]bool{}
		for _, t := range a.types {
			kinds[t] = true
		}
		if !slices.Contains(targets, k.target) {
			targets = append(targets, k.target)
		}
		if len(kinds) < 2 {
			why := "its telemetry shows one core type"
			if a.sampler == telemetry.SamplerPowermetrics {
				why = "powermetrics reports clusters, not the CPU each thread ran on"
			}
			if _, seen := unavailable[k.target]; !seen {
				unavailable[k.target] = why
			}
			continue
		}
		slow := slowerType(kinds)
		most, ok := a.mostOn(slow)
		if !ok {
			continue
		}
		ck := shareCell{k.cell, k.target}
		c := cells[ck]
		if c == nil {
			c = &cellShares{slow: slow}
			cells[ck] = c
			cellOrder = append(cellOrder, ck)
		}
		c.shares = append(c.shares, most)
		delete(unavailable, k.target)
	}
	var out []analysis.Finding
	for _, ck := range cellOrder {
		out = append(out, shareFinding(ck, cells[ck], split))
	}
	slices.SortStableFunc(out, func(a, b analysis.Finding) int {
		return analysis.CompareKeys(analysis.CellKey{Target: a.Target, Workload: a.Workload, QoS: a.QoS, Threads: a.Threads, Params: a.Params},
			analysis.CellKey{Target: b.Target, Workload: b.Workload, QoS: b.QoS, Threads: b.Threads, Params: b.Params})
	})
	for _, t := range targets {
		if why, ok := unavailable[t]; ok {
			out = append(out, analysis.Finding{Kind: "core-share", Target: t, Workload: "all",
				CoreShare: &analysis.CoreShare{Unavailable: why}})
		}
	}
	return out
}

// coreRunKey names a cell run of a target.
type coreRunKey struct {
	cell, target string
	repeat       int
}

// coreRun is what a cell run's telemetry says of where its workers ran.
type coreRun struct {
	types   map[int]string                // CPU id -> core type
	byType  map[string]map[string]float64 // role -> type -> busy time
	sampler string
}

// coreRuns gathers, per cell run in the order they first appear, its
// CPUs' core types and its workers' busy time on each type, from each
// target's own view of its workers.
func coreRuns(samples []telemetry.Sample) ([]coreRunKey, map[coreRunKey]*coreRun) {
	runs := map[coreRunKey]*coreRun{}
	var order []coreRunKey
	for _, s := range samples {
		if s.Cell == "" || (s.View != telemetry.ViewHost && s.View != telemetry.ViewGuest) || (s.Target != "host" && s.View == telemetry.ViewHost) {
			continue // only each target's own view of its workers
		}
		k := coreRunKey{s.Cell, s.Target, s.Repeat}
		a := runs[k]
		if a == nil {
			a = &coreRun{types: map[int]string{}, byType: map[string]map[string]float64{}, sampler: s.Sampler}
			runs[k] = a
			order = append(order, k)
		}
		for _, c := range s.CPUs {
			if c.Type != "" {
				a.types[c.ID] = c.Type
			}
		}
		for _, th := range s.Threads {
			if !strings.HasPrefix(th.Role, "worker ") {
				continue
			}
			t, ok := a.types[th.CPU]
			if !ok {
				continue
			}
			w := 1.0
			if th.Busy != nil {
				w = *th.Busy
			}
			if a.byType[th.Role] == nil {
				a.byType[th.Role] = map[string]float64{}
			}
			a.byType[th.Role][t] += w
		}
	}
	return order, runs
}

// mostOn is the largest share of a worker's busy time spent on core type
// slow; false when no worker was seen busy.
func (a *coreRun) mostOn(slow string) (most float64, ok bool) {
	for _, byType := range a.byType {
		var total float64
		for _, v := range byType {
			total += v
		}
		if total == 0 {
			continue
		}
		most, ok = max(most, byType[slow]/total), true
	}
	return most, ok
}

// shareCell names a cell of a target.
type shareCell struct{ cell, target string }

// cellShares are a cell's shares on its slower core type, one per repeat.
type cellShares struct {
	slow   string
	shares []float64
}

// shareFinding is a cell's shares: their median and range.
func shareFinding(ck shareCell, c *cellShares, split map[string]bool) analysis.Finding {
	f := cellFinding(ck.cell, split)
	f.Kind, f.Target = "core-share", ck.target
	sorted := slices.Sorted(slices.Values(c.shares))
	mid := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		mid = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	f.CoreShare = &analysis.CoreShare{Slow: c.slow, Median: mid, Shares: sorted}
	return f
}

// slowerType picks the slower of the core types seen: "E" against "P",
// else the lowest "capacity N", else the first by name.
func slowerType(kinds map[string]bool) string {
	if kinds["E"] {
		return "E"
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		var a, b int
		_, ea := fmt.Sscanf(names[i], "capacity %d", &a)
		_, eb := fmt.Sscanf(names[j], "capacity %d", &b)
		if ea == nil && eb == nil {
			return a < b
		}
		return names[i] < names[j]
	})
	return names[0]
}

// cellFinding names a finding after the cell a telemetry cell key names
// ("host mmul qos=33 threads=3 loops=...", catalog.ParseSeriesKey): its
// workload, class and threads, and its parameters where split says they
// tell its workload's cells apart (analysis.CellKey.Params). A key that
// names no workload names the finding whole.
func cellFinding(cell string, split map[string]bool) analysis.Finding {
	k, _, _ := catalog.ParseSeriesKey(cell) // what it cannot read stays zero, as the finding's fields
	f := analysis.Finding{Workload: k.Workload, QoS: k.QoS, Threads: k.Threads}
	if split[k.Workload] {
		f.Params = catalog.ParamsText(k.Workload, catalog.ParamsTaken(k.Workload, k.Params))
	}
	if f.Workload == "" {
		f.Workload = cell
	}
	return f
}
