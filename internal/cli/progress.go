package cli

import (
	"fmt"
	"time"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/units"
)

// progress shows a run's cells: on a terminal, one line that changes as
// cells start and advance; elsewhere (a CI log), one line per finished
// cell run, so a long run is never silent.
type progress struct {
	io   *IOStreams
	head string
}

// hooks connects the progress display to an experiment's Env.
func (p *progress) hooks(env *experiment.Env) {
	env.OnStep = p.step
	env.OnRun = p.done
	if p.io.Progress {
		env.OnProgress = p.update
	}
}

func (p *progress) step(s experiment.Step) {
	if s.Skipped {
		return
	}
	eta := ""
	if s.ETA > 0 {
		eta = fmt.Sprintf(", about %s left", s.ETA.Round(time.Second))
	}
	p.head = fmt.Sprintf("[%d/%d] %s%s", s.Index+1, s.Total, s.Cell, eta)
	if p.io.Progress {
		fmt.Fprintf(p.io.ErrOut, "\r\033[K%s", p.head)
	}
}

func (p *progress) update(pr *agentpb.Progress) {
	fmt.Fprintf(p.io.ErrOut, "\r\033[K%s  %3.0f%%  %.1fs", p.head, 100*pr.GetFraction(), float64(pr.GetElapsedNs())/1e9)
}

func (p *progress) done(s experiment.Step, r experiment.CellRun) {
	if p.io.Progress {
		return
	}
	fmt.Fprintf(p.io.ErrOut, "[%d/%d] %s: %s\n", s.Index+1, s.Total, s.Cell, runText(r.Samples))
}

func (p *progress) clear() {
	if p.io.Progress {
		fmt.Fprint(p.io.ErrOut, "\r\033[K")
	}
}

// runText is a cell run's elapsed time and total rate, for a log line.
func runText(samples []results.Sample) string {
	cells := results.Cells(samples)
	if len(cells) == 0 {
		return "no records"
	}
	var out string
	for i, c := range cells {
		if i > 0 {
			out += "; "
		}
		if c.Phase != "" {
			out += c.Phase + " "
		}
		unit, scale := units.RateUnit(c.Unit)
		out += fmt.Sprintf("%.3f s, %s %s", c.Seconds.Median, units.SI(float64(c.TotalRate.Median)/scale), unit)
	}
	return out
}
