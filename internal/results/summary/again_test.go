package summary

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/spec"
)

// A verdict's next step is worded as a command that works on the run in
// question: the built-in spec by name when the run measured it as built
// in, else the run's record (--again); with the repeats or the cap asked,
// and a cap --repeats would leave below the repeats raised.
func TestAgainNext(t *testing.T) {
	contention, err := spec.DefaultSpec("contention")
	require.NoError(t, err)
	seed := uint64(42)
	seeded := contention
	seeded.Seed = &seed // as a run records it
	own := contention
	own.Repeats, own.MaxRepeats = 6, 6
	noLooks := contention
	noLooks.MaxRepeats = 0
	for _, c := range []struct {
		name string
		s    spec.Spec
		path string
		next *analysis.NextStep
		want string
	}{
		{"built in", seeded, "qoslab-results/contention-1", &analysis.NextStep{Repeats: 12}, "qoslab run --default contention --repeats 12"},
		{"built in, quick", spec.Shrink(seeded), "r", &analysis.NextStep{MaxRepeats: 36}, "qoslab run --default contention --quick --max-repeats 36"},
		{"changed: its record", noLooks, "qoslab-results/contention-1", &analysis.NextStep{Repeats: 12}, "qoslab run --again qoslab-results/contention-1 --repeats 12"},
		{"a path quoted", noLooks, "my results/run", &analysis.NextStep{Repeats: 12}, "qoslab run --again 'my results/run' --repeats 12"},
		{"a cap below the repeats raised", own, "r", &analysis.NextStep{Repeats: 12}, "qoslab run --again r --repeats 12 --max-repeats 12"},
		{"no step", seeded, "r", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &Again{Spec: c.s, Path: c.path}
			assert.Equal(t, c.want, g.Next(c.next))
		})
	}
	var none *Again
	assert.Empty(t, none.NextLine(&analysis.NextStep{Repeats: 12}), "no run, no command")
}
