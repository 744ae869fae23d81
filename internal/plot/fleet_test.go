package plot

import (
	"strconv"
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
		{"fifty", fleetLabels(50), true},
		{"twelve fleet names", fleetLabels(12), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ticks, key := runTicks(tc.labels)
			assert.Len(t, ticks, len(tc.labels))
			assert.Equal(t, tc.keyed, len(key) > 0, "%q", ticks)
			per := (chartWidth - vg.Points(2*margin+90)) / vg.Length(len(tc.labels))
			width := func(tick string) vg.Length {
				var w vg.Length
				for _, l := range strings.Split(tick, "\n") {
					w = max(w, sty.Width(l))
				}
				return w
			}
			last := -1
			for i, tick := range ticks {
				assert.LessOrEqual(t, len(strings.Split(tick, "\n")), maxTickLines, tick)
				if !tc.keyed {
					assert.LessOrEqual(t, float64(width(tick)), float64(per-vg.Points(12)), "%q is wider than its place", tick)
				}
				if tick == "" {
					continue
				}
				if last >= 0 { // centred labels: half of each between their centres, and a gap
					room := vg.Length(i-last)*per - vg.Points(6)
					assert.LessOrEqual(t, float64((width(ticks[last])+width(tick))/2), float64(room), "%q runs into %q", ticks[last], tick)
				}
				last = i
			}
			if tc.keyed {
				for i, l := range tc.labels {
					assert.Contains(t, key[0], "#"+strconv.Itoa(i+1)+": "+l, "the key names every run in full")
				}
			} else {
				for i, l := range tc.labels {
					assert.Equal(t, l, strings.ReplaceAll(ticks[i], "\n", " "), "wrapped at spaces, nothing lost")
				}
			}
		})
	}
}

// fleetLabels are n runs' labels as a constructed fleet's: fleet-01, ...
func fleetLabels(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "fleet-" + strconv.Itoa(100 + i + 1)[1:]
	}
	return out
}
