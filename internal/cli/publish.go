package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/analysis"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/report"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// session is how one qoslab process spent a run's time.
type session struct {
	outcome     *experiment.Outcome
	wall        time.Duration
	telemetryMs int
}

// publish writes a results directory's summaries and report from one
// reading of it, and prints the regressions, compression times and verdicts,
// and where the session's time went. Failing to draw the report loses no
// measurement: `qoslab report DIR` draws it again.
func publish(io *IOStreams, dir string, sess *session) error {
	r, err := report.Load(dir)
	if err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintln(io.ErrOut, "note: "+n)
	}
	if err := summary.Write(r.Path, r.Analysis); err != nil {
		return fmt.Errorf("write summaries: %w", err)
	}
	a, w := r.Analysis, io.Out
	fmt.Fprintf(w, "results: %s (%s)\n", r.Path, units.Plural(r.Samples, "sample"))
	for _, reg := range a.Regressions {
		if reg.Workload == catalog.FP || reg.Workload == catalog.Int {
			fmt.Fprintf(w, "%s %s\n", reg.Workload, analysis.FormatRegression(reg.Label(), reg.Regression))
		}
	}
	for _, c := range a.Cells {
		if catalog.IsCompression(c.Workload) {
			fmt.Fprintf(w, "%s %s qos %d threads %d: %.2f s median [%.2f..%.2f], n=%d\n", c.Target, c.Workload, c.QoS, c.Threads,
				c.Seconds.Median, c.Seconds.Min, c.Seconds.Max, c.Seconds.N)
		}
	}
	for _, v := range a.Verdicts {
		fmt.Fprintf(w, "%s: %s\n", analysis.WorkloadText(v.Host.Workload, v.Host.Phase), v.String())
	}
	if sess != nil {
		printSession(io, sess)
	}
	if _, err := r.Write(); err != nil {
		return fmt.Errorf("write report: %w (the results are kept; draw it again with qoslab report %s)", err, r.Path)
	}
	fmt.Fprintf(w, "report: %s\n", filepath.Join(r.Path, results.ReportFile))
	return nil
}

func printSession(io *IOStreams, s *session) {
	st, w := s.outcome.Stats, io.Out
	if st.Runs > 0 {
		measured := time.Duration(st.MeasuredNs + s.outcome.BootNs)
		fmt.Fprintf(w, "time: %s wall, %s measured + %s booting (%.1f%% orchestration)\n", s.wall.Round(time.Millisecond),
			time.Duration(st.MeasuredNs).Round(time.Millisecond), time.Duration(s.outcome.BootNs).Round(time.Millisecond),
			100*(1-float64(measured)/float64(s.wall)))
	}
	if ts := st.Telemetry; ts.Samples > 0 && s.telemetryMs > 0 {
		sampled := time.Duration(ts.Samples) * time.Duration(s.telemetryMs) * time.Millisecond
		fmt.Fprintf(w, "telemetry: %d samples in the agents every %d ms, %.1f%% of intervals within 10 ms of it, sampler CPU %s (%.2f%% of one core)\n",
			ts.Samples, s.telemetryMs, 100*ts.Within10ms, ts.SamplerCPU.Round(time.Millisecond), 100*float64(ts.SamplerCPU)/float64(sampled))
	}
}
