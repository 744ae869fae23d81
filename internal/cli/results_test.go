package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
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

func TestResultsListAndShow(t *testing.T) {
	parent := t.TempDir()
	path := fakeRun(t, parent, "listed", "fp", []float64{1, 2, 3})
	streams, out, errOut := testIO()
	f := NewFactory(streams)
	root := NewCmdRoot(f)
	root.SetArgs([]string{"results", "list", "--results", parent})
	require.NoError(t, root.Execute())
	assert.Contains(t, out.String(), filepath.Base(path))
	assert.Contains(t, out.String(), "complete")
	assert.Contains(t, out.String(), "3", "its sample count")

	// A run that wrote no summary yet (one still running, or killed) is
	// summarized from its samples rather than refused.
	out.Reset()
	root = NewCmdRoot(f)
	root.SetArgs([]string{"results", "show", path})
	require.NoError(t, root.Execute())
	assert.Contains(t, errOut.String(), "has no summary.md yet: computed from its samples, 3 cell runs, 3 records")
	assert.Contains(t, out.String(), "qoslab results: listed\n")
	assert.Regexp(t, `\nhost +9 background +1 +3 `, out.String(), "the cell, n=3")

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
	err = resultsShowRun(context.Background(), &showOptions{resultsOptions: resultsOptions{IO: streams, Dirs: []string{path}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 1 is not a sample record")
	assert.NotContains(t, out.String(), "# stale")
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

// A summary is stale when the samples hold other cell runs than it
// counted, not when the files' times say so: a copy (cp -r) gives the
// samples a newer time than summary.md and changes nothing.
func TestResultsShowStaleByContentNotFileTimes(t *testing.T) {
	path := fakeRun(t, t.TempDir(), "copied", "fp", []float64{1, 2, 3})
	l, err := results.Load(path)
	require.NoError(t, err)
	require.NoError(t, summary.Write(path, summary.Of(l)))
	samples := filepath.Join(path, results.SamplesFile)
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(samples, later, later))

	out, stderr, code := runRoot(t, nil, "results", "show", path)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "older than")
	assert.Regexp(t, `\nhost +9 background +1 +3 `, out)

	b, err := os.ReadFile(samples)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	extra := strings.Replace(lines[len(lines)-1], `"repeat":3`, `"repeat":4`, 1)
	require.NotEqual(t, lines[len(lines)-1], extra)
	require.NoError(t, os.WriteFile(samples, append(b, []byte(extra+"\n")...), 0o644))
	out, stderr, code = runRoot(t, nil, "results", "show", path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "summary.md is older than what its samples hold (summary.json counted 3 cell runs, samples.jsonl holds 4): computed from its samples, 4 cell runs, 4 records")
	assert.Regexp(t, `\nhost +9 background +1 +4 `, out, "computed from the samples")
}

// A run is named on the command line by its bare name too, as results
// list and completion show it: results show, compare (and its --label) and
// report find it under the results location.
func TestBareRunNames(t *testing.T) {
	parent := t.TempDir()
	a := verdictRun(t, parent, "bare-a", 6, 1)
	b := verdictRun(t, parent, "bare-b", 6, 1)
	nameA, nameB := filepath.Base(a), filepath.Base(b)

	out, stderr, code := runRoot(t, nil, "results", "show", "--results", parent, nameA)
	require.Equal(t, 0, code, stderr)
	assert.True(t, strings.HasPrefix(out, a+": bare-a,"), out)

	out, stderr, code = runRoot(t, nil, "compare", "--results", parent, "--label", "first="+nameA, nameA, nameB)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "first")

	out, stderr, code = runRoot(t, map[string]string{"QOSLAB_RESULTS": parent}, "report", nameB)
	require.Equal(t, 0, code, stderr+out)
	assert.FileExists(t, filepath.Join(b, results.ReportFile))

	_, stderr, code = runRoot(t, nil, "results", "show", "--results", parent, "no-such-run")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "no-such-run")
}

// results list counts cell runs, as the plan does, not records: a cell
// run of two threads writes two records and is one cell run.
func TestResultsListCountsCellRuns(t *testing.T) {
	parent := t.TempDir()
	d, err := results.Create(parent, "threads", time.Now())
	require.NoError(t, err)
	log, _, err := d.OpenSamples()
	require.NoError(t, err)
	for r := 1; r <= 3; r++ {
		for i := range 2 {
			s := results.Sample{Target: "host", Workload: "fp", QoS: 9, Threads: 2, Repeat: r, Index: i, StartNs: 0, EndNs: 1e9, Work: 1e6, Unit: "loops", Rate: 1e6, QoSApplied: 9, QoSFull: true}
			require.NoError(t, log.Append(results.Record{Cell: "host fp qos=9 threads=2", RunRecords: 2, Sample: s, RecordedAt: time.Now()}))
		}
	}
	require.NoError(t, log.Close())
	require.NoError(t, d.Finish(time.Now(), nil))

	out, stderr, code := runRoot(t, nil, "results", "list", "--results", parent)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "CELL RUNS")
	assert.NotContains(t, out, "SAMPLES")
	assert.Regexp(t, `complete\s+3\s+-`, out, "3 cell runs, not 6 records")
	out, stderr, code = runRoot(t, nil, "results", "show", d.Path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "computed from its samples, 3 cell runs, 6 records")
	assert.Regexp(t, `\nhost +9 background +2 `, out, "the summary it computed")

	out, stderr, code = runRoot(t, nil, "results", "list", "--results", parent, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct {
		Samples  int `json:"samples"`
		CellRuns int `json:"cell_runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 1)
	assert.Equal(t, 6, rows[0].Samples, "records")
	assert.Equal(t, 3, rows[0].CellRuns)
}
