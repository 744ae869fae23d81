package summary

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hostview"
	"github.com/qoslab/qoslab/internal/results"
)

// hostViewRun is runSamples as records, each VM repeat's with a host view:
// the vCPU threads got 0.6 + 0.1*repeat host CPUs and waited 0.5, other
// work took 0.25; the host's repeats saw other work take 0.1. The first VM
// cell's repeat 1 has no view (written by an older build).
func hostViewRun() []results.Record {
	const s = int64(1e9)
	var out []results.Record
	for _, smp := range runSamples() {
		r := results.Record{Sample: smp}
		switch {
		case smp.Target == "vm" && smp.QoS == 33 && smp.Threads == 1 && smp.Repeat == 1:
		case smp.Target == "vm":
			run := s*6/10 + s/10*int64(smp.Repeat)
			r.HostView = &hostview.Use{WallNs: 2 * s, HostCPUs: 2, Processes: 80, OwnCPUNs: 2 * s, OtherCPUNs: s / 2,
				VCPUs: []hostview.VCPU{{Index: 0, RunNs: run, WaitNs: s / 2}, {Index: 1, RunNs: run, WaitNs: s / 2}}}
		case smp.Workload == "fp":
			r.HostView = &hostview.Use{WallNs: 2 * s, HostCPUs: 2, Processes: 80, OwnCPUNs: s, OtherCPUNs: s / 5}
		}
		out = append(out, r)
	}
	return out
}

func TestHostViewInTheSummary(t *testing.T) {
	recs := hostViewRun()
	a := Of(&results.Loaded{Dir: &results.Dir{}, Records: recs, Samples: results.Samples(recs)})

	var buf bytes.Buffer
	require.NoError(t, writeCSV(&buf, a.Cells))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	n := len(rows[0])
	assert.Equal(t, []string{"speed_unit", "vcpu_host_share_median", "vcpu_wait_median", "other_cpu_median"}, rows[0][n-5:n-1], "the host view's columns come last but params")
	got := map[string][]string{}
	for _, row := range rows[1:] {
		got[strings.Join(row[:4], " ")] = row[n-4 : n-1]
	}
	assert.Equal(t, map[string][]string{
		"host compress 33 1": {"", "", ""},
		"host fp 9 1":        {"", "", "0.1"},
		"host fp 9 2":        {"", "", "0.1"},
		"host fp 33 1":       {"", "", "0.1"},
		"host fp 33 2":       {"", "", "0.1"},
		"vm fp 9 1":          {"0.95", "0.5", "0.25"},
		"vm fp 9 2":          {"0.95", "0.5", "0.25"},
		"vm fp 33 1":         {"1", "0.5", "0.25"}, // repeats 2-6 only
		"vm fp 33 2":         {"0.95", "0.5", "0.25"},
	}, got)

	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, a))
	assert.Contains(t, md.String(), "| CPU share median | "+HostVCPUsHeader+" | "+HostOtherHeader+" | speed median")
	assert.Contains(t, md.String(), "| - | 0.95 | 0.25 |", "a VM row: its threads' share not recorded, the host's view is")
	assert.Contains(t, md.String(), "| - | - | 0.10 |", "a host row has no vCPUs")
}

// A run recorded before schema 1.3 has no host view: its CSV's columns are
// empty and its tables are as they were.
func TestNoHostViewInAnOlderRun(t *testing.T) {
	a := Analyze(runSamples(), "host", "vm")
	var buf bytes.Buffer
	require.NoError(t, writeCSV(&buf, a.Cells))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	n := len(rows[0])
	for _, row := range rows[1:] {
		assert.Equal(t, []string{"", "", ""}, row[n-3:])
	}
	var md bytes.Buffer
	require.NoError(t, WriteMarkdown(&md, a))
	assert.NotContains(t, md.String(), HostVCPUsHeader)
}
