package plot

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// registerForTest registers f for the length of the test: what a chart's
// own file does from its init, undone at the end so that the other tests
// see the real families.
func registerForTest(t *testing.T, f family) {
	t.Helper()
	saved := families
	families = slices.Clone(families)
	t.Cleanup(func() { families = saved })
	register(f)
}

// repeatsCharts is a test-only family: per target, how many records the
// run has, drawn as one point. It is a chart as a new file would add one:
// a build function and a register call, nothing else in the package.
func repeatsCharts(in Input) ([]Chart, []Skipped) {
	var out []Chart
	for _, target := range targetOrder(targetsOfSamplesAll(in)) {
		n := 0
		for _, s := range in.Samples {
			if s.Target == target {
				n++
			}
		}
		p := newPlot("target", "records")
		p.Add(&plotter.Scatter{XYs: plotter.XYs{{X: 1, Y: float64(n)}}, GlyphStyle: glyphStyle(target, nil, 9)})
		f := &figure{title: "Records of " + target, panels: []panel{{plot: p, height: vg.Inch}}}
		out = append(out, chart(stem("test-records", target), "test-records", f))
	}
	return out, nil
}

func targetsOfSamplesAll(in Input) []string {
	var out []string
	for _, s := range in.Samples {
		if !slices.Contains(out, s.Target) {
			out = append(out, s.Target)
		}
	}
	return out
}

func TestARegisteredChartIsDrawnSelectedAndSkipped(t *testing.T) {
	before := Families()
	registerForTest(t, family{name: "test-records", rank: 15, build: repeatsCharts, lacks: "no records in this run"})

	// Its rank puts it between throughput (10) and mechanism (20).
	want := slices.Insert(slices.Clone(before), 1, "test-records")
	assert.Equal(t, want, Families())
	assert.Equal(t, []string{"throughput", "test-records", "mechanism"}, Families()[:3])

	in := loadRun(t, "linux-fixture")
	charts, _ := Charts(in)
	got := names(charts)
	require.Contains(t, got, "test-records-host")
	require.Contains(t, got, "test-records-vm")
	i := slices.Index(got, "test-records-host")
	assert.Equal(t, "throughput", familyOf(got[i-1]), "after the throughput charts: %v", got)
	assert.Equal(t, "test-records-vm", got[i+1], "host before vm")
	assert.Equal(t, "thread-times", familyOf(got[i+2]), "before the next family's charts (this fixture has no mechanism chart): %v", got)

	sel, err := Select(charts, "test-records")
	require.NoError(t, err)
	assert.Equal(t, []string{"test-records-host", "test-records-vm"}, names(sel))
	var svg bytes.Buffer
	require.NoError(t, sel[0].Render(&svg, "svg"))
	assert.Contains(t, svg.String(), "Records of host")

	// A run without what it needs: skipped, with its lacks, in its place.
	_, skipped := Charts(Input{Name: "empty"})
	require.GreaterOrEqual(t, len(skipped), 2)
	assert.Equal(t, Skipped{"test-records", "no records in this run"}, skipped[1])
	assert.True(t, InFamily("test-records-vm", "test-records"))
}

func TestRegisterRefusesWhatWouldBeAmbiguous(t *testing.T) {
	build := func(Input) ([]Chart, []Skipped) { return nil, nil }
	for _, tc := range []struct {
		name string
		f    family
		want string
	}{
		{"same name", family{name: familyThroughput, rank: 15, build: build, lacks: "x"}, `"throughput" registered twice`},
		{"same rank", family{name: "other", rank: 10, build: build, lacks: "x"}, `"throughput" and "other" both have rank 10`},
		{"no build", family{name: "other", rank: 15, lacks: "x"}, "without a name, build or lacks"},
		{"no lacks", family{name: "other", rank: 15, build: build}, "without a name, build or lacks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := Families()
			var got any
			func() {
				defer func() { got = recover() }()
				registerForTest(t, tc.f)
			}()
			require.NotNil(t, got, "registered")
			assert.Contains(t, got, tc.want)
			assert.Equal(t, saved, Families())
		})
	}
}
