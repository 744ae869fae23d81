package summary

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/telemetry"
)

// On a host with two core types every cell says how much of its busy time
// the worker most on the slower type spent there, 0% included; a target
// with one core type, or macOS's cluster-only sampler, says the share is
// not available.
func TestCoreShares(t *testing.T) {
	cell := "host mmul qos=33 threads=3 loops=200000"
	cpus := []telemetry.CPU{{ID: 0, Type: "P"}, {ID: 1, Type: "P"}, {ID: 2, Type: "E"}}
	var samples []telemetry.Sample
	for repeat := 1; repeat <= 2; repeat++ {
		for i := range 6 {
			slowCPU := 1
			if i%3 == 0 && repeat == 1 || i%2 == 0 && repeat == 2 { // a third, then half, of the samples on the E core
				slowCPU = 2
			}
			samples = append(samples, telemetry.Sample{Cell: cell, Repeat: repeat, Target: "host", View: telemetry.ViewHost, Sampler: telemetry.SamplerProc, CPUs: cpus,
				Threads: []telemetry.Thread{{Role: "worker 0", CPU: 0}, {Role: "worker 1", CPU: 1}, {Role: "worker 2", CPU: slowCPU}}})
		}
	}
	// A cell whose worker never touched the E core still gets its line.
	never := "host mmul qos=9 threads=1 loops=200000"
	samples = append(samples, telemetry.Sample{Cell: never, Repeat: 1, Target: "host", View: telemetry.ViewHost, Sampler: telemetry.SamplerProc, CPUs: cpus,
		Threads: []telemetry.Thread{{Role: "worker 0", CPU: 0}}})
	// The VM's guest view: one core type.
	samples = append(samples, telemetry.Sample{Cell: "vm mmul qos=33 threads=3 loops=200000", Repeat: 1, Target: "vm", View: telemetry.ViewGuest,
		Sampler: telemetry.SamplerProc, CPUs: []telemetry.CPU{{ID: 0}, {ID: 1}}, Threads: []telemetry.Thread{{Role: "worker 0", CPU: 0}}})
	// The host's view of the VM cell is not the workers'.
	samples = append(samples, telemetry.Sample{Cell: "vm mmul qos=33 threads=3 loops=200000", Repeat: 1, Target: "vm", View: telemetry.ViewHost,
		CPUs: cpus, Threads: []telemetry.Thread{{Role: "vcpu 0", CPU: 2}}})

	f := coreShares(samples, nil)
	require.Len(t, f, 3)
	assert.Equal(t, "host mmul qos=9 threads=1: the worker most on E cores spent 0% of its busy time there (median over 1 repeat; telemetry: a share of time, not of work)", render.Finding(f[0]))
	assert.Equal(t, "host mmul qos=33 threads=3: the worker most on E cores spent 42% of its busy time there (median over 2 repeats; 33%..50%; telemetry: a share of time, not of work)", render.Finding(f[1]))
	assert.Equal(t, "vm: core-type share not available: its telemetry shows one core type", render.Finding(f[2]))

	mac := []telemetry.Sample{{Cell: cell, Repeat: 1, Target: "host", View: telemetry.ViewHost, Sampler: telemetry.SamplerPowermetrics}}
	f = coreShares(mac, nil)
	require.Len(t, f, 1)
	assert.Contains(t, render.FindingText(f[0]), "powermetrics reports clusters, not the CPU each thread ran on")
	assert.Empty(t, coreShares(nil, nil), "no telemetry, nothing said")
}

// A telemetry cell key is read as the results files write it
// (catalog.ParseSeriesKey), with its parameters named where its workload's
// cells carry them.
func TestCellFindingReadsTheSeriesKey(t *testing.T) {
	for _, tc := range []struct {
		name, cell string
		split      map[string]bool
		want       analysis.Finding
	}{
		{"one set", "host mmul qos=33 threads=3 loops=20", nil, analysis.Finding{Workload: "mmul", QoS: 33, Threads: 3}},
		{"split", "vm compress qos=9 threads=1 size=4194304 ratio=3 codec=zstd level=0 sink=null", map[string]bool{"compress": true},
			analysis.Finding{Workload: "compress", QoS: 9, Threads: 1, Params: "size=4194304 ratio=3 codec=zstd level=0 sink=null"}},
		{"another workload split", "host fp qos=9 threads=2 duration=1s", map[string]bool{"compress": true}, analysis.Finding{Workload: "fp", QoS: 9, Threads: 2}},
		{"no workload", "qos=9", nil, analysis.Finding{Workload: "qos=9", QoS: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, cellFinding(tc.cell, tc.split))
		})
	}
}
