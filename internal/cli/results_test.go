package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
)

// fakeRun writes a complete results directory whose fp cell ran at rates.
func fakeRun(t *testing.T, parent, name, workload string, rates []float64) string {
	t.Helper()
	d, err := results.Create(parent, name, time.Now())
	require.NoError(t, err)
	log, _, err := d.OpenSamples()
	require.NoError(t, err)
	defer log.Close()
	for i, r := range rates {
		s := results.Sample{Target: "host", Workload: workload, QoS: 9, Threads: 1, Repeat: i + 1, StartNs: 0, EndNs: 1e9, Work: r, Unit: "loops", Rate: r, QoSApplied: 9, QoSFull: true}
		require.NoError(t, log.Append(results.Record{Cell: "host " + workload, RunRecords: 1, Sample: s, RecordedAt: time.Now()}))
	}
	require.NoError(t, d.Finish(time.Now(), nil))
	return d.Path
}

// verdictRun writes a complete results directory of fp at QoS 9 and 33
// on host and vm, repeats times, whose verdict is clear: the host runs 33
// a hundred times faster than 9, and the VM runs 33 vmRatio times faster
// (1: QoS subsumed, "yes"; 100: kept, "no"; too few repeats: inconclusive).
func verdictRun(t *testing.T, parent, name string, repeats int, vmRatio float64) string {
	t.Helper()
	d, err := results.Create(parent, name, time.Now())
	require.NoError(t, err)
	log, _, err := d.OpenSamples()
	require.NoError(t, err)
	defer log.Close()
	for r := 1; r <= repeats; r++ {
		jitter := 1 + float64(r)/100
		for _, c := range []struct {
			target string
			qos    int
			rate   float64
		}{{"host", 9, 1e6}, {"host", 33, 1e8}, {"vm", 9, 5e7}, {"vm", 33, 5e7 * vmRatio}} {
			rate := c.rate * jitter
			s := results.Sample{Target: c.target, Workload: "fp", QoS: c.qos, Threads: 1, Repeat: r, StartNs: 0, EndNs: 1e9, Work: rate, Unit: "loops", Rate: rate, QoSApplied: c.qos, QoSFull: true}
			require.NoError(t, log.Append(results.Record{Cell: fmt.Sprintf("%s fp qos=%d threads=1 duration=1s", c.target, c.qos), RunRecords: 1, Sample: s, RecordedAt: time.Now()}))
		}
	}
	require.NoError(t, d.Finish(time.Now(), nil))
	return d.Path
}

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

