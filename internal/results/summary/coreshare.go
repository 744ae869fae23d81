package summary

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/telemetry"
)

// CoreShares says, from telemetry, where a cell's workers ran when its
// target has more than one core type: for each cell run, the worker that
// spent the largest share of its busy time on the slower type (E, or the
// lower capacity), with that share, as [allocation] (docs/references.md)
// put it ("67% on P, 33% on E"). It is a share of time, from the CPU each
// sample saw the thread on, not of work. Where a target's telemetry shows
// one core type, or no thread's CPU (macOS powermetrics reports clusters,
// not threads), one finding per target says the share is not available
// and why.
func CoreShares(samples []telemetry.Sample) []analysis.Finding {
	type runKey struct {
		cell, target string
		repeat       int
	}
	type acc struct {
		types   map[int]string
		byType  map[string]map[string]float64 // role -> type -> busy time
		sampler string
	}
	runs := map[runKey]*acc{}
	var order []runKey
	for _, s := range samples {
		if s.Cell == "" || (s.View != telemetry.ViewHost && s.View != telemetry.ViewGuest) || (s.Target != "host" && s.View == telemetry.ViewHost) {
			continue // only each target's own view of its workers
		}
		k := runKey{s.Cell, s.Target, s.Repeat}
		a := runs[k]
		if a == nil {
			a = &acc{types: map[int]string{}, byType: map[string]map[string]float64{}, sampler: s.Sampler}
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
	var out []analysis.Finding
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
		best, bestShare := "", -1.0
		for role, byType := range a.byType {
			var total float64
			for _, v := range byType {
				total += v
			}
			if total == 0 {
				continue
			}
			if share := byType[slow] / total; share > bestShare || (share == bestShare && role < best) {
				best, bestShare = role, share
			}
		}
		if best == "" || bestShare <= 0 {
			continue
		}
		delete(unavailable, k.target)
		out = append(out, analysis.Finding{Kind: "core-share", Target: k.target, Workload: cellWorkload(k.cell),
			Text: fmt.Sprintf("%s, repeat %d: %s spent %.0f%% of its busy time on %s cores, %.0f%% on the others (telemetry; a share of time, not of work)",
				k.cell, k.repeat, best, 100*bestShare, slow, 100*(1-bestShare))})
	}
	for _, t := range targets {
		if why, ok := unavailable[t]; ok {
			out = append(out, analysis.Finding{Kind: "core-share", Target: t, Workload: "all",
				Text: "core-type share not available: " + why})
		}
	}
	return out
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

// cellWorkload is the workload named in a cell key ("host mmul qos=33
// threads=3 loops=..." -> "mmul").
func cellWorkload(cell string) string {
	f := strings.Fields(cell)
	if len(f) >= 2 {
		return f[1]
	}
	return cell
}
