package analysis

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCells(t *testing.T) {
	s := func(q, threads, rep, idx int, start, end int64, work float64, applied int, full bool, reason string) Observation {
		return Observation{CellKey: CellKey{Target: "host", Workload: "fp", QoS: q, Threads: threads}, Repeat: rep, StartNs: start, EndNs: end, Work: work, Unit: "loops", Rate: work / (float64(end-start) / 1e9),
			QoSApplied: applied, QoSFull: full, QoSReason: reason}
	}
	samples := []Observation{
		// qos 9, 2 threads, repeat 1: 200 loops over 2 s -> 100/s; repeat 2: 200 loops over 1 s -> 200/s
		s(9, 2, 1, 0, 0, 1e9, 100, 9, false, "uclamp unavailable"),
		s(9, 2, 1, 1, 0, 2e9, 100, 9, false, "uclamp unavailable"),
		s(33, 1, 1, 0, 0, 1e9, 300, 21, false, "needs CAP_SYS_NICE"),
		s(9, 2, 2, 0, 0, 1e9, 100, 9, false, "uclamp unavailable"),
		s(9, 2, 2, 1, 0, 1e9, 100, 9, false, "uclamp unavailable"),
	}
	cells := Cells(samples)
	require.Len(t, cells, 2)
	c := cells[0]
	assert.Equal(t, CellKey{Target: "host", Workload: "fp", QoS: 9, Threads: 2}, c.CellKey, "cells keep first-appearance order")
	assert.Equal(t, 2, c.TotalRate.N)
	assert.InDelta(t, 100, float64(c.TotalRate.Min), 1e-9)
	assert.InDelta(t, 200, float64(c.TotalRate.Max), 1e-9)
	assert.InDelta(t, 1.5, float64(c.Seconds.Median), 1e-9)
	assert.Equal(t, []float64{100, 200}, c.TotalRates, "per repeat, in repeat order")
	assert.Equal(t, []float64{2, 1}, c.RepeatSeconds)
	assert.Equal(t, 100.0, float64(c.TotalRate.CILow), "two repeats: the CI is [min, max]")
	assert.InDelta(t, 0.5, float64(c.TotalRate.CIConfidence), 1e-12)
	assert.Equal(t, 2, c.ThreadRate.N, "one per repeat: its threads are not independent measurements")
	assert.InDelta(t, 75, float64(c.ThreadRate.Min), 1e-9, "repeat 1's threads ran at 100/s and 50/s")
	assert.InDelta(t, 100, float64(c.ThreadRate.Max), 1e-9)
	assert.InDelta(t, 2, float64(c.Dispersion.MaxMin), 1e-12)
	assert.Equal(t, FlagNone, c.Dispersion.Flag, "2x apart is within DisagreeRatio")
	assert.Equal(t, []int{9}, c.QoSApplied)
	assert.Equal(t, 4, c.QoSPartial)
	assert.Equal(t, []string{"uclamp unavailable"}, c.QoSReasons)

	asked33 := cells[1]
	assert.Equal(t, []int{21}, asked33.QoSApplied, "what the thread read back as, not what was asked")
	assert.Equal(t, []string{"needs CAP_SYS_NICE"}, asked33.QoSReasons)
}

func TestSortCellsInTableOrder(t *testing.T) {
	key := func(target, workload string, q, threads int, phase string) Cell {
		return Cell{CellKey: CellKey{Target: target, Workload: workload, QoS: q, Threads: threads, Phase: phase}}
	}
	in := []Cell{
		key("vm", "fp", 9, 1, ""), key("host", "fp", 33, 2, ""), key("guest", "fp", 9, 1, ""),
		key("host", "fp", 33, 1, ""), key("host", "compress", 9, 1, "compress"), key("host", "fp", 9, 4, ""),
		key("vm", "compress", 9, 1, "compress"), key("host", "fp", 9, 1, ""), key("aux", "fp", 9, 1, ""),
	}
	var got []string
	for _, c := range SortCells(in) {
		got = append(got, fmt.Sprintf("%s %s %d %d", c.Workload, c.Target, c.QoS, c.Threads))
	}
	assert.Equal(t, []string{
		"compress host 9 1", "compress vm 9 1",
		"fp host 9 1", "fp host 9 4", "fp host 33 1", "fp host 33 2",
		"fp vm 9 1", "fp aux 9 1", "fp guest 9 1",
	}, got, "workload, then host before vm before the others by name, then QoS, then threads")
	assert.Equal(t, "vm", in[0].Target, "the input is left as it was")
}

// A repeat that did no work (rate 0) is left out of every summary of its
// cell alike, as the rank tests leave it out: n, median, interval, min and
// max of the total rate, the per-thread rate and the time; it is counted
// (Idle) and kept, as 0, in the per-repeat rates the tests read.
func TestCellsLeaveIdleRepeatsOutOfEverySummary(t *testing.T) {
	key := CellKey{Target: "vm", Workload: "fp", QoS: 9, Threads: 2}
	var obs []Observation
	var totals, threads, secs []float64 // of the working repeats
	for r, work := range []float64{100, 0, 110, 120, 0, 105} {
		el := 1 + 0.1*float64(r)
		for range 2 {
			obs = append(obs, Observation{CellKey: key, Repeat: r + 1, EndNs: int64(el * 1e9), Work: work, Unit: "loops", Rate: work / el})
		}
		if work > 0 {
			totals, threads, secs = append(totals, 2*work/el), append(threads, work/el), append(secs, el)
		}
	}
	cells := Cells(obs)
	require.Len(t, cells, 1)
	c := cells[0]
	assert.Equal(t, 2, c.Idle())
	for name, want := range map[string][]float64{"total rate": totals, "per-thread rate": threads, "time": secs} {
		got := map[string]OrderStats{"total rate": c.TotalRate, "per-thread rate": c.ThreadRate, "time": c.Seconds}[name]
		assert.Equal(t, 4, got.N, "%s: the 4 repeats that did work", name)
		assert.Equal(t, OrderStatsOf(want), got, "%s: n, median, interval, min and max of the working repeats only", name)
	}
	assert.InDelta(t, 140, float64(c.TotalRate.Min), 1e-9, "repeat 6: 210 loops in 1.5 s, not an idle repeat's 0")
	assert.Len(t, c.TotalRates, 6, "the tests' values keep every repeat")
	assert.Zero(t, c.TotalRates[1])
	assert.Len(t, c.RepeatSeconds, 6)

	idle := Cells([]Observation{{CellKey: key, Repeat: 1, EndNs: 1e9, Unit: "loops"}})[0]
	assert.Equal(t, 1, idle.Idle())
	assert.Zero(t, idle.TotalRate.N, "a cell that never did work has no repeats to summarize")
	assert.True(t, idle.TotalRate.Median.IsNaN())
	assert.Zero(t, idle.Seconds.N)
}
