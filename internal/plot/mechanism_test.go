package plot

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run whose records carry CPU time gets a share-against-speed chart per
// compute workload, a panel per target; one without says why it has none.
func TestMechanismChart(t *testing.T) {
	in := loadRun(t, "constructed/starved-crumbs")
	charts, _ := Charts(in)
	var c *Chart
	for i := range charts {
		if charts[i].Name == "mechanism-fp" {
			c = &charts[i]
		}
	}
	require.NotNil(t, c, "a mechanism chart for fp")
	require.Len(t, c.fig.panels, 2, "host and VM")
	assert.Equal(t, "speed / highest class's (Host)", c.fig.panels[0].plot.Y.Label.Text)
	assert.Equal(t, "speed / highest class's (VM)", c.fig.panels[1].plot.Y.Label.Text)
	assert.Equal(t, "CPU share (CPU time / wall time"+logNote(true)+")", c.fig.panels[0].plot.X.Label.Text, "shares from 0.05 to 100 percent")
	var legend []string
	for _, e := range c.fig.legend {
		legend = append(legend, e.text)
	}
	assert.Equal(t, []string{"Host QoS 9 background", "Host QoS 33 user-interactive", "VM QoS 9 background", "VM QoS 33 user-interactive"}, legend)
	// Host background's 12 repeats sit far left of user-interactive's, at
	// the same speed.
	pts := shareSpeedPoints(in.Summary.Cells, series{target: "host", qos: 9})
	require.Len(t, pts, 12)
	for _, p := range pts {
		assert.Less(t, p.X, 0.03)
		assert.InDelta(t, 1, p.Y, 0.05)
	}
	svg := strings.Join(texts(renderSVG(t, *c)), " ")
	assert.Contains(t, svg, "CPU share against speed per CPU-second")

	_, skipped := Charts(loadRun(t, "linux-contention"))
	var reasons []string
	for _, s := range skipped {
		if s.Name == "mechanism-fp" {
			reasons = append(reasons, s.Reason)
		}
	}
	assert.Equal(t, []string{"the records of fp carry no CPU time (a run written before results schema 1.2)"}, reasons)
}
