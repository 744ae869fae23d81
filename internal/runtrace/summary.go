package runtrace

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Agent step names (the agent's Result.trace_ns keys) the summary adds up;
// internal/agent's trace.go records them.
const (
	AgentTotal    = "total"
	AgentMeasured = "measured"
	AgentClock    = "clock_read"
)

// agentSteps are the agent's steps of a call in order; thread_setup and
// thread_class are parts of threads, and workload stands for launch to
// finish when the workload gives no phases.
var agentSteps = []string{"validate", "telemetry_start", "launch", "threads", "thread_setup", "thread_class", "start", "finish", "workload", "telemetry_stop", "telemetry_send"}

// controllerSteps are a cell run's steps on the controller in order.
var controllerSteps = []string{StepProgress, StepPrepare, StepHostView, StepCollect, StepCheck, StepKeep, StepReport}

// Summary is a trace summed: where the run's wall time went, and what a
// cell run costs beyond its measured interval, step by step.
type Summary struct {
	// WallNs, MeasuredNs and BootNs are the run's time line (SpanRun);
	// all 0 when the trace has no run span (a run that failed to start).
	WallNs, MeasuredNs, BootNs int64
	// Spans are the run's other spans by name, added up (a start span
	// without its boot).
	Spans map[string]int64
	// Cells are the cell runs by target, in the plan's order.
	Cells map[string][]Span
}

// Summarize sums a trace's spans.
func Summarize(spans []Span) Summary {
	s := Summary{Spans: map[string]int64{}, Cells: map[string][]Span{}}
	for _, sp := range spans {
		switch sp.Name {
		case SpanRun:
			s.WallNs, s.MeasuredNs, s.BootNs = sp.Ns(), sp.MeasuredNs, sp.Steps[StepBoot]
		case SpanCell:
			s.Cells[sp.Target] = append(s.Cells[sp.Target], sp)
		default:
			s.Spans[sp.Name] += sp.Ns() - sp.Steps[StepBoot]
		}
	}
	return s
}

// OrchestrationNs is the run's wall time neither measured nor booting, as
// its time line counts it.
func (s Summary) OrchestrationNs() int64 { return s.WallNs - s.MeasuredNs - s.BootNs }

// Overhead is a cell run's time beyond its measured interval: from its
// progress line to its result line, less first thread start to last
// thread end.
func Overhead(c Span) int64 { return c.Ns() - c.MeasuredNs }

// row is one line of the per-cell table: a name and what it takes of a
// cell run.
type row struct {
	name, note string
	of         func(Span) (int64, bool)
	// perMs is how many of the row's units make a ms: 1 (ms), or 1000
	// for a row in µs.
	perMs float64
}

func step(name string) func(Span) (int64, bool) {
	return func(c Span) (int64, bool) { v, ok := c.Steps[name]; return v, ok }
}

func agentStep(name string) func(Span) (int64, bool) {
	return func(c Span) (int64, bool) { v, ok := c.Agent[name]; return v, ok }
}

// rows are the per-cell table's lines: the overhead, then its parts on the
// controller, on the way to the agent and back, and on the agent.
func rows() []row {
	out := []row{{name: "overhead", note: "the cell run less its measured interval", of: func(c Span) (int64, bool) { return Overhead(c), c.MeasuredNs > 0 }}}
	for _, n := range controllerSteps {
		out = append(out, row{name: "controller " + n, of: step(n)})
	}
	out = append(out,
		row{name: "transport", note: "call less the agent's total: gRPC, the channel", of: func(c Span) (int64, bool) {
			total, ok := c.Agent[AgentTotal]
			return c.Steps[StepCall] - total, ok
		}},
		row{name: "agent skew", note: "agent's measured less the records': threads' start and end", of: func(c Span) (int64, bool) {
			m, ok := c.Agent[AgentMeasured]
			return m - c.MeasuredNs, ok && c.MeasuredNs > 0
		}})
	for _, n := range agentSteps {
		out = append(out, row{name: "agent " + n, of: agentStep(n)})
	}
	return append(out, row{name: "agent clock read", note: "one read of the cell's clock, in µs", of: agentStep(AgentClock), perMs: 1000})
}

// Text writes the summary: the time line, where the orchestration went,
// and a table of each step's median and mean per cell run by target.
func (s Summary) Text(w io.Writer) {
	ms := func(ns int64) string { return fmt.Sprintf("%.1f ms", float64(ns)/1e6) }
	sec := func(ns int64) string { return time.Duration(ns).Round(time.Millisecond).String() }
	pct := func(ns int64) string { return fmt.Sprintf("%.1f%%", 100*float64(ns)/float64(max(s.WallNs, 1))) }
	targets := slices.Sorted(maps.Keys(s.Cells))
	var between, runs int64
	for _, t := range targets {
		for _, c := range s.Cells[t] {
			between += Overhead(c)
			runs++
		}
	}
	if s.WallNs > 0 {
		fmt.Fprintf(w, "time: %s wall, %s measured + %s booting, %s orchestration (%s)\n",
			sec(s.WallNs), sec(s.MeasuredNs), sec(s.BootNs), sec(s.OrchestrationNs()), pct(s.OrchestrationNs()))
	}
	fmt.Fprintf(w, "orchestration: %s in %d cell runs (%s each)", sec(between), runs, ms(between/max(runs, 1)))
	for _, n := range []string{SpanSpec, SpanSamples, SpanStart, SpanSetUp, SpanStop, SpanRecorded} {
		if v, ok := s.Spans[n]; ok {
			fmt.Fprintf(w, ", %s %s", n, ms(v))
		}
	}
	fmt.Fprintln(w)
	if v, ok := s.Spans[SpanPublish]; ok {
		fmt.Fprintf(w, "after the time line: publish %s (summaries, charts, report)\n", sec(v))
	}
	if runs == 0 {
		return
	}
	fmt.Fprintf(w, "\nper cell run, median / mean (ms):\n%-26s", "")
	for _, t := range targets {
		fmt.Fprintf(w, " %18s", fmt.Sprintf("%s (%d)", t, len(s.Cells[t])))
	}
	fmt.Fprintln(w)
	for _, r := range rows() {
		var cols []string
		seen := false
		for _, t := range targets {
			vals := values(s.Cells[t], r.of)
			if len(vals) == 0 {
				cols = append(cols, fmt.Sprintf(" %18s", "-"))
				continue
			}
			seen = true
			perMs := max(r.perMs, 1)
			cols = append(cols, fmt.Sprintf(" %8.2f / %7.2f", perMs*float64(median(vals))/1e6, perMs*float64(mean(vals))/1e6))
		}
		if !seen {
			continue
		}
		line := fmt.Sprintf("%-26s%s", r.name, strings.Join(cols, ""))
		if r.note != "" {
			line += "  " + r.note
		}
		fmt.Fprintln(w, line)
	}
}

// values are what of takes of each cell run that has it.
func values(cells []Span, of func(Span) (int64, bool)) []int64 {
	var out []int64
	for _, c := range cells {
		if v, ok := of(c); ok {
			out = append(out, v)
		}
	}
	return out
}

func median(v []int64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func mean(v []int64) int64 {
	var sum int64
	for _, x := range v {
		sum += x
	}
	return sum / int64(len(v))
}
