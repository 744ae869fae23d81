package cli

import (
	"fmt"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
)

// progressLine shows the running cell on a terminal and stays silent otherwise.
type progressLine struct {
	io   *IOStreams
	head string
}

func newProgressLine(io *IOStreams) *progressLine { return &progressLine{io: io} }

func (p *progressLine) cell(i, n int, desc string) {
	p.head = fmt.Sprintf("[%d/%d] %s", i+1, n, desc)
	if p.io.Progress {
		fmt.Fprintf(p.io.ErrOut, "\r\033[K%s", p.head)
	}
}

func (p *progressLine) update(pr *agentpb.Progress) {
	if p.io.Progress {
		fmt.Fprintf(p.io.ErrOut, "\r\033[K%s  %3.0f%%  %.1fs", p.head, 100*pr.GetFraction(), float64(pr.GetElapsedNs())/1e9)
	}
}

func (p *progressLine) clear() {
	if p.io.Progress {
		fmt.Fprint(p.io.ErrOut, "\r\033[K")
	}
}
