package guestinit

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// bootStep is one timed stage of bringing the guest up.
type bootStep struct {
	Name  string        `json:"name"`
	Took  time.Duration `json:"took_ns"`
	Parts []bootStep    `json:"parts,omitempty"`
}

// bootTimes is how the guest came up, on the kernel's boot clock
// (CLOCK_BOOTTIME: time since the kernel started), which both processes of
// the guest init read the same way.
type bootTimes struct {
	// InitStart is when the kernel ran /init (its "Run /init as init
	// process" log line), or when init's main began where that is not known.
	InitStart time.Duration `json:"init_start_ns"`
	// Spawned is when init started the agent process.
	Spawned time.Duration `json:"spawned_ns,omitempty"`
	// Ready is when the agent was listening on its channels.
	Ready time.Duration `json:"ready_ns,omitempty"`
	// Steps are the stages in order; time between them (process start-up,
	// logging) is counted in Ready - InitStart only.
	Steps []bootStep `json:"steps"`
}

// shortPart is below what the summary lists part by part.
const shortPart = 10 * time.Millisecond

// Summary is the one-line account of the boot the console shows, e.g.
// "up in 1.23 s, 2.05 s after kernel start (mounts 0.01 s, modules 0.90 s
// [virtio_pci 0.30 s, 4 more under 0.01 s], ...)".
func (b bootTimes) Summary() string {
	var s strings.Builder
	fmt.Fprintf(&s, "up in %s, %s after kernel start", seconds(b.Ready-b.InitStart), seconds(b.Ready))
	if len(b.Steps) == 0 {
		return s.String()
	}
	s.WriteString(" (")
	for i, st := range b.Steps {
		if i > 0 {
			s.WriteString(", ")
		}
		fmt.Fprintf(&s, "%s %s", st.Name, seconds(st.Took))
		writeParts(&s, st.Parts)
	}
	s.WriteString(")")
	return s.String()
}

func writeParts(s *strings.Builder, parts []bootStep) {
	if len(parts) == 0 {
		return
	}
	var listed []string
	short := 0
	for _, p := range parts {
		// A lone short part is named all the same: "1 under 0.01 s" would
		// hide which channel or module it was.
		if p.Took < shortPart && len(parts) > 1 {
			short++
			continue
		}
		listed = append(listed, p.Name+" "+seconds(p.Took))
	}
	if short > 0 {
		more := ""
		if len(listed) > 0 {
			more = " more"
		}
		listed = append(listed, fmt.Sprintf("%d%s under %s", short, more, seconds(shortPart)))
	}
	s.WriteString(" [" + strings.Join(listed, ", ") + "]")
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// encode is how init hands its part of the boot to the agent process.
func (b bootTimes) encode() string {
	out, _ := json.Marshal(b) // plain fields only: cannot fail
	return string(out)
}

func decodeBootTimes(s string) (bootTimes, error) {
	var b bootTimes
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		return bootTimes{}, fmt.Errorf("boot times from init %q: %w", s, err)
	}
	return b, nil
}

// stopwatch times the steps of one process.
type stopwatch struct {
	steps []bootStep
}

// time runs f as the step name and records how long it took.
func (w *stopwatch) time(name string, f func() ([]bootStep, error)) error {
	began := time.Now()
	parts, err := f()
	w.steps = append(w.steps, bootStep{Name: name, Took: time.Since(began), Parts: parts})
	return err
}
