package plot

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
)

// The verdict's picture has a row per thread count and one pooled, the VM's
// interval marked by where it lies against the band: in the constructed
// run whose VM keeps an effect at 4 threads alone, that row is beyond the
// edge for no and the others inside; the band's edges label the VM axis.
func TestVerdictChartShowsTheFailingThreadCount(t *testing.T) {
	in := loadRun(t, "constructed/one-thread-count-outside")
	require.Len(t, in.Summary.Verdicts, 1)
	v := in.Summary.Verdicts[0]
	require.Equal(t, analysis.NotSubsumed, v.Outcome)

	rows := verdictRows(v)
	var labels []string
	for _, r := range rows {
		labels = append(labels, r.label)
	}
	assert.Equal(t, []string{"1 thread", "2 threads", "3 threads", "4 threads", "pooled"}, labels)
	m, mNo := float64(v.Margin), float64(v.MarginNo)
	for _, r := range rows {
		place := bandPlace(math.Exp(float64(r.vm.Low)), math.Exp(float64(r.vm.High)), m, mNo)
		want := bandInside
		if r.label == "4 threads" {
			want = bandOutside
		}
		assert.Equal(t, want, place, r.label)
		assert.False(t, r.host.Estimate.IsNaN(), "%s has the host's ratio", r.label)
	}

	charts, _ := Select(mustCharts(t, in), familyVerdict)
	require.Len(t, charts, 1)
	assert.Equal(t, VerdictChartName(v), charts[0].Name)
	assert.Equal(t, "verdict-fp", charts[0].Name)
	got := strings.Join(texts(renderSVG(t, charts[0])), " | ")
	for _, want := range []string{"0.8x", "1.25x", "pooled", "4 threads", "VM: beyond the edge for no", "VM: inside the band", "band: yes"} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "VM: across an edge", "no row crosses an edge")
}

// A verdict that compared no thread count has nothing to picture: its
// chart is skipped with the verdict's reason.
func TestVerdictChartSkipsAVerdictWithoutRatios(t *testing.T) {
	v := analysis.Verdict{Outcome: analysis.Inconclusive, Reason: analysis.Reason{Kind: analysis.ReasonNoTwoClasses, Workload: "fp", Host: "host", VM: "vm"},
		Host: analysis.Sensitivity{Workload: "fp"}}
	in := Input{}
	in.Summary.Verdicts = []analysis.Verdict{v}
	charts, skipped := verdictCharts(in)
	assert.Empty(t, charts)
	require.Len(t, skipped, 1)
	assert.Equal(t, "verdict-fp", skipped[0].Name)
	assert.Contains(t, skipped[0].Reason, "compared no thread count: fp has no two QoS classes")
}

func mustCharts(t *testing.T, in Input) []Chart {
	t.Helper()
	charts, _ := Charts(in)
	require.NotEmpty(t, charts)
	return charts
}
