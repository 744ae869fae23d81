// Package contention runs the contention a spec asks for: spinner threads
// in a process of their own (qoslab started as SpinnerCommand), outside
// the measured agent, each pinned to one CPU, for a whole run.
package contention

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/childproc"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload"
)

// SpinnerCommand is the hidden qoslab command that runs the spinner
// process: qoslab starts itself with it, so no other binary is needed.
const SpinnerCommand = "__contention"

// Contention is a running set of spinner threads in a process of their own,
// outside the measured agent, each pinned to one CPU: unpinned, the load
// balancer may leave two spinners on one CPU and the measured thread alone
// on another, and a short cell is then decided by placement, not by QoS.
type Contention struct {
	// Asked is what the spec asked for: a number, or all.
	Asked   SpinnerCount `json:"asked"`
	Threads int          `json:"threads"`
	PID     int          `json:"pid"`
	// AllowedCPUs are the CPUs the spinner process may use; spinner i is
	// pinned to AllowedCPUs[i mod len].
	AllowedCPUs []int `json:"allowed_cpus"`
	// Spinners are the threads as they read back their CPU and class.
	Spinners []workload.Spinner `json:"spinners"`
	// StartClass is the class the spinner process was started at, as read
	// back, before each spinner applies its own.
	StartClass qos.Applied `json:"start_class"`
	// child is the spinner process; its stdin is held for the spinners'
	// life: they stop when it closes. nil in a Contention read back from
	// run.json.
	child *childproc.Piped
}

// Running reports an error when the spinner process has ended: the cells
// measured since then ran without the contention they were asked to have.
func (c *Contention) Running() error {
	if c.child == nil {
		return nil
	}
	select {
	case <-c.child.Exited():
		how := c.child.Err()
		if how == nil {
			how = errors.New("exit status 0")
		}
		return fmt.Errorf("the contention process (%s, pid %d) ended mid-run (%w), so this cell may have run without it", units.Plural(c.Threads, "spinner thread"), c.PID, how)
	default:
		return nil
	}
}

// Stop kills the spinner process and waits until it is reaped.
func (c *Contention) Stop() {
	if c.child != nil {
		c.child.Kill()
		_ = c.child.Stdin.Close()
	}
}

// spinnerReport is the line the spinner process writes once all spin.
type spinnerReport struct {
	AllowedCPUs []int              `json:"allowed_cpus"`
	Spinners    []workload.Spinner `json:"spinners"`
}

// Text says in one line how many spinners ran, where and at which class:
// the CPUs they are pinned to, and for those not pinned the CPUs they were
// meant for and why not.
func (c *Contention) Text() string {
	var pinned, unpinned []int
	var why []string
	for _, sp := range c.Spinners {
		if sp.Pinned {
			pinned = append(pinned, sp.CPU)
			continue
		}
		unpinned = append(unpinned, sp.CPU)
		if w := notPinnedWhy(sp); !slices.Contains(why, w) {
			why = append(why, w)
		}
	}
	class := qos.Default.String()
	if len(c.Spinners) > 0 {
		class = c.Spinners[0].QoS.Applied.String()
	}
	notPinned := fmt.Sprintf("not pinned (meant for CPUs %s): %s", intsText(unpinned), strings.Join(why, "; "))
	where := ""
	switch {
	case len(c.Spinners) == 0:
		// A run recorded before spinners were pinned.
		where = "not pinned"
	case len(unpinned) == 0:
		where = "pinned to CPUs " + intsText(pinned)
	case len(pinned) > 0:
		where = fmt.Sprintf("%d of %d pinned (to CPUs %s); %s", len(pinned), len(c.Spinners), intsText(pinned), notPinned)
	default:
		where = notPinned
	}
	asked := ""
	if c.Asked == All {
		asked = fmt.Sprintf(", one per allowed CPU (%s)", intsText(c.AllowedCPUs))
	}
	return fmt.Sprintf("%s at %s, %s%s (pid %d)", units.Plural(c.Threads, "spinner thread"), class, where, asked, c.PID)
}

func intsText(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// Start starts this executable as the spinner process (see
// SpinnerCommand) with n spinners and waits until every spinner thread runs
// pinned (where the OS can pin). When ctx ends first (Ctrl-C) it kills the
// spinner process, waits until it is reaped, and returns an error wrapping
// ctx's.
func Start(ctx context.Context, n int) (*Contention, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, SpinnerCommand, strconv.Itoa(n)) //nolint:gosec // G204: qoslab itself, as the spinner process
	// One P per spinner plus one for the runtime, so the spinners really are n threads.
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(n+1))
	cmd.Stderr = os.Stderr
	child, err := childproc.StartPiped(cmd, qos.Default)
	if err != nil {
		return nil, err
	}
	c := &Contention{Threads: n, PID: child.Pid(), StartClass: child.StartClass, child: child}
	line, err := readyLine(ctx, child.Stdout)
	if err != nil {
		c.Stop()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("spinner process (pid %d) not ready yet: %w", c.PID, ctx.Err())
		}
		return nil, fmt.Errorf("spinner process ended before it was ready: %w", err)
	}
	var rep spinnerReport
	if err := json.Unmarshal(line, &rep); err != nil {
		c.Stop()
		return nil, fmt.Errorf("spinner process said %q: %w", line, err)
	}
	if len(rep.Spinners) != n {
		c.Stop()
		return nil, fmt.Errorf("spinner process reported %d spinners, %d were asked for", len(rep.Spinners), n)
	}
	c.AllowedCPUs, c.Spinners = rep.AllowedCPUs, rep.Spinners
	return c, nil
}

// readyLine reads the spinner process's first line, or gives up when ctx
// ends first: the caller then kills the process, which ends the read.
func readyLine(ctx context.Context, stdout io.Reader) ([]byte, error) {
	type read struct {
		line []byte
		err  error
	}
	got := make(chan read, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		got <- read{line, err}
	}()
	select {
	case r := <-got:
		return r.line, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// SpinnerMain is the spinner process, started as `qoslab SpinnerCommand N`:
// N default-class threads, spinner i pinned to allowed CPU i mod the count
// of allowed CPUs, spinning until in closes or ctx ends; once all spin it
// writes the allowed CPUs and each spinner's CPU and class as read back
// (JSON, one line) to out.
func SpinnerMain(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return fmt.Errorf("spinner count %q: allowed 1 and above", args[0])
	}
	allowed, err := workload.AllowedCPUs()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, in)
		cancel()
	}()
	workload.Spin(ctx, workload.SpinnerCPUs(n, allowed), func(sp []workload.Spinner) {
		b, _ := json.Marshal(spinnerReport{AllowedCPUs: allowed, Spinners: sp})
		fmt.Fprintf(out, "%s\n", b)
	})
	return nil
}

// UnpinnedNote is the note a run keeps when a spinner is not pinned (the
// first such), saying why and what it means; "" when every spinner is.
func (c *Contention) UnpinnedNote() string {
	for _, sp := range c.Spinners {
		if !sp.Pinned {
			return fmt.Sprintf("contention spinner for CPU %d is not pinned (%s): the scheduler places it, so a cell may run beside no spinner", sp.CPU, notPinnedWhy(sp))
		}
	}
	return ""
}

// notPinnedWhy says why a spinner is not pinned: the error pinning it, or
// else the affinity it read back.
func notPinnedWhy(sp workload.Spinner) string {
	if sp.Reason != "" {
		return sp.Reason
	}
	return "its affinity read back as CPUs " + intsText(sp.Allowed)
}
