// Command simsequential simulates whole runs of the contention experiment
// decided as the engine decides them (internal/analysis.Simulate), the
// fixed designs (one look at 6 repeats, one at 18) beside the sequential
// one (6 repeats, a block more while undecided, up to 18), under each
// noise model with the VM's true ratio at 2 threads at the band's edges
// (1.25x, 0.8x) and at 1x, and prints a Markdown table of the answers
// with the yes rate's 95% Clopper-Pearson interval.
// scripts/sim-sequential.sh runs it; docs/design.md quotes its table.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
)

func main() {
	runs := flag.Int("runs", 10000, "simulated runs per case")
	workers := flag.Int("workers", 1, "cases simulated at once")
	seed := flag.Uint64("seed", 1, "the simulation's seed")
	only := flag.String("model", "", "simulate this noise model only ("+modelNames()+"; all when empty)")
	ignoreFlags := flag.Bool("ignore-flags", false, "decide without the flagged cells' check: the statistical rule alone")
	flag.Parse()
	if *runs < 1 || *workers < 1 {
		fmt.Fprintf(os.Stderr, "simsequential: -runs %d and -workers %d: each must be at least 1\n", *runs, *workers)
		os.Exit(2)
	}
	var cases []analysis.SimCase
	for _, m := range analysis.NoiseModels {
		if *only != "" && string(m) != *only {
			continue
		}
		for _, ratio := range []float64{1.25, 0.8, 1} {
			for _, d := range [][2]int{{6, 0}, {18, 0}, {6, 18}} {
				cases = append(cases, analysis.SimCase{Model: m, Ratio: ratio, Repeats: d[0], MaxRepeats: d[1], Runs: *runs, Seed: *seed, IgnoreFlags: *ignoreFlags})
			}
		}
	}
	if len(cases) == 0 {
		fmt.Fprintf(os.Stderr, "simsequential: -model %q: allowed %s\n", *only, modelNames())
		os.Exit(2)
	}
	start := time.Now()
	out := make([]analysis.SimResult, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = analysis.Simulate(cases[i])
				fmt.Fprintf(os.Stderr, "%s %gx %s done (%s)\n", cases[i].Model, cases[i].Ratio, render.SimDesign(cases[i]), time.Since(start).Round(time.Second))
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()

	checked := "flagged cells checked, as the verdict does"
	if *ignoreFlags {
		checked = "flagged cells not checked: the statistical rule alone"
	}
	fmt.Printf("%d simulated runs per case, seed %d, %s (%s)\n\n", *runs, *seed, checked, time.Since(start).Round(time.Second))
	fmt.Println("| noise | vm ratio at 2 threads | design | yes [95% CI] | no | inconclusive (at the cap) | repeats a VM cell | yes by look |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range out {
		rate, low, high := r.YesRate(0.95)
		what := "1x (yes is right)"
		if r.Ratio != 1 {
			what = fmt.Sprintf("%gx (edge: yes is false)", r.Ratio)
		}
		looks := make([]string, len(r.YesAtLook))
		for i, n := range r.YesAtLook {
			looks[i] = fmt.Sprint(n)
		}
		pct := func(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }
		fmt.Printf("| %s | %s | %s | %s [%s..%s] | %s | %s (%s) | %.1f | %s |\n", r.Model, what, render.SimDesign(r.SimCase), pct(rate), pct(low), pct(high),
			pct(float64(r.No)/float64(r.Runs)), pct(float64(r.Inconclusive)/float64(r.Runs)), pct(float64(r.Capped)/float64(r.Runs)),
			r.MeanRepeats(), strings.Join(looks, " / "))
	}
}

// modelNames lists the noise models: "lognormal, mixture, drift".
func modelNames() string {
	var names []string
	for _, m := range analysis.NoiseModels {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}
