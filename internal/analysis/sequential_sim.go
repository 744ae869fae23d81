package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The simulation of whole runs that proves the sequential design keeps its
// promise: a run of the contention experiment's shape (fp at QoS 33 and 9,
// 1 and 2 threads, host and vm) is drawn under a noise model, decided as
// the engine decides it (SubsumptionAt at each look; a block more of the
// cells MoreRepeats names; again at the next look), and the answers
// counted. With the true VM ratio at the band's edge every yes is false.

// NoiseModel is how a simulated run's repeats vary.
type NoiseModel string

const (
	// NoiseLognormal means every repeat's rate lognormal about its cell's,
	// sigma 3% on the host (as measured) and 15% in the VM.
	NoiseLognormal NoiseModel = "lognormal"
	// NoiseMixture means a busy 2-CPU machine's two groups: each repeat of
	// either class at 2 threads in the VM drops to 0.6x with probability
	// 0.35 (other work took one of the two vCPUs), sigma 3% otherwise.
	NoiseMixture NoiseModel = "mixture"
	// NoiseDrift means rates decline 1% a repeat over the run (cell run by cell
	// run, in the run's interleaved order), sigma 3% on the host and 5% in
	// the VM.
	NoiseDrift NoiseModel = "drift"
)

// NoiseModels are the models the simulation runs, in table order.
var NoiseModels = []NoiseModel{NoiseLognormal, NoiseMixture, NoiseDrift}

// SimCase is one case of the simulation: a noise model, the VM's true
// ratio of the high class's rate over the low one's at 2 threads (at 1
// thread it is 1x), and the design: one look at Repeats when MaxRepeats <=
// Repeats, else looks until MaxRepeats. One thread count at the band's
// edge and the other well inside is the configuration most favourable to
// a false yes: yes needs every thread count's interval inside, so a false
// yes needs only the one at the edge to err; with both at the edge it
// needs both.
type SimCase struct {
	Model      NoiseModel
	Ratio      float64
	Repeats    int
	MaxRepeats int
	Runs       int
	Seed       uint64
	// IgnoreFlags decides without the flagged cells' check (their
	// dispersion left out): the statistical rule alone, whose promise does
	// not lean on the check (which only ever turns a yes inconclusive).
	IgnoreFlags bool
}

// Sequential says the case's design has more than one look: its cap is
// above its repeats.
func (c SimCase) Sequential() bool { return c.MaxRepeats > c.Repeats }

// SimResult counts a case's answers.
type SimResult struct {
	SimCase
	Yes, No, Inconclusive int
	// Capped counts the inconclusive runs that reached the cap.
	Capped int
	// Repeats sums, over the runs, the repeats of the VM's cells at the
	// end (the mean over the four), for the mean a run took.
	Repeats float64
	// YesAtLook counts the yes answers by the last look they took (index
	// 0 is look 1).
	YesAtLook []int
}

// YesRate is the share of runs answered yes, with its Clopper-Pearson
// interval of the coverage asked.
func (r SimResult) YesRate(confidence float64) (rate, low, high float64) {
	low, high = ClopperPearson(r.Yes, r.Runs, confidence)
	return float64(r.Yes) / float64(r.Runs), low, high
}

// MeanRepeats is the mean repeats per VM cell a run took.
func (r SimResult) MeanRepeats() float64 { return r.Repeats / float64(r.Runs) }

// simThreads and the classes of the simulated contention run.
var simThreads = []int{1, 2}

const (
	simHigh, simLow = 33, 9
	// simHostEffect is the host's QoS effect under contention.
	simHostEffect = 250.0
	// simRate is the low class's rate per thread in the VM, and the high
	// class's on the host (loops/s).
	simRate = 18e6
)

// simRun is one simulated run's repeats, cell by cell.
type simRun struct {
	c     SimCase
	rng   *rand.Rand
	rates map[CellKey][]float64
	// clock counts the cell runs so far, for the drift.
	clock int
}

// Simulate runs the case's runs and counts their answers. It is a pure
// function of the case: the seed and each run's index seed its random
// numbers.
func Simulate(c SimCase) SimResult {
	r := SimResult{SimCase: c, YesAtLook: make([]int, len(Schedule(c.Repeats, c.MaxRepeats)))}
	for i := range c.Runs {
		run := &simRun{c: c, rng: rand.New(rand.NewPCG(c.Seed, uint64(i))), rates: map[CellKey][]float64{}} //nolint:gosec // G404: a simulation's reproducible numbers
		v := run.decide()
		switch v.Outcome {
		case Subsumed:
			r.Yes++
			r.YesAtLook[lookPlan{looks: v.Looks}.lastLook()-1]++
		case NotSubsumed:
			r.No++
		default:
			r.Inconclusive++
			if v.Reason.Cap != nil {
				r.Capped++
			}
		}
		n := 0
		for _, t := range simThreads {
			for _, q := range []int{simHigh, simLow} {
				n += len(run.rates[CellKey{Target: "vm", Workload: "fp", QoS: q, Threads: t}])
			}
		}
		r.Repeats += float64(n) / 4
	}
	return r
}