func TestResultsListAndShow(t *testing.T) {
	parent := t.TempDir()
	path := fakeRun(t, parent, "listed", "fp", []float64{1, 2, 3})
	streams, out, errOut := testIO()
	f := NewFactory(streams)
	root := NewCmdRoot(f)
	root.SetArgs([]string{"results", "list", "--results", parent})
	require.NoError(t, root.Execute())
	assert.Contains(t, out.String(), path)
	assert.Contains(t, out.String(), "complete")
	assert.Contains(t, out.String(), "3", "its sample count")

	// A run that wrote no summary yet (one still running, or killed) is
	// summarized from its samples rather than refused.
	out.Reset()
	root = NewCmdRoot(f)
	root.SetArgs([]string{"results", "show", path})
	require.NoError(t, root.Execute())
	assert.Contains(t, errOut.String(), "has no summary.md yet: computed from its 3 samples")
	assert.Contains(t, out.String(), "# qoslab results: listed")
	assert.Contains(t, out.String(), "| host | 9 background | 1 | 3 |", "the cell, n=3")

	newer := fakeRun(t, parent, "newer", "fp", []float64{1})
	out.Reset()
	root = NewCmdRoot(f)
	root.SetArgs([]string{"results", "show", "latest", "--results", parent})
	require.NoError(t, root.Execute())
	assert.True(t, strings.HasPrefix(out.String(), newer+": newer,"), out.String())

	out.Reset()
	root = NewCmdRoot(f)
	root.SetArgs([]string{"results", "list", "--results", parent, "--json"})
	require.NoError(t, root.Execute())
	var rows []struct {
		Path    string `json:"path"`
		Samples int    `json:"samples"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rows))
	require.Len(t, rows, 2)
	assert.Equal(t, path, rows[0].Path, "oldest first")
	assert.Equal(t, 3, rows[0].Samples)

	root = NewCmdRoot(f)
	root.SetArgs([]string{"results", "show", "latest", "--results", t.TempDir()})
	assert.ErrorContains(t, root.Execute(), "no results in")
}

func TestImageListJSON(t *testing.T) {
	store := t.TempDir()
	streams, out, _ := testIO()
	f := NewFactory(streams)
	cmd := newCmdImageList(f, nil)
	cmd.SetArgs([]string{"--image-store", store, "--json"})
	require.NoError(t, cmd.Execute())
	assert.JSONEq(t, "[]", out.String(), "an empty store is an empty list, for scripts")

	require.NoError(t, os.MkdirAll(filepath.Join(store, "broken"), 0o755))
	out.Reset()
	cmd = newCmdImageList(f, nil)
	cmd.SetArgs([]string{"--image-store", store, "--json"})
	require.NoError(t, cmd.Execute())
	var entries []map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &entries))
	require.Len(t, entries, 1)
}

// results show validates the samples as every reader does: a damaged
// directory is an error naming the line, not its stale summary.md.
func TestResultsShowRefusesDamagedSamples(t *testing.T) {
	parent := t.TempDir()
	path := fakeRun(t, parent, "damaged", "fp", []float64{1, 2, 3})
	require.NoError(t, os.WriteFile(filepath.Join(path, results.SummaryMDFile), []byte("# stale\n"), 0o644))
	samples := filepath.Join(path, results.SamplesFile)
	b, err := os.ReadFile(samples)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(samples, append([]byte("garbage\n"), b...), 0o644))
	streams, out, _ := testIO()
	err = resultsShowRun(context.Background(), &resultsOptions{IO: streams, Dirs: []string{path}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 1 is not a sample record")
	assert.NotContains(t, out.String(), "# stale")
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

func TestReportCompareFlags(t *testing.T) {
	a := filepath.Join("..", "..", "testdata", "results", "compare-a")
	b := filepath.Join("..", "..", "testdata", "results", "compare-b")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--compare", a, b}, "--compare needs --out DIR"},
		{[]string{"report", "--compare", a, "--out", t.TempDir()}, "two or more results directories, got 1"},
		{[]string{"report", a, "--out", t.TempDir()}, "--out, --label and --missing go with --compare"},
		{[]string{"report", a, "--missing", "gone=unreachable"}, "--out, --label and --missing go with --compare"},
		{[]string{"report", a, b}, "add --compare and --out DIR"},
	} {
		streams, _, _ := testIO()
		root := NewCmdRoot(NewFactory(streams))
		root.SetArgs(tc.args)
		err := root.Execute()
		require.Error(t, err, "%q", tc.args)
		assert.True(t, isUsageError(err), "%q: %v", tc.args, err)
		assert.Contains(t, err.Error(), tc.want)
	}
	streams, out, _ := testIO()
	root := NewCmdRoot(NewFactory(streams))
	dir := filepath.Join(t.TempDir(), "across")
	root.SetArgs([]string{"report", "--compare", a, b, "--out", dir})
	require.NoError(t, root.Execute())
	assert.Contains(t, out.String(), filepath.Join(dir, "report.html"))
	_, err := os.Stat(filepath.Join(dir, "plots", "compare-subsumption.png"))
	assert.NoError(t, err)
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

// results show --json is summary.json's document, computed from the
// samples, with the directory and how the run stands.
func TestResultsShowJSON(t *testing.T) {
	dir := verdictRun(t, t.TempDir(), "shown", 6, 1)
	out, stderr, code := runRoot(t, nil, "results", "show", "--json", dir)
	require.Equal(t, 0, code, stderr)
	var doc struct {
		Path          string `json:"path"`
		State         string `json:"state"`
		SchemaVersion string `json:"schema_version"`
		Name          string `json:"name"`
		Cells         []struct {
			Target    string `json:"target"`
			TotalRate struct {
				Median float64 `json:"median"`
			} `json:"total_rate"`
		} `json:"cells"`
		Verdicts []struct {
			Outcome string `json:"outcome"`
		} `json:"verdicts"`
		Warnings []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, dir, doc.Path)
	assert.Equal(t, "complete", doc.State)
	assert.Equal(t, results.SchemaVersion, doc.SchemaVersion)
	assert.Equal(t, "shown", doc.Name)
	assert.Len(t, doc.Cells, 4, "host and vm at two classes")
	require.Len(t, doc.Verdicts, 1)
	assert.Equal(t, "yes", doc.Verdicts[0].Outcome)
	assert.NotNil(t, doc.Warnings)
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
