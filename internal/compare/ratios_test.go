package compare

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/results"
)

// buildDirs compares the results directories under testdata/results named.
func buildDirs(t *testing.T, names ...string) *Comparison {
	t.Helper()
	var in []Input
	for _, n := range names {
		l, err := results.Load(filepath.Join("..", "..", "testdata", "results", n))
		require.NoError(t, err)
		l.Path = n
		in = append(in, Input{Loaded: l})
	}
	labels := Labels(func() []*results.Loaded {
		out := make([]*results.Loaded, len(in))
		for i := range in {
			out[i] = in[i].Loaded
		}
		return out
	}(), nil)
	for i := range in {
		in[i].Label = labels[i]
	}
	c, err := Build(in)
	require.NoError(t, err)
	return c
}

// comparisons are sets of runs compared in the tests below: the measured
// fixtures (compare-b inconclusive at one of its two thread counts), runs
// with several workloads some of which no verdict judges (the
// sensitivities at 95% then), and constructed runs at four thread counts.
var comparisons = [][]string{
	{"compare-a", "compare-b", "compare-c"},
	{"compare-a", "compare-b"},
	{"linux-fixture", "linux-contention"},
	{"constructed/thread-count-crossing", "constructed/one-thread-count-outside", "constructed/heterogeneous-host"},
}

// machineRatio is run i's ratio of target for finding f as the
// per-machine table has it.
func machineRatio(t *testing.T, c *Comparison, f FindingRow, i int) Ratio {
	t.Helper()
	for _, m := range c.Machines {
		if m.Run == i && m.Workload == f.Workload && m.Phase == f.Phase && m.Params == f.Params {
			if f.Target == "host" {
				return m.HostRatio
			}
			return m.VMRatio
		}
	}
	t.Fatalf("run %d has no row for %s", i, f.Workload)
	return Ratio{}
}

// percentMark is a coverage the table adds to an interval: " (95%)".
var percentMark = regexp.MustCompile(` \(\d+%\)$`)

// One run's ratio has one interval wherever compare prints it: each QoS
// sensitivity in the findings is the per-machine table's ratio, the
// verdict's with its 90% interval (or, where the run has no verdict, the
// same 95% sensitivity), as numbers, as text and in the JSON.
func TestFindingsPrintTheVerdictsInterval(t *testing.T) {
	for _, names := range comparisons {
		t.Run(strings.Join(names, ","), func(t *testing.T) {
			c := buildDirs(t, names...)
			seen := 0
			for _, f := range c.Findings {
				if f.Kind != KindSensitivity {
					continue
				}
				row := c.findingRow(f)
				for i, v := range f.Values {
					if !v.Present {
						continue
					}
					r := machineRatio(t, c, f, i)
					assert.Equal(t, []float64{float64(r.Value), float64(r.Low), float64(r.High)}, []float64{float64(v.Median), float64(v.Low), float64(v.High)},
						"%s %s run %d: the findings' interval is the verdict table's", f.Workload, f.Target, i)
					cell := row[3+max(0, 2*i-1)]
					assert.Equal(t, strings.ReplaceAll(percentMark.ReplaceAllString(r.Text(), ""), "x", ""), strings.ReplaceAll(cell, "x", ""),
						"%s %s run %d: printed alike", f.Workload, f.Target, i)
					seen++
				}
			}
			assert.Positive(t, seen)
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, "json", c))
			var doc struct {
				Machines []struct {
					Run      int                `json:"run"`
					Workload string             `json:"workload"`
					Host     map[string]float64 `json:"host_ratio"`
					VM       map[string]float64 `json:"vm_ratio"`
				} `json:"machines"`
				Findings []struct {
					Kind     string           `json:"kind"`
					Workload string           `json:"workload"`
					Target   string           `json:"target"`
					Values   []map[string]any `json:"values"`
				} `json:"findings"`
			}
			require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
			for _, f := range doc.Findings {
				for i, v := range f.Values {
					if v["present"] != true {
						continue
					}
					assert.NotContains(t, v, "median", "a finding's estimate is named by what it is")
					if f.Kind != KindSensitivity {
						assert.Contains(t, v, "si")
						continue
					}
					for _, m := range doc.Machines {
						side := map[string]map[string]float64{"host": m.Host, "vm": m.VM}[f.Target]
						if m.Run == i && m.Workload == f.Workload {
							assert.Equal(t, side["ratio_hl_low"], v["ratio_hl_low"], "%s %s run %d", f.Workload, f.Target, i)
							assert.Equal(t, side["ratio_hl_high"], v["ratio_hl_high"], "%s %s run %d", f.Workload, f.Target, i)
						}
					}
				}
			}
		})
	}
}

// The per-machine row carries the VM's interval at each thread count the
// verdict judged alone: compare-b's verdict is inconclusive at 1 thread
// ([0.857..1.45] crosses 1.25x) and at 2 ([0.693..1.21] crosses 0.8x)
// while its pooled interval [0.92..1.23] lies inside the band.
func TestMachineVerdictByThreads(t *testing.T) {
	c := buildDirs(t, "compare-a", "compare-b")
	m := c.Machines[1]
	require.Equal(t, "inconclusive", m.Outcome)
	assert.True(t, m.VMRatio.Inside(m.Band), "the pooled interval %s lies inside the band", m.VMRatio.Text())
	require.Len(t, m.VMByThreads, 2)
	assert.Equal(t, 1, m.VMByThreads[0].Threads)
	assert.Equal(t, "1.09x [0.857..1.45]", m.VMByThreads[0].Text(), "the interval the reason names")
	assert.False(t, m.VMByThreads[0].Inside(m.Band))
	assert.Equal(t, "1.09x [0.693..1.21]", m.VMByThreads[1].Text())
	assert.False(t, m.VMByThreads[1].Inside(m.Band))
}
