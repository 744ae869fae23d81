package cli

import (
	"context"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func TestCompareRuns(t *testing.T) {
	parent := t.TempDir()
	slow := fakeRun(t, parent, "slow", "fp", []float64{100, 101, 99, 98, 102})
	fast := fakeRun(t, parent, "fast", "fp", []float64{200, 199, 201, 202, 203})
	same := fakeRun(t, parent, "same", "fp", []float64{101, 100.5, 102.5, 99.5, 97})
	other := fakeRun(t, parent, "other", "int", []float64{1, 2})

	streams, out, _ := testIO()
	compare := func(old, new string) error {
		out.Reset()
		return compareRun(context.Background(), &compareOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{old, new}}, Format: "table"})
	}
	require.NoError(t, compare(slow, fast))
	assert.Contains(t, out.String(), "2.01x (p=0.0079)", "a clear difference is shown with its size, as a ratio beyond 1.5x: medians 100 and 201")
	assert.Contains(t, out.String(), "p=0.0079", "exact two-sided Mann-Whitney p for 5 vs 5 fully separated, no ties: 2/252")

	require.NoError(t, compare(slow, same))
	assert.Contains(t, out.String(), " ~ ", "no significant difference prints ~")

	err := compare(slow, other)
	assert.ErrorContains(t, err, "no cell in common")
	assert.NotContains(t, out.String(), "cannot reach", "5 vs 5 can reach p<0.05")
}

// Three repeats against three can never be significant (smallest two-sided
// p 0.1): a 3x change is marked, and the footer says why and what to do.
func TestCompareSaysWhenRepeatsAreTooFew(t *testing.T) {
	parent := t.TempDir()
	slow := fakeRun(t, parent, "slow", "fp", []float64{100, 101, 99})
	fast := fakeRun(t, parent, "fast", "fp", []float64{300, 303, 297})
	streams, out, _ := testIO()
	require.NoError(t, compareRun(context.Background(), &compareOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{slow, fast}}, Format: "table"}))
	assert.Contains(t, out.String(), "~ (p=0.1) *")
	assert.Contains(t, out.String(), "*: these repeats cannot reach p<0.05 however large the change: use 6 or more repeats")
}

func TestCompareLabelsAndFormats(t *testing.T) {
	a := filepath.Join("..", "..", "testdata", "results", "compare-a")
	c := filepath.Join("..", "..", "testdata", "results", "compare-c")
	streams, out, _ := testIO()
	run := func(format string, labels ...string) error {
		out.Reset()
		return compareRun(context.Background(), &compareOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{a, c}}, Format: format, Labels: labels})
	}
	require.NoError(t, run("csv", "M1="+a, "short="+c+"/"))
	assert.Contains(t, out.String(), ",M1,")
	assert.Contains(t, out.String(), ",short,", "a DIR given with a trailing slash still names its run")
	for _, bad := range [][]string{{"M1"}, {"=" + a}, {"M1=nowhere"}, {"M1=" + a, "M2=" + a}} {
		err := run("table", bad...)
		require.Error(t, err, "%q", bad)
		assert.True(t, isUsageError(err), "%q: %v", bad, err)
		assert.Contains(t, err.Error(), "--label")
	}
	err := run("table", "same="+a, "same="+c)
	assert.ErrorContains(t, err, `label "same" names both`)
}

func TestCompareNeedsTwoDirectories(t *testing.T) {
	streams, _, _ := testIO()
	root := NewCmdRoot(NewFactory(streams))
	root.SetArgs([]string{"compare", filepath.Join("..", "..", "testdata", "results", "compare-a")})
	err := root.Execute()
	require.Error(t, err)
	assert.True(t, isUsageError(err))
	assert.Contains(t, err.Error(), "two or more results directories, the first the baseline; got 1")
}

// A run that did not come back (a fleet host) is named with why in every
// format of compare and in the report across runs, so the table does not
// look complete.
func TestCompareNamesTheMissingRuns(t *testing.T) {
	a := filepath.Join("..", "..", "testdata", "results", "compare-a")
	b := filepath.Join("..", "..", "testdata", "results", "compare-b")
	missing := []string{"gone=unreachable: Ansible could not connect to it", "broken=failed: Run the experiment: qoslab: cell 4/20 failed"}
	streams, out, _ := testIO()
	for format, want := range map[string][]string{
		"table":    {"gone: did not come back (unreachable: Ansible could not connect to it); it has no column", "broken: did not come back (failed: Run the experiment: qoslab: cell 4/20 failed)"},
		"markdown": {"- gone: did not come back (unreachable: Ansible could not connect to it); it has no column"},
		"csv":      {"missing,,,,,,,gone,,false,,,,,,,,,unreachable: Ansible could not connect to it"},
		"json":     {`"missing": [`, `"label": "gone"`, `"reason": "unreachable: Ansible could not connect to it"`},
	} {
		out.Reset()
		require.NoError(t, compareRun(context.Background(), &compareOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{a, b}}, Format: format, Missing: missing}), format)
		for _, w := range want {
			assert.Contains(t, out.String(), w, format)
		}
	}
	for _, bad := range []string{"gone", "=why", "gone="} {
		err := compareRun(context.Background(), &compareOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{a, b}}, Format: "table", Missing: []string{bad}})
		require.Error(t, err, bad)
		assert.True(t, isUsageError(err))
		assert.Contains(t, err.Error(), "want NAME=REASON")
	}

	dir := filepath.Join(t.TempDir(), "across")
	root := NewCmdRoot(NewFactory(streams))
	root.SetArgs([]string{"report", "--compare", a, b, "--out", dir, "--missing", missing[0]})
	require.NoError(t, root.Execute())
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(html), "Not every run meant to be compared is here: gone did not come back (unreachable: Ansible could not connect to it).")
	md, err := os.ReadFile(filepath.Join(dir, "compare.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "gone: did not come back")
}

// --layout sets the tables out by rows or columns whatever the count, in
// compare and in report --compare, from the flag or the environment; any
// other value is a usage error naming what is allowed.
func TestCompareLayout(t *testing.T) {
	a := filepath.Join("..", "..", "testdata", "results", "compare-a")
	b := filepath.Join("..", "..", "testdata", "results", "compare-b")
	rowsHeader := regexp.MustCompile(`(?m)^TARGET +QOS +THREADS +RUN +VALUE +VS BASE$`)
	out, stderr, code := runRoot(t, nil, "compare", a, b)
	require.Equal(t, 0, code, stderr)
	assert.NotRegexp(t, rowsHeader, out, "two runs: columns")
	assert.Contains(t, out, "vs base")

	out, stderr, code = runRoot(t, nil, "compare", "--layout", "rows", a, b)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, rowsHeader, out)
	out, stderr, code = runRoot(t, map[string]string{"QOSLAB_COMPARE_LAYOUT": "rows"}, "compare", a, b)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, rowsHeader, out, "from the environment")

	_, stderr, code = runRoot(t, nil, "compare", "--layout", "row", a, b)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--layout "row"`)
	assert.Contains(t, stderr, "rows, columns")

	dir := filepath.Join(t.TempDir(), "across")
	_, stderr, code = runRoot(t, nil, "report", "--compare", "--layout", "rows", "--out", dir, a, b)
	require.Equal(t, 0, code, stderr)
	md, err := os.ReadFile(filepath.Join(dir, "compare.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "| TARGET | QOS | THREADS | RUN | VALUE | VS BASE |")
}
