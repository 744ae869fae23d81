package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSummarize(t *testing.T) {
	cases := []struct {
		name string
		in   []float64
		want Summary
	}{
		{"odd", []float64{3, 1, 2}, Summary{N: 3, Median: 2, Min: 1, Max: 3}},
		{"even", []float64{4, 1, 3, 2}, Summary{N: 4, Median: 2.5, Min: 1, Max: 4}},
		{"one", []float64{7}, Summary{N: 1, Median: 7, Min: 7, Max: 7}},
		{"nan ignored", []float64{math.NaN(), 5, 1}, Summary{N: 2, Median: 3, Min: 1, Max: 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Summarize(c.in))
		})
	}
	empty := Summarize(nil)
	assert.Equal(t, 0, empty.N)
	assert.True(t, math.IsNaN(empty.Median))
}

func TestTotalRate(t *testing.T) {
	// Two threads: 100 loops over 0..1 s and 100 loops over 0.5..2 s: 200 loops in 2 s.
	rate, el := TotalRate([]Interval{{0, 1e9, 100}, {5e8, 2e9, 100}})
	assert.Equal(t, int64(2e9), el)
	assert.InDelta(t, 100.0, rate, 1e-9)

	rate, el = TotalRate(nil)
	assert.Zero(t, rate)
	assert.Zero(t, el)

	rate, _ = TotalRate([]Interval{{5, 5, 10}})
	assert.Zero(t, rate, "a zero-length interval has no rate")
}
