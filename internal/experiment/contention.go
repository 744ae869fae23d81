package experiment

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/units"
	"github.com/qoslab/qoslab/internal/workload"
)

// SpinnerCommand is the hidden qoslab command that runs the spinner
// process: qoslab starts itself with it, so no other binary is needed.
const SpinnerCommand = "__contention"

// Contention is a running set of spinner threads in a process of their own,
// outside the measured agent.
type Contention struct {
	Threads int           `json:"threads"`
	PID     int           `json:"pid"`
	QoS     []qos.Applied `json:"qos"` // as each spinner thread read back
	cmd     *exec.Cmd
	// stdin is held for the spinners' life: they stop when it closes.
	stdin io.WriteCloser
	// exited is closed when the spinner process has ended, waitErr then
	// says how.
	exited  chan struct{}
	waitErr error
}

// Running reports an error when the spinner process has ended: the cells
// measured since then ran without the contention they were asked to have.
func (c *Contention) Running() error {
	select {
	case <-c.exited:
		return fmt.Errorf("the contention process (%s, pid %d) ended mid-run (%v), so this cell may have run without it", units.Plural(c.Threads, "spinner thread"), c.PID, c.waitErr)
	default:
		return nil
	}
}

// Stop kills the spinner process and waits for it.
func (c *Contention) Stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	if c.stdin != nil {
		c.stdin.Close()
	}
}

// StartContention starts this executable as the spinner process (see
// SpinnerCommand) and waits until every spinner thread runs.
func StartContention(ctx context.Context, n int) (*Contention, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, SpinnerCommand, strconv.Itoa(n))
	// One P per spinner plus one for the runtime, so the spinners really are n threads.
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(n+1))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = childProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Contention{Threads: n, PID: cmd.Process.Pid, cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("spinner process ended before it was ready: %w", err)
	}
	if err := json.Unmarshal(line, &c.QoS); err != nil {
		c.Stop()
		return nil, fmt.Errorf("spinner process said %q: %w", line, err)
	}
	return c, nil
}

// SpinnerMain is the spinner process, started as `qoslab SpinnerCommand N`:
// N default-class threads spinning until in closes or ctx ends; it writes
// each thread's class as read back (JSON, one line) to out once all spin.
func SpinnerMain(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return fmt.Errorf("spinner count %q: allowed 1 and above", args[0])
	}
	spin(ctx, n, in, out)
	return nil
}

func spin(ctx context.Context, n int, in io.Reader, out io.Writer) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, in)
		cancel()
	}()
	workload.Spin(ctx, n, func(applied []qos.Applied) {
		b, _ := json.Marshal(applied)
		fmt.Fprintf(out, "%s\n", b)
	})
}
