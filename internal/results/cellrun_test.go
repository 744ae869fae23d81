package results

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/workload/catalog"
)

func TestRunKeyOfALegacyRecordComesFromItsLabel(t *testing.T) {
	cases := []struct {
		label string
		want  catalog.Params
	}{
		{"host fp qos=9 threads=1 loops=200000000", catalog.Params{Loops: 2e8}},
		{"vm fp qos=33 threads=2 duration=1s", catalog.Params{Duration: time.Second}},
		{`host compress qos=9 threads=2 size=8388608 ratio=3 codec=zstd level=0 sink=file sink_path="/a b/c"`,
			catalog.Params{SizeBytes: 8 << 20, Ratio: 3, Codec: "zstd", Sink: "file", SinkPath: "/a b/c"}},
	}
	for _, tc := range cases {
		t.Run(tc.label, func(t *testing.T) {
			r := Record{Cell: tc.label, Sample: Sample{Target: "host", Workload: "fp", QoS: 9, Threads: 1, Repeat: 2}}
			assert.Equal(t, tc.want, r.RunKey().Params)
		})
	}
	// A record with its parameters goes by them alone, whatever its label.
	r := Record{Cell: "anything loops=5", Params: &catalog.Params{Loops: 7}, Sample: Sample{Target: "host", Repeat: 1}}
	assert.Equal(t, uint64(7), r.RunKey().Loops)
}

func TestAssess(t *testing.T) {
	key := func(qos, repeat int) CellRunKey {
		return CellRunKey{SeriesKey: catalog.SeriesKey{Target: "host", Workload: "fp", QoS: qos, Threads: 1, Params: catalog.Params{Loops: 10}}, Repeat: repeat}
	}
	rec := func(k CellRunKey) Record {
		p := k.Params
		return Record{Cell: "label", RunRecords: 1, Params: &p, Sample: Sample{Target: k.Target, Workload: k.Workload, QoS: k.QoS, Threads: k.Threads, Repeat: k.Repeat}}
	}
	plan := []CellRunKey{key(9, 1), key(33, 1), key(9, 2), key(33, 2)}
	all := []Record{rec(plan[0]), rec(plan[1]), rec(plan[2]), rec(plan[3])}
	torn := &TornTail{Line: 4}
	cases := []struct {
		name    string
		planned []CellRunKey
		count   int
		recs    []Record
		torn    *TornTail
		err     error
		want    Completeness
		text    string
	}{
		{"complete", plan, 4, all, nil, nil, Completeness{State: StateComplete, Planned: 4, Measured: 4}, "complete"},
		{"a cell run missing", plan, 4, all[:3], nil, nil,
			Completeness{State: StatePartial, Planned: 4, Measured: 3, Missing: []string{"host fp qos=33 threads=1 loops=10 repeat=2"}},
			"partial: 3 of 4 cell runs measured"},
		{"a torn end", plan, 4, all[:3], torn, nil,
			Completeness{State: StatePartial, Planned: 4, Measured: 3, Missing: []string{"host fp qos=33 threads=1 loops=10 repeat=2"}, Torn: torn},
			"partial: 3 of 4 cell runs measured, a torn end left out"},
		{"a cell run the plan lacks", plan, 4, append(all[:4:4], rec(key(9, 3))), nil, nil,
			Completeness{State: StateDamaged, Planned: 4, Measured: 4, Unplanned: 1,
				Problem: "samples.jsonl holds 1 cell runs the run's plan does not have (host fp qos=9 threads=1 loops=10 repeat=3): they were not measured by this run; remove their lines by hand"},
			"damaged: samples.jsonl holds 1 cell runs"},
		{"unreadable samples", plan, 4, nil, nil, errors.New("line 3 is not a sample record"),
			Completeness{State: StateDamaged, Planned: 4, Problem: "line 3 is not a sample record"}, "damaged: line 3 is not a sample record"},
		{"no plan: by count", nil, 4, all[:2], nil, nil, Completeness{State: StatePartial, Planned: 4, Measured: 2}, "partial: 2 of 4"},
		{"no plan, no count: by the samples", nil, 0, all[:2], nil, nil, Completeness{State: StateComplete, Planned: 2, Measured: 2}, "complete"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Assess(tc.planned, tc.count, tc.recs, tc.torn, tc.err)
			assert.Equal(t, tc.want, got)
			assert.Contains(t, got.Text(), tc.text)
		})
	}
}

// A cell run counts only once all its records are there.
func TestFinishedRunsNeedEveryRecord(t *testing.T) {
	p := catalog.Params{Loops: 10}
	r := func(index int) Record {
		return Record{Cell: "x", RunRecords: 2, Params: &p, Sample: Sample{Target: "host", Workload: "fp", QoS: 9, Threads: 2, Repeat: 1, Index: index}}
	}
	require.Empty(t, FinishedRuns([]Record{r(0)}))
	assert.Len(t, FinishedRuns([]Record{r(0), r(1)}), 1)
}
