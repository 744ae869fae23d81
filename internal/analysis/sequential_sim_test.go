package analysis

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSequentialFalseYes simulates whole sequential runs (6 repeats, up to
// 18) with the VM's true ratio at 2 threads at the band's edges (1x at 1
// thread) under each noise model: every yes is false, and their rate must stay within the stated
// 5%. It fails when the rate's 95% Clopper-Pearson interval lies wholly
// above 5% (the rule broken, not bad luck); the runs are seeded, so it
// fails or passes alike every time. scripts/sim-sequential.sh runs
// 10,000 of each and the fixed designs beside them.
func TestSequentialFalseYes(t *testing.T) {
	for _, model := range NoiseModels {
		for _, ratio := range []float64{1.25, 0.8} {
			t.Run(fmt.Sprintf("%s at %gx", model, ratio), func(t *testing.T) {
				r := Simulate(SimCase{Model: model, Ratio: ratio, Repeats: 6, MaxRepeats: 18, Runs: 300, Seed: 1})
				require.Equal(t, 300, r.Yes+r.No+r.Inconclusive)
				rate, low, high := r.YesRate(0.95)
				t.Logf("false yes %d of %d (%.3f [%.3f..%.3f]), no %d, inconclusive %d (%d at the cap), %.1f repeats a VM cell",
					r.Yes, r.Runs, rate, low, high, r.No, r.Inconclusive, r.Capped, r.MeanRepeats())
				assert.Less(t, low, equivalenceLevel, "false yes beyond 5%%: %d of %d", r.Yes, r.Runs)
				assert.Greater(t, r.MeanRepeats(), 6.0, "undecided runs took more repeats")
			})
		}
	}
}

func TestSimulateDecidesAtOneLook(t *testing.T) {
	// A quiet VM at 1x is decided yes at the first look: the sequential
	// design costs nothing there.
	r := Simulate(SimCase{Model: NoiseDrift, Ratio: 1, Repeats: 6, MaxRepeats: 18, Runs: 20, Seed: 1})
	assert.Equal(t, 20, r.Yes)
	assert.Equal(t, []int{20, 0, 0}, r.YesAtLook)
	assert.InDelta(t, 6, r.MeanRepeats(), 1e-12)
	assert.True(t, r.Sequential())
	assert.False(t, SimCase{Repeats: 6}.Sequential())
	assert.False(t, SimCase{Repeats: 6, MaxRepeats: 6}.Sequential(), "a cap at the repeats is one look")
}

func TestClopperPearson(t *testing.T) {
	for _, tc := range []struct {
		k, n      int
		low, high float64
	}{
		// R: binom.test(k, n)$conf.int
		{0, 10, 0, 0.3084971},
		{10, 10, 0.6915029, 1},
		{5, 100, 0.01643187, 0.11283491},
	} {
		low, high := ClopperPearson(tc.k, tc.n, 0.95)
		assert.InDelta(t, tc.low, low, 1e-6, "%d of %d", tc.k, tc.n)
		assert.InDelta(t, tc.high, high, 1e-6, "%d of %d", tc.k, tc.n)
	}
}
