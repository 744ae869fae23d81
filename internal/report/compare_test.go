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
	r := NewComparison(c, loaded)
	require.Empty(t, r.Skipped)
	var names []string
	for _, ch := range r.Charts {
		names = append(names, ch.Name)
	}
	assert.Equal(t, []string{"compare-subsumption", "compare-rates-fp"}, names)

	out := filepath.Join(t.TempDir(), "report")
	paths, err := r.Write(out)
	require.NoError(t, err)
	for _, f := range []string{"plots/compare-subsumption.png", "plots/compare-rates-fp.png", results.ReportFile, compareMarkdownFile, compareCSVFile, compareJSONFile} {
		assert.Contains(t, paths, filepath.Join(out, f))
		st, err := os.Stat(filepath.Join(out, f))
		require.NoError(t, err)
		assert.Positive(t, st.Size(), f)
	}
	html, err := os.ReadFile(filepath.Join(out, results.ReportFile))
	require.NoError(t, err)
	s := string(html)
	assert.Equal(t, 2, strings.Count(s, "<svg"), "both charts inline")
	assert.Contains(t, s, "<th>short</th>")
	assert.Contains(t, s, "missing")
	assert.Contains(t, s, "not Apple silicon results", "a Linux run is said to be one")
	assert.Contains(t, s, "The runs differ in what shapes the numbers")
	assert.Regexp(t, `subsumption index</td><td>fp</td><td>1</td><td class="num">\d\.\d{3} \[`, s)
	assert.NotRegexp(t, regexp.MustCompile(`(src|href)="https?:`), s, "self-contained")
}
