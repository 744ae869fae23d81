package cli

import (
	"bytes"
	"context"
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

func TestCompareRuns(t *testing.T) {
	parent := t.TempDir()
	slow := fakeRun(t, parent, "slow", "fp", []float64{100, 101, 99, 98, 102})
	fast := fakeRun(t, parent, "fast", "fp", []float64{200, 199, 201, 202, 203})
	same := fakeRun(t, parent, "same", "fp", []float64{101, 100.5, 102.5, 99.5, 97})
	other := fakeRun(t, parent, "other", "int", []float64{1, 2})

	var out bytes.Buffer
	require.NoError(t, compareRuns(context.Background(), &out, slow, fast))
	assert.Contains(t, out.String(), "+101.0%", "a clear difference is shown with its size: medians 100 and 201")
	assert.Contains(t, out.String(), "p=0.0079", "exact two-sided Mann-Whitney p for 5 vs 5 fully separated, no ties: 2/252")

	out.Reset()
	require.NoError(t, compareRuns(context.Background(), &out, slow, same))
	assert.Contains(t, out.String(), " ~ ", "no significant difference prints ~")

	err := compareRuns(context.Background(), &out, slow, other)
	assert.ErrorContains(t, err, "no cell in common")
}

func TestResultsListAndShow(t *testing.T) {
	parent := t.TempDir()
	path := fakeRun(t, parent, "listed", "fp", []float64{1, 2, 3})
	io, out, _ := testIO()
	f := NewFactory(io)
	root := NewCmdRoot(f)
	root.SetArgs([]string{"results", "list", "--results", parent})
	require.NoError(t, root.Execute())
	assert.Contains(t, out.String(), path)
	assert.Contains(t, out.String(), "complete")
	assert.Contains(t, out.String(), "3", "its sample count")

	out.Reset()
	root = NewCmdRoot(f)
	root.SetArgs([]string{"results", "show", path})
	err := root.Execute()
	assert.ErrorContains(t, err, "summaries are written when a run ends", "a directory without summaries says why")
}
