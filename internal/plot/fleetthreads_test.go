package plot

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
)

// compareFixtures compares the results directories under testdata/results
// named, as report --compare does.
func compareFixtures(t *testing.T, names ...string) *compare.Comparison {
	t.Helper()
	var loaded []*results.Loaded
	for _, n := range names {
		l, err := results.Load(fixtureDir(n))
		require.NoError(t, err)
		loaded = append(loaded, l)
	}
	labels := compare.Labels(loaded, nil)
	in := make([]compare.Input, len(loaded))
	for i, l := range loaded {
		in[i] = compare.Input{Label: labels[i], Loaded: l}
	}
	c, err := compare.Build(in)
	require.NoError(t, err)
	return c
}

// labelledTicks are the labels of an axis's ticks over its range, by value.
func labelledTicks(t *testing.T, p panel) map[float64]string {
	t.Helper()
	ax := p.plot.X
	out := map[float64]string{}
	for _, tk := range ax.Tick.Marker.Ticks(ax.Min, ax.Max) {
		if tk.Label != "" {
			out[tk.Value] = tk.Label
		}
	}
	return out
}

// The fleet chart says what the table says: a run inconclusive because of
// one thread count (thread-count-crossing: its pooled VM interval [0.995..
// 1.01] inside the band, its interval at 4 threads [0.995..1.26] across
// the edge 1.25x) draws that thread count's interval, the one the verdict
// judged, outside the band and marked so, and the others inside; the VM
// axis spans every interval drawn and is labelled at the band's edges;
// the rows grow to hold the thread counts.
func TestFleetChartDrawsTheThreadCountsTheVerdictJudged(t *testing.T) {
	c := compareFixtures(t, "constructed/thread-count-crossing", "constructed/one-thread-count-outside")
	crossing := c.Machines[0]
	require.Equal(t, string(analysis.Inconclusive), crossing.Outcome)
	require.True(t, crossing.VMRatio.Inside(crossing.Band), "the pooled interval %s alone looks like a yes", crossing.VMRatio.Text())
	ws := threadWhiskers(crossing)
	require.Len(t, ws, 4, "a whisker per thread count the verdict judged")
	for _, w := range ws {
		assert.Equal(t, w.Threads == 4, w.outside, "%d threads: %s against the band %s", w.Threads, w.Text(), render.FormatRatio(crossing.Band))
	}
	assert.Equal(t, "1.12x [0.995..1.26]", ws[3].Text(), "the interval the verdict's reason names")
	assert.Greater(t, float64(ws[3].High), float64(crossing.Band), "drawn past the band's edge")

	charts, skipped := CompareCharts(c)
	require.Empty(t, skipped)
	require.Equal(t, "compare-fleet-fp", charts[0].Name)
	f := charts[0].fig
	p := f.panels[0]
	ax := p.plot.X
	for _, m := range c.Machines {
		for _, w := range threadWhiskers(m) {
			assert.LessOrEqual(t, ax.Min, float64(w.Low), "the axis holds %d threads' interval of %s", w.Threads, m.Label)
			assert.GreaterOrEqual(t, ax.Max, float64(w.High), "the axis holds %d threads' interval of %s", w.Threads, m.Label)
		}
	}
	labels := labelledTicks(t, p)
	assert.Equal(t, "0.8x", labels[1/float64(crossing.Band)], "the band's lower edge, %v", labels)
	assert.Equal(t, "1.25x", labels[float64(crossing.Band)], "the band's upper edge, %v", labels)
	assert.GreaterOrEqual(t, float64((p.height-vg.Points(60))/2), float64(fleetRowHeightFor(4)), "each of the two rows holds four thread counts")
	assert.Greater(t, float64(fleetRowHeightFor(4)), float64(fleetRowHeight()))
	var legend []string
	for _, e := range f.legend {
		legend = append(legend, e.text)
	}
	assert.Contains(t, legend, "a thread count's interval, not inside the band")
	assert.Contains(t, legend, "a thread count's interval, inside the band")
	assert.Contains(t, texts(renderSVG(t, charts[0])), "4 threads", "each thread count's whisker is labelled")
}

// A verdict judged at one thread count has no whiskers beside its own
// (that thread count's interval is the pooled one), and a row without
// them keeps its height; measured runs: compare-b, inconclusive at its
// two thread counts, draws both, not inside the band.
func TestFleetChartThreadWhiskersMeasured(t *testing.T) {
	c := compareFixtures(t, "compare-a", "compare-b", "compare-c")
	for _, m := range c.Machines {
		assert.Empty(t, threadWhiskers(m), "%s: the runs share 1 thread only", m.Label)
	}
	assert.Equal(t, fleetRowHeight(), fleetRowHeightFor(0))

	c = compareFixtures(t, "compare-a", "compare-b")
	b := c.Machines[1]
	require.True(t, b.VMRatio.Inside(b.Band), "compare-b's pooled interval %s lies inside the band", b.VMRatio.Text())
	ws := threadWhiskers(b)
	require.Len(t, ws, 2)
	for _, w := range ws {
		assert.True(t, w.outside, "%d threads: %s", w.Threads, w.Text())
	}
	charts, _ := CompareCharts(c)
	ax := charts[0].fig.panels[0].plot.X
	assert.LessOrEqual(t, ax.Min, float64(ws[1].Low))
	assert.GreaterOrEqual(t, ax.Max, float64(ws[0].High))
}

// On a wide VM axis the band's edges keep their labels, and 1, which the
// dashed line marks, gives way where it would crowd them.
func TestBandTicksEdgesFirst(t *testing.T) {
	var labels []string
	for _, tk := range (bandTicks{edges: []float64{0.8, 1.25}}).Ticks(0.1, 10) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Contains(t, labels, "0.8x")
	assert.Contains(t, labels, "1.25x")
	assert.NotContains(t, labels, "1x", "1 lies between the edges, too close to both on so wide an axis")
}
