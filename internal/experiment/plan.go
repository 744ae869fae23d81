package experiment

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// PlannedRun is one run of the plan: one workload at one QoS class with one
// thread count on one target, in one repeat (or a warm-up before the first).
// A cell is what it measures, whichever repeat (SeriesKey); analysis.Cell is
// a cell's statistics.
type PlannedRun struct {
	Target   string    `json:"target"`
	Workload string    `json:"workload"`
	QoS      qos.Class `json:"qos"`
	Threads  int       `json:"threads"` // processes for procs
	// Repeat counts timed runs from 1; it is 0 on a warm-up.
	Repeat int `json:"repeat"`
	// Warmup counts the untimed runs before the first repeat from 1; it is 0
	// on a timed run. A warm-up's records are not samples.
	Warmup int `json:"warmup,omitempty"`
	// Entry is the index of the matrix entry the cell comes from.
	Entry int `json:"entry"`
	// Params are the workload's, from its matrix entry.
	catalog.Params
	// DataSeed seeds generated input and pi's random numbers (Spec.DataSeed).
	DataSeed uint64 `json:"data_seed,omitempty"`
}

// Timed reports whether the run's records are samples (not a warm-up).
func (c PlannedRun) Timed() bool { return c.Warmup == 0 }

// Series names what the run measures, whichever repeat it is. The matrix
// entry's index is left out, so reordering a spec's entries keeps its keys.
func (c PlannedRun) Series() catalog.SeriesKey {
	return catalog.SeriesKey{Target: c.Target, Workload: c.Workload, QoS: int(c.QoS), Threads: c.Threads, Params: c.Params}
}

// SeriesKey is Series's text, e.g. "host fp qos=9 threads=4
// loops=200000000": the label of the run's records.
func (c PlannedRun) SeriesKey() string { return c.Series().String() }

// Key names one run of the plan uniquely and stably (a finished run's key
// lets --resume skip it): SeriesKey followed by "repeat=N", or "warmup=N"
// on a warm-up. Its format is part of the results files; do not change it.
func (c PlannedRun) Key() string {
	if !c.Timed() {
		return fmt.Sprintf("%s warmup=%d", c.SeriesKey(), c.Warmup)
	}
	return c.RunKey().String()
}

// RunKey names a timed run of c by its structured fields, as
// results.Record.RunKey names the run a record belongs to.
func (c PlannedRun) RunKey() results.CellRunKey {
	return results.CellRunKey{SeriesKey: c.Series(), Repeat: c.Repeat}
}

// plannedRuns are the keys of every timed cell run in the plan of s.
func plannedRuns(s spec.Spec) []results.CellRunKey {
	cells, _ := Plan(s)
	var out []results.CellRunKey
	for _, c := range cells {
		if c.Timed() {
			out = append(out, c.RunKey())
		}
	}
	return out
}

// PlannedOf are the keys of every timed cell run planned for the results
// directory d, from the spec its run.json records and the blocks its looks
// added; nil when that spec cannot be read (results.Assess then goes by
// run.json's count).
func PlannedOf(d *results.Dir) []results.CellRunKey {
	s := d.Run.Spec.Value()
	if len(s.Matrix) == 0 {
		return nil
	}
	return plannedRunsOf(s, d.Run.Looks)
}

func (c PlannedRun) String() string {
	if !c.Timed() {
		return fmt.Sprintf("%s: %s qos=%s threads=%d warm-up %d", c.Target, c.Workload, c.QoS, c.Threads, c.Warmup)
	}
	return fmt.Sprintf("%s: %s qos=%s threads=%d repeat %d", c.Target, c.Workload, c.QoS, c.Threads, c.Repeat)
}

// entrySeries expands the matrix entry at index entry into its cells,
// classes outermost then thread counts, with no target or repeat yet.
func entrySeries(e spec.MatrixEntry, entry int) []PlannedRun {
	var out []PlannedRun
	for _, c := range e.QoS {
		for _, t := range e.Threads {
			out = append(out, PlannedRun{Workload: e.Workload, QoS: c, Threads: t, Entry: entry, Params: catalog.ParamsTaken(e.Workload, e.Params)})
		}
	}
	return out
}

