package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/compare"
	"github.com/qoslab/qoslab/internal/results"
)

// One report across the three compare fixtures: the charts inline and as
// PNGs, the table with the missing cells, each run's platform, and the
// table's exports, with no external URL.
func TestComparisonReport(t *testing.T) {
	r := threeRuns(t)
	require.Empty(t, r.Skipped)
	var names []string
	for _, ch := range r.Charts {
		names = append(names, ch.Name)
	}
	assert.Equal(t, []string{"compare-fleet-fp", "compare-subsumption", "compare-rates-fp"}, names)

	out := filepath.Join(t.TempDir(), "report")
	paths, err := r.Write(out)
	require.NoError(t, err)
	for _, f := range []string{"plots/compare-fleet-fp.png", "plots/compare-subsumption.png", "plots/compare-rates-fp.png", results.ReportFile, compareMarkdownFile, compareCSVFile, compareJSONFile} {
		assert.Contains(t, paths, filepath.Join(out, f))
		st, err := os.Stat(filepath.Join(out, f))
		require.NoError(t, err)
		assert.Positive(t, st.Size(), f)
	}
	html, err := os.ReadFile(filepath.Join(out, results.ReportFile))
	require.NoError(t, err)
	s := string(html)
	assert.Equal(t, 3, strings.Count(s, "<svg"), "every chart inline")
	verdicts, runs := strings.Index(s, "<h2>Verdict per machine</h2>"), strings.Index(s, "<h2>Runs</h2>")
	require.Positive(t, verdicts, "the verdict per machine")
	assert.Less(t, verdicts, runs, "first")
	assert.Contains(t, s, `<tr class="yes"><td>short</td><td class="yes">yes</td><td class="num">0.997 [0.951..1.031]</td>`, "a row per machine, coloured by its verdict")
	assert.Equal(t, strings.Count(s, "<table>"), strings.Count(s, `<div class="table"><table>`), "every table in its own scrolling box")
	for _, rule := range []string{"div.table {", "tr.yes > td", "tr.no > td", "tr.inconclusive > td", ".warning {", ".note,", "th.num"} {
		assert.Contains(t, s, rule, "the style gives render's classes their look")
	}
	assert.Contains(t, s, "<th>short</th>")
	assert.Contains(t, s, "missing")
	assert.Contains(t, s, "not Apple silicon results", "a Linux run is said to be one")
	assert.Contains(t, s, "The runs differ in what shapes the numbers")
	assert.Regexp(t, `subsumption index</td><td>fp</td><td>1</td><td class="num">\d\.\d{3} \[`, s)
	assert.NotRegexp(t, regexp.MustCompile(`(src|href)="https?:`), s, "self-contained")
}

// --layout rows gives the report's tables a row per run and cell, as
// compare prints them, and turns the differences' table with them.
func TestComparisonReportRows(t *testing.T) {
	var in []compare.Input
	for i, f := range []string{"compare-a", "compare-c"} {
		l, err := results.Load(filepath.Join("..", "..", "testdata", "results", f))
		require.NoError(t, err)
		in = append(in, compare.Input{Label: []string{"first", "short"}[i], Loaded: l})
	}
	c, err := compare.Build(in)
	require.NoError(t, err)
	c.Layout = compare.LayoutRows
	var buf strings.Builder
	require.NoError(t, NewComparison(c, nil).WriteHTML(&buf))
	s := buf.String()
	assert.Contains(t, s, "<tr><th>RUN</th><th>spec</th><th>fp work</th></tr>", "a row per run in the differences")
	assert.Contains(t, s, `<tr><th>TARGET</th><th>QOS</th><th class="num">THREADS</th><th>RUN</th><th class="num">VALUE</th><th class="num">VS BASE</th></tr>`)
	assert.Contains(t, s, "<details><summary>fp (20 rows)</summary>\n<p>loops/s; median with its 95% interval.</p>", "a long table folded under its name, what it shows first")
	assert.Regexp(t, `<tr><td>host</td><td>9 background</td><td class="num">1</td><td>short</td><td class="num">[^<]+</td><td class="num">~ \(p=[\d.]+\)</td></tr>`, s)
}

// threeRuns is the comparison of the three compare fixtures, labelled
// first, second and short.
func threeRuns(t *testing.T) *Comparison {
	t.Helper()
	var loaded []*results.Loaded
	var in []compare.Input
	for i, f := range []string{"compare-a", "compare-b", "compare-c"} {
		l, err := results.Load(filepath.Join("..", "..", "testdata", "results", f))
		require.NoError(t, err)
		loaded = append(loaded, l)
		in = append(in, compare.Input{Label: []string{"first", "second", "short"}[i], Loaded: l})
	}
	c, err := compare.Build(in)
	require.NoError(t, err)
	return NewComparison(c, loaded)
}
