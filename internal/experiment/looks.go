package experiment

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// decide judges every verdict a run's samples so far give, as the summary
// does (summary.Judged, the spec's margins), at the looks of sched.
func decide(s spec.Spec, samples []results.Sample, sched []int) []analysis.Verdict {
	cells := analysis.SortCells(results.Cells(samples))
	return summary.Verdicts(cells, spec.TargetHost, spec.TargetVM, summary.SpecMargins(s), sched)
}

// lookSeed seeds the order of a run's look index from the plan's seed,
// so each block is shuffled afresh and a resume lays it out again alike.
func lookSeed(seed uint64, index int) uint64 {
	return seed + uint64(index)*0x9e3779b97f4a7c15
}

// nextLook plans the block of repeats that leads to look index of of, from
// the verdicts that ask for more (nil when none does): for each, its
// workload's cells at its two classes and the thread counts it names, on
// the VM and on the host when it asks, from the fewest repeats any of
// them has plus one to what it asks for, never past the spec's cap.
// samples say what each has.
func nextLook(s spec.Spec, seed uint64, index, of int, verdicts []analysis.Verdict, samples []results.Sample, looks []results.Look, now time.Time) *results.Look {
	repeats := map[analysis.CellKey]int{} // the highest repeat measured
	for _, smp := range samples {
		k := analysis.CellKey{Target: smp.Target, Workload: smp.Workload, QoS: smp.QoS, Threads: smp.Threads, Params: smp.CellParams}
		repeats[k] = max(repeats[k], smp.Repeat)
	}
	// A planned cell's repeats are those of its parameters where they tell
	// it apart (results.CellParams), else those of its workload's one cell.
	measured := func(c PlannedRun) int {
		k := analysis.CellKey{Target: c.Target, Workload: c.Workload, QoS: int(c.QoS), Threads: c.Threads,
			Params: catalog.ParamsText(c.Workload, catalog.ParamsTaken(c.Workload, c.Params))}
		if n, ok := repeats[k]; ok {
			return n
		}
		k.Params = ""
		return repeats[k]
	}
	lk := results.Look{Index: index, Of: of, Seed: lookSeed(seed, index), At: now.UTC()}
	for _, v := range verdicts {
		m := v.MoreRepeats
		if m == nil {
			continue
		}
		// One block per repeats to reach: thread counts at different looks
		// go to different schedule entries.
		to := map[int][]int{}
		for _, rt := range m.Threads {
			to[rt.Repeats] = append(to[rt.Repeats], rt.Threads)
		}
		for _, n := range slices.Sorted(maps.Keys(to)) {
			b := results.LookBlock{Workload: v.VM.Workload, Phase: v.VM.Phase, QoS: []int{v.VM.High, v.VM.Low},
				Threads: slices.Sorted(slices.Values(to[n])), Targets: []string{spec.TargetVM}, To: min(n, s.MaxRepeats), Reason: render.VerdictReason(v)}
			if m.Host {
				b.Targets = []string{spec.TargetHost, spec.TargetVM}
			}
			b.From = b.To + 1
			for _, c := range planRepeats(blockSpec(s, []results.LookBlock{b}), 0, 1, 1) {
				b.From = min(b.From, measured(c)+1)
			}
			if b.From <= b.To {
				lk.Blocks = append(lk.Blocks, b)
			}
		}
	}
	if len(lk.Blocks) == 0 {
		return nil
	}
	lk.Added = len(lookCells(s, lk))
	lk.Planned = len(plannedRunsOf(s, append(slices.Clone(looks), lk)))
	return &lk
}

// blockSpec is s cut down to the cells of blocks: each matrix entry keeps
// its place (so a cell's entry index stays) with only the classes and
// thread counts some block of its workload names, the targets those
// blocks name, in the spec's order, and no warm-ups (the cells had theirs
// before their first repeat).
func blockSpec(s spec.Spec, blocks []results.LookBlock) spec.Spec {
	out := s
	out.Warmup = 0
	out.Matrix = make([]spec.MatrixEntry, len(s.Matrix))
	targets := map[string]bool{}
	for i, e := range s.Matrix {
		var classes []qos.Class
		var threads []int
		for _, b := range blocks {
			if b.Workload != e.Workload {
				continue
			}
			for _, t := range b.Targets {
				targets[t] = true
			}
			for _, c := range e.QoS {
				if slices.Contains(b.QoS, int(c)) && !slices.Contains(classes, c) {
					classes = append(classes, c)
				}
			}
			for _, t := range e.Threads {
				if slices.Contains(b.Threads, t) && !slices.Contains(threads, t) {
					threads = append(threads, t)
				}
			}
		}
		e.QoS, e.Threads = classes, threads
		out.Matrix[i] = e
	}
	out.Targets = slices.DeleteFunc(slices.Clone(s.Targets), func(t string) bool { return !targets[t] })
	return out
}

