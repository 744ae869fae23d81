package plot

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/plot/vg"
)

// A chart's run labels never run into each other: each fits its place on
// the x axis, wrapped, or the runs are keyed in a note.
func TestRunTicksNeverOverlap(t *testing.T) {
	sty := textStyle(tickSize)
	for _, tc := range []struct {
		name   string
		labels []string
		keyed  bool
	}{
		{"two short", []string{"mini (baseline)", "studio"}, false},
		{"four start times", []string{"11-24 22:49 (baseline)", "11-24 22:50", "11-24 22:53 (quick)", "11-25 08:01 (quick, partial)"}, false},
		{"four long", []string{
			"vm, Debian 12 (bookworm) #1 (baseline)", "vm, Debian 12 (bookworm) #2", "vm, Debian 12 (bookworm) #3", "vm, Debian 12 (bookworm) #4"}, false},
		{"twelve long", strings.Split(strings.Repeat("a-rather-long-host-name.example.org (quick, partial),", 12), ",")[:12], true},
		{"one unbreakable", []string{"x", strings.Repeat("y", 200)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ticks, key := runTicks(tc.labels)
			assert.Len(t, ticks, len(tc.labels))
			assert.Equal(t, tc.keyed, len(key) > 0, "%q", ticks)
			slot := (chartWidth-vg.Points(2*margin+90))/vg.Length(len(tc.labels)) - vg.Points(12)
			for _, tick := range ticks {
				lines := strings.Split(tick, "\n")
				assert.LessOrEqual(t, len(lines), maxTickLines, tick)
				for _, l := range lines {
					assert.LessOrEqual(t, float64(sty.Width(l)), float64(slot), "%q is wider than its place", l)
				}
			}
			if tc.keyed {
				for i, l := range tc.labels {
					assert.Contains(t, key[0], ticks[i]+": "+l, "the key names every run in full")
				}
			} else {
				for i, l := range tc.labels {
					assert.Equal(t, l, strings.ReplaceAll(ticks[i], "\n", " "), "wrapped at spaces, nothing lost")
				}
			}
		})
	}
}
