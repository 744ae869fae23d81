package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		name            string
		repeats, capped int
		want            []int
	}{
		{"off", 6, 0, []int{6}},
		{"cap below repeats", 6, 4, []int{6}},
		{"cap at repeats", 6, 6, []int{6}},
		{"three times", 6, 18, []int{6, 12, 18}},
		{"a cap between blocks ends the last look there", 6, 15, []int{6, 12, 15}},
		{"a cap just past one block", 6, 7, []int{6, 7}},
		{"one repeat a block", 1, 3, []int{1, 2, 3}},
		{"no repeats", 0, 18, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Schedule(tc.repeats, tc.capped))
		})
	}
}

func TestLookLevels(t *testing.T) {
	for _, tc := range []struct {
		name     string
		schedule []int
		first    float64 // alpha(t_1) = 0.05·ln(1 + (e-1)·t_1)
	}{
		{"one look", []int{6}, 0.05},
		{"three looks", []int{6, 12, 18}, 0.05 * math.Log(1+(math.E-1)/3)},
		{"a short last block", []int{6, 12, 15}, 0.05 * math.Log(1+(math.E-1)*6/15)},
		{"two looks", []int{6, 7}, 0.05 * math.Log(1+(math.E-1)*6/7)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			levels := LookLevels(tc.schedule)
			require.Len(t, levels, len(tc.schedule))
			assert.InDelta(t, tc.first, levels[0], 1e-15)
			sum := 0.0
			for i, l := range levels {
				assert.Positive(t, l)
				if i > 0 {
					assert.Less(t, l, levels[i-1], "the Pocock-type function spends early")
				}
				sum += l
			}
			assert.InDelta(t, equivalenceLevel, sum, 1e-15, "the looks spend the 5% between them")
		})
	}
	assert.Equal(t, []float64{0.05}, LookLevels([]int{6}), "one look is 5% exactly, as without a schedule")
	assert.InDelta(t, 0.02264, LookLevels([]int{6, 12, 18})[0], 5e-6)
	assert.Nil(t, LookLevels(nil))
}

var (
	// The host's 250x at 6 repeats a class, the VM's 1-thread cells alike.
	seqHost9    = []float64{100, 101, 99, 102, 98, 100.5}
	seqVMTight9 = []float64{1000, 1002, 998, 1004, 996, 1001}
	seqVMTight  = []float64{1001, 1003, 999, 1005, 997, 1000}
	// Spread repeats whose exact 6 vs 6 interval, at 1.08x, reaches
	// 0.2193 (1.245x) at 90% and 0.2265 (1.254x) at 95.5%: inside the band
	// at one look, not at the first of three.
	seqVMWide9 = []float64{85, 93, 100, 107, 115, 97}
	seqVMWide  = []float64{86, 94, 101, 108, 116, 98}
)

// seqCells are a 250x host and a VM at 1 and 2 threads: 1 thread tight
// at 1x, 2 threads vm33 at 2 threads' rates (vm9 its class 9).
func seqCells(vm33, vm9 []float64) []Cell {
	return []Cell{
		cell("host", 33, 1, scale(seqHost9, 250)...), cell("host", 9, 1, seqHost9...),
		cell("host", 33, 2, scale(seqHost9, 500)...), cell("host", 9, 2, scale(seqHost9, 2)...),
		cell("vm", 33, 1, seqVMTight...), cell("vm", 9, 1, seqVMTight9...),
		cell("vm", 33, 2, vm33...), cell("vm", 9, 2, vm9...),
	}
}

// twice is a cell's repeats and a second block like them (k times them).
func twice(rates []float64, k float64) []float64 {
	return append(append([]float64(nil), rates...), scale(rates, k)...)
}