// lookCells are the timed cell runs of look lk, in the order they run:
// the repeats its blocks name, laid out as Plan lays out repeats (its
// order and targets alternating) over the cells of every block at once,
// with the look's seed.
func lookCells(s spec.Spec, lk results.Look) []PlannedRun {
	if len(lk.Blocks) == 0 {
		return nil
	}
	from, to := lk.Blocks[0].From, lk.Blocks[0].To
	for _, b := range lk.Blocks[1:] {
		from, to = min(from, b.From), max(to, b.To)
	}
	var out []PlannedRun
	for _, c := range planRepeats(blockSpec(s, lk.Blocks), lk.Seed, from, to) {
		if slices.ContainsFunc(lk.Blocks, func(b results.LookBlock) bool { return blockHolds(b, c) }) {
			out = append(out, c)
		}
	}
	return out
}

// plannedRunsOf are the keys of every timed cell run in the plan of s
// grown by looks, each once.
func plannedRunsOf(s spec.Spec, looks []results.Look) []results.CellRunKey {
	out := plannedRuns(s)
	seen := map[results.CellRunKey]bool{}
	for _, k := range out {
		seen[k] = true
	}
	for _, lk := range looks {
		for _, c := range lookCells(s, lk) {
			if k := c.RunKey(); !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// lookText is the line a look's block gets on the log: "look 2 of 3, 12
// cell runs: 6 more repeats of vm fp at 2 threads, repeats 7-12 (fp
// undecided: the verdict's reason)", one clause per block, from the
// block's values.
func lookText(lk results.Look) string {
	var parts []string
	for _, b := range lk.Blocks {
		what := b.Workload
		if b.Phase != "" {
			what += " " + b.Phase
		}
		targets := slices.Clone(b.Targets)
		slices.Reverse(targets) // vm first: the VM's ratio is what is undecided
		t := fmt.Sprintf("%d more repeats of %s %s at %s, repeats %d-%d", b.To-b.From+1,
			strings.Join(targets, " and "), what, threadsText(b.Threads), b.From, b.To)
		if b.Reason != "" {
			t += " (" + what + " undecided: " + b.Reason + ")"
		}
		parts = append(parts, t)
	}
	return fmt.Sprintf("look %d of %d, %s: %s", lk.Index, lk.Of, units.Plural(lk.Added, "cell run"), strings.Join(parts, "; "))
}

// threadsText says thread counts: "2 threads", "1 and 2 threads".
func threadsText(ts []int) string {
	var s []string
	for _, t := range ts {
		s = append(s, fmt.Sprint(t))
	}
	if len(ts) == 1 {
		return units.Plural(ts[0], "thread")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1] + " threads"
}

// blockHolds reports whether c is one of block b's cell runs.
func blockHolds(b results.LookBlock, c PlannedRun) bool {
	return c.Workload == b.Workload && slices.Contains(b.QoS, int(c.QoS)) && slices.Contains(b.Threads, c.Threads) &&
		slices.Contains(b.Targets, c.Target) && c.Repeat >= b.From && c.Repeat <= b.To
}

// looksOf are the repeats per cell at each look a run of s may take: its
// schedule when it measures both host and vm (a verdict needs both), else
// one look, its repeats.
func looksOf(s spec.Spec) []int {
	if !slices.Contains(s.Targets, spec.TargetHost) || !slices.Contains(s.Targets, spec.TargetVM) {
		return []int{s.Repeats}
	}
	return analysis.Schedule(s.Repeats, s.MaxRepeats)
}

// runLooks takes the looks after the planned cells have run (r ran them):
// first it finishes the blocks an earlier session of the run recorded (a
// resume), then, while a verdict asks for more repeats and the cap allows
// another look, it plans a block (recorded in run.json before its first
// cell run), runs it through r (the same targets, telemetry, contention
// check and progress) and decides again. Deciding happens between cell
// runs, never inside one. seed is the plan's; st gets the blocks' stats.
func (x *execution) runLooks(ctx context.Context, r *runner, seed uint64, st *Stats) error {
	sched := looksOf(x.s)
	if len(sched) < 2 {
		return nil
	}
	var looks []results.Look
	if x.dir != nil {
		looks = x.dir.Run.Looks
	}
	for _, lk := range looks {
		x.sayLook("resume: " + lookText(lk))
		if err := x.runBlock(ctx, r, lk, st); err != nil {
			return err
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		samples := results.Samples(append(slices.Clone(x.prior), x.out.Records()...))
		verdicts := decide(x.s, samples, sched)
		var lk *results.Look
		if index := len(looks) + 2; index <= len(sched) {
			lk = nextLook(x.s, seed, index, len(sched), verdicts, samples, looks, time.Now())
		}
		if lk == nil {
			for _, line := range lookEndText(verdicts, looks) {
				// Kept as a note too: run.json and the report's run
				// notes say what the looks took.
				x.sayLook(line)
				x.out.Notes = append(x.out.Notes, Note{Kind: NoteInfo, Text: line})
				if x.dir != nil {
					x.dir.Run.Notes = append(x.dir.Run.Notes, line)
				}
			}
			return nil
		}
		looks = append(looks, *lk)
		if x.dir != nil {
			x.dir.Run.Looks, x.dir.Run.Planned = looks, lk.Planned
			if err := x.dir.SaveRun(); err != nil {
				return err
			}
		}
		x.sayLook(lookText(*lk))
		if err := x.runBlock(ctx, r, *lk, st); err != nil {
			return err
		}
	}
}

// lookEndText says, for each verdict a block of looks was added for, what
// it took: "looks: fp yes after 12 repeats at 2 threads, 2 looks of 3",
// worded by render from the verdict's own looks (each thread count's
// repeats as judged). None without looks.
func lookEndText(verdicts []analysis.Verdict, looks []results.Look) []string {
	var out []string
	for _, v := range verdicts {
		if !lookedFor(v, looks) {
			continue
		}
		if took := render.LooksTook(v); took != "" {
			out = append(out, "looks: "+took)
		}
	}
	return out
}

// lookedFor reports whether any of looks added a block for verdict v.
func lookedFor(v analysis.Verdict, looks []results.Look) bool {
	for _, lk := range looks {
		for _, b := range lk.Blocks {
			if b.Workload == v.VM.Workload && b.Phase == v.VM.Phase {
				return true
			}
		}
	}
	return false
}

// sayLook tells the user line, about the looks: to Env.OnLook, else the
// log.
func (x *execution) sayLook(line string) {
	if x.env.OnLook != nil {
		x.env.OnLook(line)
		return
	}
	fmt.Fprintln(x.log, line)
}

// runBlock runs look lk's cell runs through r, skipping those finished
// already (by an earlier session, or earlier in this one), and adds its
// stats to st.
func (x *execution) runBlock(ctx context.Context, r *runner, lk results.Look, st *Stats) error {
	if r.Finished == nil {
		r.Finished = map[results.CellRunKey]bool{}
	}
	for _, cr := range x.out.Runs {
		r.Finished[cr.Cell.RunKey()] = true
	}
	r.Before += len(r.Cells)
	r.Cells = lookCells(x.s, lk)
	bst, err := r.Run(ctx)
	st.add(bst)
	return err
}

// add counts o's runs and times in s as well.
func (s *Stats) add(o Stats) {
	s.Runs += o.Runs
	s.Skipped += o.Skipped
	s.Warmups += o.Warmups
	s.MeasuredNs += o.MeasuredNs
	s.CallNs += o.CallNs
	t, u := &s.Telemetry, o.Telemetry
	if n := t.Samples + u.Samples; n > 0 {
		t.Within10ms = (t.Within10ms*float64(t.Samples) + u.Within10ms*float64(u.Samples)) / float64(n)
	}
	t.Samples += u.Samples
	t.SamplerCPU += u.SamplerCPU
}
