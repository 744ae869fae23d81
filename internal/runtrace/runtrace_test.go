package runtrace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecorderWritesWhatReadReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	began := time.Now().Add(-time.Second)
	r, err := Create(path, began)
	require.NoError(t, err)
	cell := Span{Name: SpanCell, StartNs: 10, EndNs: 30, Target: "vm", Index: 2, Cell: "vm fp", Repeat: 1, MeasuredNs: 15,
		Steps: map[string]int64{StepCall: 18, StepKeep: 2}, Agent: map[string]int64{AgentTotal: 17}}
	r.Add(cell)
	r.Span(SpanStop, "", began.Add(500*time.Millisecond), nil)
	require.NoError(t, r.Close())

	spans, err := Read(path)
	require.NoError(t, err)
	require.Len(t, spans, 2)
	assert.Equal(t, cell, spans[0])
	assert.Equal(t, SpanStop, spans[1].Name)
	assert.Equal(t, int64(500*time.Millisecond), spans[1].StartNs, "times are since the run began")
	assert.GreaterOrEqual(t, spans[1].EndNs, int64(time.Second))
}

// A run without --trace has a nil Recorder: every call does nothing.
func TestNilRecorderRecordsNothing(t *testing.T) {
	var r *Recorder
	r.Add(Span{Name: SpanCell})
	r.Span(SpanStop, "", time.Now(), nil)
	assert.Zero(t, r.Since(time.Now()))
	assert.NoError(t, r.Close())
}

func TestReadNamesABadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{\"span\":\"cell\"}\nnot json\n"), 0o600))
	spans, err := Read(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "trace.jsonl:2: not a trace span")
	assert.Len(t, spans, 1, "what was read before stays")
}

// tracedRun is a run of two host and one vm cell runs, constructed: 10 s
// wall, 8.5 s measured, 1 s booting.
func tracedRun() []Span {
	ms := func(v float64) int64 { return int64(v * 1e6) }
	cell := func(target string, start, overhead, call, total float64) Span {
		return Span{Name: SpanCell, Target: target, StartNs: ms(start), EndNs: ms(start + 2000 + overhead), MeasuredNs: ms(2000),
			Steps: map[string]int64{StepCall: ms(call), StepKeep: ms(2000 + overhead - call)},
			Agent: map[string]int64{AgentTotal: ms(total), AgentMeasured: ms(2001), "threads": ms(1), AgentClock: 25}}
	}
	return []Span{
		{Name: SpanSpec, EndNs: ms(100)},
		{Name: SpanStart, Target: "vm", StartNs: ms(100), EndNs: ms(1300), Steps: map[string]int64{StepBoot: ms(1000)}},
		cell("host", 1300, 10, 2005, 2002),
		cell("host", 3400, 30, 2010, 2004),
		cell("vm", 5500, 50, 2020, 2010),
		{Name: SpanStop, StartNs: ms(9900), EndNs: ms(10000)},
		{Name: SpanRun, EndNs: ms(10000), MeasuredNs: ms(8500), Steps: map[string]int64{StepBoot: ms(1000)}},
		{Name: SpanPublish, StartNs: ms(10000), EndNs: ms(10400)},
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize(tracedRun())
	assert.Equal(t, int64(10e9), s.WallNs)
	assert.Equal(t, int64(500e6), s.OrchestrationNs(), "wall less measured less booting, as the time line counts it")
	assert.Equal(t, int64(200e6), s.Spans[SpanStart], "a start span less its boot")
	require.Len(t, s.Cells["host"], 2)
	require.Len(t, s.Cells["vm"], 1)
	assert.Equal(t, int64(30e6), Overhead(s.Cells["host"][1]))
}

func TestSummaryText(t *testing.T) {
	var b strings.Builder
	Summarize(tracedRun()).Text(&b)
	out := b.String()
	for _, want := range []string{
		"time: 10s wall, 8.5s measured + 1s booting, 500ms orchestration (5.0%)\n",
		"orchestration: 90ms in 3 cell runs (30.0 ms each), spec 100.0 ms, start 200.0 ms, stop 100.0 ms\n",
		"after the time line: publish 400ms",
		"host (2)", "vm (1)",
	} {
		assert.Contains(t, out, want)
	}
	// Medians and means per target: host overheads 10 and 30 ms, vm 50.
	assert.Regexp(t, `(?m)^overhead\s+20\.00 /   20\.00\s+50\.00 /   50\.00  the cell run less its measured interval$`, out)
	// transport: the call less the agent's total (host 3 and 6 ms, vm 10).
	assert.Regexp(t, `(?m)^transport\s+4\.50 /    4\.50\s+10\.00 /   10\.00  call less`, out)
	assert.Regexp(t, `(?m)^agent threads\s+1\.00 /    1\.00\s+1\.00 /    1\.00$`, out)
	assert.Regexp(t, `(?m)^agent clock read\s+0\.03 /    0\.03\s+0\.03 /    0\.03  one read of the cell's clock, in µs$`, out, "25 ns")
	assert.NotContains(t, out, "agent validate", "a step no cell run has is left out")
}
