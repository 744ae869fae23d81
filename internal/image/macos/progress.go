package macos

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// Progress is a snapshot of a long step (a download, a copy, an install).
type Progress struct {
	// Done and Total count bytes; for a step that reports only a fraction
	// (the installer) they count thousandths. Total is 0 when unknown.
	Done, Total int64
	// Rate is units per second over this session: bytes resumed from an
	// earlier session do not inflate it.
	Rate float64
	// ETA is 0 when it cannot be estimated yet.
	ETA time.Duration
}

// Fraction is Done/Total, or 0 when Total is unknown.
func (p Progress) Fraction() float64 {
	if p.Total <= 0 {
		return 0
	}
	return float64(p.Done) / float64(p.Total)
}

type progressUnit int

const (
	unitBytes progressUnit = iota
	unitFraction
)

// Redraw limits: a terminal line is cheap to overwrite, a log line is not.
const (
	terminalRedraw = 200 * time.Millisecond
	logLineEvery   = 10 * time.Second
)

// progressBar renders Progress to a writer: one self-overwriting line on a
// terminal, a plain line every logLineEvery otherwise (CI logs, files).
type progressBar struct {
	w        io.Writer // nil renders nothing
	label    string
	unit     progressUnit
	terminal bool
	now      func() time.Time
	onUpdate func(Progress)

	start     time.Time
	startDone int64
	started   bool
	lastDraw  time.Time
	drawn     bool
	last      Progress // the latest update
	shown     Progress // what was drawn last
}

func newProgressBar(w io.Writer, label string, unit progressUnit, onUpdate func(Progress)) *progressBar {
	return &progressBar{w: w, label: label, unit: unit, terminal: isTerminal(w), now: time.Now, onUpdate: onUpdate}
}

// isTerminal reports whether w is a terminal, where a bar may redraw itself.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// update records done of total; the first call fixes where this session
// started, so resumed bytes count toward Done but not toward Rate.
func (b *progressBar) update(done, total int64) {
	now := b.now()
	if !b.started {
		b.started, b.start, b.startDone = true, now, done
	}
	p := Progress{Done: done, Total: total}
	if el := now.Sub(b.start).Seconds(); el >= 1 && done > b.startDone {
		p.Rate = float64(done-b.startDone) / el
		if total > done {
			p.ETA = time.Duration(float64(total-done) / p.Rate * float64(time.Second))
		}
	}
	b.last = p
	if b.onUpdate != nil {
		b.onUpdate(p)
	}
	if b.w == nil {
		return
	}
	every := logLineEvery
	if b.terminal {
		every = terminalRedraw
	}
	if b.drawn && now.Sub(b.lastDraw) < every {
		return
	}
	b.draw(p)
	b.lastDraw, b.drawn = now, true
}

// finish draws the final state, unless it is on screen already, and ends
// the line.
func (b *progressBar) finish() {
	if b.w == nil || !b.started {
		return
	}
	if b.last != b.shown {
		b.draw(b.last)
	}
	if b.terminal {
		fmt.Fprintln(b.w)
	}
}

func (b *progressBar) draw(p Progress) {
	b.shown = p
	line := b.label + " " + b.describe(p)
	if b.terminal {
		fmt.Fprintf(b.w, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(b.w, line)
}

func (b *progressBar) describe(p Progress) string {
	var s strings.Builder
	if p.Total > 0 {
		if b.terminal {
			const width = 24
			n := min(width, int(p.Fraction()*width))
			s.WriteString("[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + "] ")
		}
		fmt.Fprintf(&s, "%5.1f%%", 100*p.Fraction())
	}
	if b.unit == unitBytes {
		if p.Total > 0 {
			fmt.Fprintf(&s, "  %s / %s", formatBytes(p.Done), formatBytes(p.Total))
		} else {
			fmt.Fprintf(&s, "%s", formatBytes(p.Done))
		}
		if p.Rate > 0 {
			fmt.Fprintf(&s, "  %s/s", formatBytes(int64(p.Rate)))
		}
	}
	if p.ETA > 0 {
		fmt.Fprintf(&s, "  ETA %s", p.ETA.Round(time.Second))
	}
	return strings.TrimSpace(s.String())
}

// formatBytes writes n in binary units with one decimal: "13.4 GiB".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