// decide draws the run's first repeats and decides as the engine does:
// while the verdict asks for more repeats, a block of the cells it names,
// and again.
func (s *simRun) decide() Verdict {
	schedule := Schedule(s.c.Repeats, s.c.MaxRepeats)
	s.block(simThreads, true, s.c.Repeats)
	for {
		v := subsumptionAt(s.cells(), "fp", "", "host", "vm", DefaultMargins(), schedule, false)
		if v.MoreRepeats == nil {
			return v
		}
		for _, m := range v.MoreRepeats.Threads {
			s.block([]int{m.Threads}, v.MoreRepeats.Host, m.Repeats)
		}
	}
}

// block adds repeats to the cells of threads (the host's too when host)
// until each has to of them, repeat by repeat, each repeat's cells in a
// shuffled order as an interleaved run has them.
func (s *simRun) block(threads []int, host bool, to int) {
	targets := []string{"vm"}
	if host {
		targets = []string{"host", "vm"}
	}
	var keys []CellKey
	for _, t := range threads {
		for _, target := range targets {
			for _, q := range []int{simHigh, simLow} {
				keys = append(keys, CellKey{Target: target, Workload: "fp", QoS: q, Threads: t})
			}
		}
	}
	for {
		var due []CellKey
		for _, k := range keys {
			if len(s.rates[k]) < to {
				due = append(due, k)
			}
		}
		if len(due) == 0 {
			return
		}
		s.rng.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
		for _, k := range due {
			s.rates[k] = append(s.rates[k], s.draw(k))
			s.clock++
		}
	}
}

// draw is one repeat's total rate of cell k under the case's model.
func (s *simRun) draw(k CellKey) float64 {
	rate := simRate * float64(k.Threads)
	switch {
	case k.Target == "host" && k.QoS == simLow:
		rate /= simHostEffect
	case k.Target == "vm" && k.QoS == simHigh && k.Threads == 2:
		rate *= s.c.Ratio
	}
	sigma := 0.03
	switch {
	case k.Target == "vm" && s.c.Model == NoiseLognormal:
		sigma = 0.15
	case k.Target == "vm" && s.c.Model == NoiseDrift:
		sigma = 0.05
	}
	rate *= math.Exp(sigma * s.rng.NormFloat64())
	switch s.c.Model {
	case NoiseMixture:
		if k.Target == "vm" && k.Threads == 2 && s.rng.Float64() < 0.35 {
			rate *= 0.6
		}
	case NoiseDrift:
		// 1% a repeat: a repeat of the whole run is its 8 cell runs.
		rate *= math.Pow(0.99, float64(s.clock)/8)
	}
	return rate
}

// cells are the run's cells as the results directory's summary has them:
// their rates, medians and dispersion (so flagged cells are judged as the
// verdict judges them).
func (s *simRun) cells() []Cell {
	keys := make([]CellKey, 0, len(s.rates))
	for k := range s.rates {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, CompareKeys)
	out := make([]Cell, 0, len(keys))
	for _, k := range keys {
		rates := s.rates[k]
		c := Cell{CellKey: k, Unit: "loops", TotalRates: rates, TotalRate: OrderStatsOf(rates)}
		if !s.c.IgnoreFlags {
			c.Dispersion = Disperse(rates, "loops/s")
		}
		out = append(out, c)
	}
	return out
}

// ClopperPearson is the exact binomial interval of the coverage asked
// for k successes in n trials: each end the p at which the tail beyond k
// has (1 - confidence)/2.
func ClopperPearson(k, n int, confidence float64) (low, high float64) {
	a := (1 - confidence) / 2
	low, high = 0, 1
	if k > 0 {
		low = bisect(func(p float64) bool { return binomialUpperTail(k, n, p) < a })
	}
	if k < n {
		high = bisect(func(p float64) bool { return binomialUpperTail(k+1, n, p) < 1-a })
	}
	return low, high
}

// bisect is the p in [0, 1] where below(p) turns from true to false.
func bisect(below func(p float64) bool) float64 {
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if below(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// binomialUpperTail is P(X >= k) for X ~ Binomial(n, p).
func binomialUpperTail(k, n int, p float64) float64 {
	if k <= 0 {
		return 1
	}
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return 1
	}
	ln, _ := math.Lgamma(float64(n + 1))
	sum := 0.0
	for i := k; i <= n; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(ln - li - lr + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return math.Min(1, sum)
}
