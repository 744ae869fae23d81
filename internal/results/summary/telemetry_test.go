package summary

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/telemetry"
)

func TestTelemetryIsOneLinePerViewAndEachNoteOnce(t *testing.T) {
	f := telemetry.Float
	var ss []telemetry.CellSummary
	for i, busy := range []float64{0.02, 0.5, 0.98} {
		ss = append(ss,
			telemetry.CellSummary{Cell: "c" + string(rune('0'+i)), Repeat: 1, Target: "host", View: telemetry.ViewHost, Sampler: "procfs", Samples: 10,
				Types:   []telemetry.TypeSummary{{CPUs: 2, MeanBusy: f(1)}},
				Threads: []telemetry.ThreadSummary{{Role: "worker 0", TID: 10 + i, MeanBusy: f(busy)}},
				Notes:   []string{"cpufreq: not available", fmt.Sprintf("thread %d (worker 0) exited", 100+i)}},
			telemetry.CellSummary{Cell: "c" + string(rune('0'+i)), Repeat: 1, Target: "vm", View: telemetry.ViewGuest, Sampler: "procfs", Samples: 5,
				Types: []telemetry.TypeSummary{{CPUs: 2, MeanBusy: f(0.5)}}, Notes: []string{"cpufreq: not available", "guest clock"}})
	}
	views, notes := telemetryViews(ss)
	require.Len(t, views, 2)
	assert.Equal(t, 3, views[0].Runs)
	assert.Equal(t, 30, views[0].Samples)
	assert.Equal(t, "mean busy 50% (2%..98% from run to run)", views[0].Threads)
	assert.Equal(t, "none followed", views[1].Threads)
	assert.Equal(t, []string{"cpufreq: not available", "thread 100 (worker 0) exited (and 2 more like it)", "guest clock"}, notes,
		"notes differing only in numbers are said once")

	var b strings.Builder
	require.NoError(t, render.Markdown(&b, render.Document{Blocks: TelemetryBlocks(ss)[1:]}))
	out := b.String()
	assert.Equal(t, 1, strings.Count(out, "cpufreq: not available"), out)
	assert.Contains(t, out, "- host, host view (procfs): 3 cell runs, 30 samples; cores: all (2 CPUs): busy 100%, not measured")
	assert.Contains(t, out, "- vm, guest view (procfs): 3 cell runs, 15 samples")
	assert.Equal(t, 8, strings.Count(out, "\n"), "two lines, a blank, the notes heading, a blank and three notes: %s", out)
}