// pcgStream is the PCG stream plans draw from; with the seed it fixes the
// shuffle. Changing it changes every recorded plan.
const pcgStream = 0x716f736c6162 // "qoslab"

// Plan lays a valid spec out as the runs to make, in order, and returns the
// seed of the shuffle (the spec's, or one it picked; 0 for sequential) for
// the run to record: the same spec and seed give the same plan.
//
// Repeats are outermost, so slow drift (heat, other load) spreads over every
// cell instead of landing on some. Within a repeat:
//
//   - interleaved: the repeat's cells are shuffled (a PCG seeded with the
//     seed), so no cell always follows the same other cell; each cell runs
//     on every target back to back, and the target that goes first
//     alternates from cell to cell, A B, B A, A B, ..., and starts the other
//     way on the next repeat. Alternating in pairs (ABBA) cancels a linear
//     drift over every four runs and makes each target follow the other as
//     often as itself, so neither target always runs right after the
//     other's heat or disk writeback; flipping per repeat keeps a cell that
//     lands on the same position from always seeing the same order.
//   - sequential: matrix order (classes, then thread counts), targets as
//     listed: what one would write by hand, and what bench does.
//
// Warm-ups (Spec.Warmup of them) run just before a cell's first timed run
// on the same target, so first-run effects on that target (page faults, a
// VM's sparse scratch disk allocating blocks on the host) land on them.
func Plan(s spec.Spec) ([]PlannedRun, uint64) {
	var seed uint64
	interleaved := s.Order != spec.OrderSequential
	switch {
	case s.Seed != nil:
		seed = *s.Seed
	case interleaved:
		seed = rand.Uint64()
	}
	return planRepeats(s, seed, 1, s.Repeats), seed
}

// planRepeats lays out repeats from..to of s's cells as Plan does, the
// shuffle seeded with seed, the warm-ups with repeat 1 (so none when from
// is above it). Plan lays out 1..Repeats; a look's block (lookCells) lays
// out its repeats of a spec cut down to the block's cells, so a block is
// interleaved exactly as a plan is.
func planRepeats(s spec.Spec, seed uint64, from, to int) []PlannedRun {
	interleaved := s.Order != spec.OrderSequential
	var series []PlannedRun
	for i, e := range s.Matrix {
		series = append(series, entrySeries(e, i)...)
	}
	for i := range series {
		series[i].DataSeed = s.DataSeed
	}
	reversed := slices.Clone(s.Targets)
	slices.Reverse(reversed)
	rng := rand.NewPCG(seed, pcgStream)

	out := make([]PlannedRun, 0, len(series)*len(s.Targets)*(max(to-from+1, 0)+s.Warmup))
	order := make([]int, len(series))
	for r := from; r <= to; r++ {
		for i := range order {
			order[i] = i
		}
		if interleaved {
			shuffle(order, rng)
		}
		for pos, i := range order {
			targets := s.Targets
			if interleaved && (pos+r-1)%2 == 1 {
				targets = reversed
			}
			for _, t := range targets {
				c := series[i]
				c.Target = t
				if r == 1 {
					for w := 1; w <= s.Warmup; w++ {
						wc := c
						wc.Warmup = w
						out = append(out, wc)
					}
				}
				c.Repeat = r
				out = append(out, c)
			}
		}
	}
	return out
}

// shuffle is Fisher-Yates over PCG's raw output rather than rand.Shuffle:
// PCG's output is fixed by its definition, while the standard library may
// change how Shuffle draws, and a recorded seed must rebuild the same plan
// with any Go release. The modulo bias is below 2^-50 for any matrix size.
func shuffle(xs []int, rng *rand.PCG) {
	for i := len(xs) - 1; i > 0; i-- {
		j := int(rng.Uint64() % uint64(i+1))
		xs[i], xs[j] = xs[j], xs[i]
	}
}
