package plot

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/render"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/testfleet"
)

// fleetComparison compares a constructed fleet of n machines.
func fleetComparison(t *testing.T, n int) *compare.Comparison {
	t.Helper()
	dirs, err := testfleet.Write(t.TempDir(), n)
	require.NoError(t, err)
	var loaded []*results.Loaded
	for _, d := range dirs {
		l, err := results.Load(d)
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

// The fleet chart leads the comparison's charts: a row per machine,
// labelled with the run's own label (no key while the labels fit), each
// row tall enough for its label, the machines in the order given; its
// legend names every verdict the fleet has; it renders at 12 and at 50
// machines, growing in height rather than squeezing the rows.
func TestFleetChart(t *testing.T) {
	var heights []vg.Length
	for _, n := range []int{12, 50} {
		c := fleetComparison(t, n)
		c.Missing = []compare.Missing{{Label: "gone", Reason: "unreachable"}}
		charts, skipped := CompareCharts(c)
		require.Empty(t, skipped)
		require.Equal(t, "compare-fleet-fp", charts[0].Name)
		f := charts[0].fig
		assert.Empty(t, f.notes, "%d machines: labels as they are, no key", n)
		require.Len(t, f.panels, 1)
		require.NotNil(t, f.panels[0].beside, "the host's ratio beside the VM's")
		ticks := f.panels[0].plot.Y.Tick.Marker.Ticks(0, 0)
		require.Len(t, ticks, n+1, "a row per machine, and one for the run that did not come back")
		assert.Equal(t, "fleet-01", ticks[0].Label)
		assert.Greater(t, ticks[0].Value, ticks[1].Value, "the first machine on top")
		assert.Equal(t, "gone", ticks[n].Label)
		row := f.panels[0].height / vg.Length(n+1)
		assert.GreaterOrEqual(t, float64(row), float64(lineHeight(textStyle(tickSize))), "a row holds its label")

		svg := renderSVG(t, charts[0])
		all := texts(svg)
		for _, want := range []string{"VM ratio, verdict yes", "VM ratio, verdict no", "VM ratio, verdict inconclusive", "band: yes", "host ratio", "fleet-12", "did not come back"} {
			assert.Contains(t, all, want)
		}
		var buf bytes.Buffer
		require.NoError(t, charts[0].Render(&buf, "png"))
		img, err := png.Decode(&buf)
		require.NoError(t, err)
		assert.Equal(t, 1200, img.Bounds().Dx())
		heights = append(heights, f.panels[0].height)
	}
	assert.Greater(t, float64(heights[1]), 3*float64(heights[0]), "51 rows take about four times the height of 13")
}

// Labels too long for the left of the chart are named #1, #2, ... with a
// key; a comparison with no QoS ratio has no fleet chart, and says why.
func TestFleetChartLabelsAndSkip(t *testing.T) {
	ticks, key := rowLabels([]string{"short", strings.Repeat("a-long-host-name.example.org ", 3)})
	assert.Equal(t, []string{"#1", "#2"}, ticks)
	require.Len(t, key, 1)
	assert.Contains(t, key[0], "#1: short; #2: a-long-host-name")

	_, skipped := fleetCharts(&compare.Comparison{})
	assert.Equal(t, []Skipped{{"compare-fleet", "no run has a QoS ratio (it needs a workload run at two classes)"}}, skipped)
}

// A narrow log axis labels its decades only when it spans more than two.
func TestDecadeTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (decadeTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	assert.Equal(t, []string{"1", "10", "100"}, labels(0.8, 600))
	assert.Equal(t, []string{"1", "2", "5", "10", "20", "50"}, labels(0.8, 60))
}

// Both axes of the fleet chart are labelled: the machines' axis says so,
// and the VM ratio's ticks are at 1 and at the band's edges, where the
// verdict's answer changes (1/M and M, "0.8x" and "1.25x" for a band of
// 1.25), as ratios, as the host ratio's are; labelled ticks never crowd
// each other.
func TestFleetChartAxesLabelled(t *testing.T) {
	c := fleetComparison(t, 50)
	charts, _ := CompareCharts(c)
	p := charts[0].fig.panels[0]
	assert.Equal(t, "machine", p.plot.Y.Label.Text)
	assert.Equal(t, "VM ratio (log scale)", p.plot.X.Label.Text)
	count := map[float64]int{}
	band := 0.0
	for _, m := range c.Machines {
		if b := float64(m.Band); !math.IsNaN(b) {
			count[b]++
			if count[b] > count[band] {
				band = b
			}
		}
	}
	require.NotZero(t, band)
	ax := p.plot.X
	labels := map[float64]string{}
	var values []float64
	for _, tk := range ax.Tick.Marker.Ticks(ax.Min, ax.Max) {
		if tk.Label != "" {
			labels[tk.Value] = tk.Label
			values = append(values, tk.Value)
		}
	}
	assert.Equal(t, "1x", labels[1])
	assert.Equal(t, render.FormatRatio(analysis.Float(band)), labels[band], "the band's upper edge, %v", labels)
	assert.Equal(t, render.FormatRatio(analysis.Float(1/band)), labels[1/band], "the band's lower edge, %v", labels)
	assert.GreaterOrEqual(t, len(values), 4, "more than the band: round values where they leave room, %v", labels)
	span := math.Log(ax.Max / ax.Min)
	for i := 1; i < len(values); i++ {
		assert.GreaterOrEqual(t, math.Log(values[i]/values[i-1]), minTickGap*span, "%v", labels)
	}
	for _, tk := range p.beside.X.Tick.Marker.Ticks(p.beside.X.Min, p.beside.X.Max) {
		if tk.Label != "" {
			assert.True(t, strings.HasSuffix(tk.Label, "x"), "the host's ratios read as ratios: %q", tk.Label)
		}
	}
}

// The VM axis labels 1 and the bands' edges, the most shared band first,
// and drops a label that would crowd one already there.
func TestBandTicks(t *testing.T) {
	labelled := func(ticks []plot.Tick) []string {
		var out []string
		for _, tk := range ticks {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	rows := []compare.MachineVerdict{{Band: 1.25}, {Band: 1.3}, {Band: 1.25}, {Band: analysis.Float(math.NaN())}}
	other := 1.3 // a variable: 1/1.3 as a constant is exact, not a float64's quotient
	assert.Equal(t, []float64{0.8, 1.25, 1 / other, 1.3}, bandEdges(rows))
	assert.Equal(t, []string{"0.8x", "1x", "1.25x"}, labelled(bandTicks{edges: bandEdges(rows)}.Ticks(0.7, 1.4)), "1.3 crowds 1.25 on so short an axis")
	assert.Equal(t, []string{"0.5x", "0.8x", "1x", "1.25x", "2x", "5x"}, labelled(bandTicks{edges: []float64{0.8, 1.25}}.Ticks(0.4, 6)))
}