func TestSubsumptionAtLooks(t *testing.T) {
	wide := seqCells(scale(seqVMWide, 1.08), seqVMWide9)
	// 12 repeats at 2 threads, the second block like the first: at look 2
	// of 3 (97% intervals) its interval lies inside.
	twelve := seqCells(twice(seqVMWide, 1.001), twice(seqVMWide9, 1.001))
	// 12 repeats at 2 threads at 1.16x, whose interval crosses 1.25x.
	capped := seqCells(twice(scale(seqVMWide, 1.16), 1.001), twice(seqVMWide9, 1.001))
	// The same, 12 repeats at 1 thread too.
	allCapped := append(capped[:4:4], cell("vm", 33, 1, twice(seqVMTight, 1)...), cell("vm", 9, 1, twice(seqVMTight9, 1)...), capped[6], capped[7])

	one := Subsumption(wide, "fp", "", "host", "vm", DefaultMargins())
	require.Equal(t, Subsumed, one.Outcome, one.Reason)
	again := SubsumptionAt(wide, "fp", "", "host", "vm", DefaultMargins(), nil)
	assert.Equal(t, []any{one.Outcome, one.SI, one.Reason, one.VMByThreads}, []any{again.Outcome, again.SI, again.Reason, again.VMByThreads},
		"Subsumption is SubsumptionAt without a schedule")
	assert.Nil(t, one.Looks)
	assert.Nil(t, one.MoreRepeats)

	single := SubsumptionAt(wide, "fp", "", "host", "vm", DefaultMargins(), Schedule(6, 0))
	assert.Equal(t, []any{one.Outcome, one.SI, one.Reason, one.VMByThreads}, []any{single.Outcome, single.SI, single.Reason, single.VMByThreads},
		"a one-look schedule is today's verdict")
	assert.Equal(t, []ThreadLook{{Threads: 1, Repeats: 6, Look: Look{1, 1, 0.05}}, {Threads: 2, Repeats: 6, Look: Look{1, 1, 0.05}}}, single.Looks)

	for _, tc := range []struct {
		name     string
		cells    []Cell
		schedule []int
		outcome  Outcome
		looks    []int // each thread count's look
		more     *MoreRepeats
		capped   bool
	}{
		{
			name:  "inside at 90% but not at the first look's 95.5%: undecided, a block more at that thread count",
			cells: wide, schedule: []int{6, 12, 18}, outcome: Inconclusive, looks: []int{1, 1},
			more: &MoreRepeats{Threads: []RepeatsTo{{2, 12}}},
		},
		{
			name:  "a tight VM decides at the first look",
			cells: seqCells(scale(seqVMTight, 2), scale(seqVMTight9, 2)), schedule: []int{6, 12, 18}, outcome: Subsumed, looks: []int{1, 1},
		},
		{
			name:  "12 repeats at 2 threads are its second look, and decide",
			cells: twelve, schedule: []int{6, 12, 18}, outcome: Subsumed, looks: []int{1, 2},
		},
		{
			name:  "the pooled interval undecided with 2 threads at the cap: a block more at 1 thread",
			cells: capped, schedule: []int{6, 12}, outcome: Inconclusive, looks: []int{1, 2},
			more: &MoreRepeats{Threads: []RepeatsTo{{1, 12}}},
		},
		{
			name:  "undecided at the cap: no block more, and the reason says so",
			cells: allCapped, schedule: []int{6, 12}, outcome: Inconclusive, looks: []int{2, 2}, capped: true,
		},
		{
			name:  "a no asks for no more repeats",
			cells: seqCells(scale(seqVMTight, 4), scale(seqVMTight9, 2)), schedule: []int{6, 12, 18}, outcome: NotSubsumed, looks: []int{1, 1},
		},
		{
			name: "a band the host's interval sets (a 5x host): the host's cells too",
			cells: append(seqCells(scale(seqVMWide, 1.08), seqVMWide9)[4:],
				cell("host", 33, 1, scale(seqVMWide9, 5)...), cell("host", 9, 1, seqVMWide...),
				cell("host", 33, 2, scale(seqVMWide9, 10)...), cell("host", 9, 2, scale(seqVMWide, 2)...)),
			schedule: []int{6, 12, 18}, outcome: Inconclusive, looks: []int{1, 1},
			more: &MoreRepeats{Threads: []RepeatsTo{{2, 12}}, Host: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := SubsumptionAt(tc.cells, "fp", "", "host", "vm", DefaultMargins(), tc.schedule)
			require.Equal(t, tc.outcome, v.Outcome, v.Reason)
			var looks []int
			for _, l := range v.Looks {
				looks = append(looks, l.Index)
				assert.Equal(t, len(tc.schedule), l.Of)
			}
			assert.Equal(t, tc.looks, looks)
			assert.Equal(t, tc.more, v.MoreRepeats)
			assert.Equal(t, tc.capped, v.Reason.Cap != nil, "the cap reached, as a value (the simulation counts it)")
		})
	}
}
