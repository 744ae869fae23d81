package telemetry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummarizeMeansPerTypeAndThread(t *testing.T) {
	cpu := func(id int, typ string, busy, mhz float64) CPU {
		return CPU{ID: id, Type: typ, Busy: Float(busy), MHz: Float(mhz)}
	}
	cell := "vm fp qos=9 threads=1"
	samples := []Sample{
		// A priming sample: no rates, so it must not pull the means down.
		{Cell: cell, Repeat: 1, Target: "vm", View: ViewHost, CPUs: []CPU{{ID: 0, Type: "P"}, {ID: 1, Type: "E"}},
			Threads: []Thread{{TID: 7, Role: "vcpu 0", CPU: 1, Policy: "SCHED_OTHER nice=0"}}},
		{Cell: cell, Repeat: 1, Target: "vm", View: ViewHost, IntervalNs: 1e8, CPUs: []CPU{cpu(0, "P", 1, 3000), cpu(1, "E", 0.2, 1000)},
			PackageW: Float(10), Threads: []Thread{{TID: 7, Role: "vcpu 0", CPU: 0, Busy: Float(0.9)}}, Notes: []string{"rapl wrapped"}},
		{Cell: cell, Repeat: 1, Target: "vm", View: ViewHost, IntervalNs: 1e8, CPUs: []CPU{cpu(0, "P", 0.5, 2000), cpu(1, "E", 0.4, 1200)},
			PackageW: Float(20), Threads: []Thread{{TID: 7, Role: "vcpu 0", CPU: 0, Busy: Float(0.7)}}, Notes: []string{"rapl wrapped"}},
		// Another view of the same cell run is its own summary.
		{Cell: cell, Repeat: 1, Target: "vm", View: ViewGuest, IntervalNs: 1e8, CPUs: []CPU{{ID: 0, Busy: Float(1)}}},
	}
	got := Summarize(samples)
	require.Len(t, got, 2)
	h := got[0]
	assert.Equal(t, ViewHost, h.View)
	assert.Equal(t, 2, h.Samples)
	require.Len(t, h.Types, 2)
	assert.Equal(t, "E", h.Types[0].Type)
	assert.InDelta(t, 0.3, *h.Types[0].MeanBusy, 1e-9)
	assert.InDelta(t, 1100, *h.Types[0].MeanMHz, 1e-9)
	assert.InDelta(t, 0.75, *h.Types[1].MeanBusy, 1e-9)
	assert.InDelta(t, 15, *h.PackageW, 1e-9)
	assert.Nil(t, h.CPUW, "no CPU power read: none reported")
	require.Len(t, h.Threads, 1)
	assert.InDelta(t, 0.8, *h.Threads[0].MeanBusy, 1e-9)
	assert.Equal(t, []int{0, 1}, h.Threads[0].CPUs)
	assert.Equal(t, "SCHED_OTHER nice=0", h.Threads[0].Policy)
	assert.Equal(t, []string{"rapl wrapped"}, h.Notes)

	g := got[1]
	assert.Equal(t, ViewGuest, g.View)
	require.Len(t, g.Types, 1)
	assert.Nil(t, g.Types[0].MeanMHz, "no frequency read: mean missing, not 0")
}
