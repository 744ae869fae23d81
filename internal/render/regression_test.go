package render

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/analysis"
)

func TestRegression(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		label string
		r     analysis.Regression
		want  string
	}{
		// The three equations of [game] (docs/references.md), verbatim.
		{"Host QoS 33", analysis.Regression{A: 1.411e7, B: 1.4784e8}, "Host QoS 33: R = (1.411 x 10^7) + (1.4784 x 10^8).T"},
		{"VM QoS 33", analysis.Regression{A: 1.3628e7, B: 1.4717e8}, "VM QoS 33: R = (1.3628 x 10^7) + (1.4717 x 10^8).T"},
		{"VM QoS 9", analysis.Regression{A: 1.2246e7, B: 1.4696e8}, "VM QoS 9: R = (1.2246 x 10^7) + (1.4696 x 10^8).T"},
		// Five significant digits, rounded, trailing zeros dropped.
		{"L", analysis.Regression{A: 1.234567e7, B: 2e8}, "L: R = (1.2346 x 10^7) + (2 x 10^8).T"},
		{"L", analysis.Regression{A: 9.99996e7, B: 1.41104e8}, "L: R = (1 x 10^8) + (1.411 x 10^8).T"},
		{"L", analysis.Regression{A: -2.1e6, B: 1.5e8}, "L: R = (-2.1 x 10^6) + (1.5 x 10^8).T"},
		{"L", analysis.Regression{A: 0, B: -3.25e-2}, "L: R = (0 x 10^0) + (-3.25 x 10^-2).T"},
		{"L", analysis.Regression{A: 12, B: 345678}, "L: R = (1.2 x 10^1) + (3.4568 x 10^5).T"},
		{"Host QoS 9", analysis.Regression{A: analysis.Float(nan), B: analysis.Float(nan), N: 1}, "Host QoS 9: no regression (needs rates at three or more thread counts; two would only join two means)"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Regression(c.label, c.r))
	}
}

func TestTargetLabel(t *testing.T) {
	for in, want := range map[string]string{"host": "Host", "vm": "VM", "VM": "VM", "guest": "Guest", "": ""} {
		assert.Equal(t, want, TargetLabel(in), in)
	}
	assert.Equal(t, "VM QoS 9", RegressionLabel(analysis.ClassRegression{Target: "vm", QoS: 9}))
}

// A class's line is followed by its Theil-Sen slope and interval; without
// a line it says why.
func TestClassRegression(t *testing.T) {
	host := analysis.ClassRegression{Target: "host", QoS: 33, ThreadCounts: 3,
		Regression: analysis.Regression{A: -200, B: 375, R2: 0.8, N: 6}, Slope: analysis.TheilSen{Slope: 350, Low: -200, High: 800}}
	assert.Equal(t, "Host QoS 33: R = (-2 x 10^2) + (3.75 x 10^2).T; slope 350 [-200..800] (Theil-Sen, 95%)", ClassRegression(host))
	nan := analysis.Float(math.NaN())
	vm := analysis.ClassRegression{Target: "vm", QoS: 33, ThreadCounts: 2,
		Regression: analysis.Regression{A: nan, B: nan, R2: nan, N: 2}, Slope: analysis.TheilSen{Slope: nan, Low: nan, High: nan}}
	assert.Equal(t, "VM QoS 33: no regression (needs rates at three or more thread counts; two would only join two means)", ClassRegression(vm))
}

// The published equations of the reference fixtures print as published.
func TestRegressionPrintsThePublishedEquations(t *testing.T) {
	for _, name := range []string{"reference-001.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "analysis", name))
		require.NoError(t, err)
		var f struct {
			Regressions []struct {
				Target string  `json:"target"`
				QoS    int     `json:"qos"`
				A      float64 `json:"a"`
				B      float64 `json:"b"`
				Text   string  `json:"text"`
			} `json:"published_regressions"`
		}
		require.NoError(t, json.Unmarshal(b, &f))
		require.NotEmpty(t, f.Regressions, name)
		for _, r := range f.Regressions {
			c := analysis.ClassRegression{Target: r.Target, QoS: r.QoS}
			assert.Equal(t, r.Text, Regression(RegressionLabel(c), analysis.Regression{A: analysis.Float(r.A), B: analysis.Float(r.B)}))
		}
	}
}
