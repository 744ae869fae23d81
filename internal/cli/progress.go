package cli

import (
	"fmt"
	"sync"
	"time"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/benchdoc"
	"github.com/qoslab/qoslab/internal/experiment"
)

// progress shows a run's cells: on a terminal, one line that changes as
// cells start and advance; elsewhere (a CI log), one line per finished
// cell run, so a long run is never silent.
type progress struct {
	io   *IOStreams
	head string
	// mu orders the agent's progress events and the watchdog's lines,
	// which come from two goroutines while a cell runs.
	mu sync.Mutex
}

// hooks connects the progress display to an experiment's Env.
func (p *progress) hooks(env *experiment.Env) {
	env.OnStep = p.step
	env.OnRun = p.done
	env.OnStall = p.stall
	env.OnLook = p.look
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
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.io.ErrOut, "\r\033[K%s  %3.0f%%  %.1fs", p.head, 100*pr.GetFraction(), float64(pr.GetElapsedNs())/1e9)
}

func (p *progress) done(s experiment.Step, r experiment.CellRun) {
	if p.io.Progress {
		return
	}
	fmt.Fprintf(p.io.ErrOut, "[%d/%d] %s: %s\n", s.Index+1, s.Total, s.Cell, benchdoc.RunText(r.Samples))
}

// stall prints the watchdog's line on a line of its own, and on a terminal
// redraws the progress line under it.
func (p *progress) stall(s experiment.Stall) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.io.Progress {
		fmt.Fprintf(p.io.ErrOut, "\r\033[K%s\n%s", s, p.head)
		return
	}
	fmt.Fprintln(p.io.ErrOut, s)
}

// look prints a line about the run's looks on a line of its own; on a
// terminal the next cell's step draws the progress line again.
func (p *progress) look(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.io.Progress {
		fmt.Fprintf(p.io.ErrOut, "\r\033[K%s\n", line)
		return
	}
	fmt.Fprintln(p.io.ErrOut, line)
}

func (p *progress) clear() {
	if p.io.Progress {
		fmt.Fprint(p.io.ErrOut, "\r\033[K")
	}
}
