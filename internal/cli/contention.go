package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/workload"
)

const contentionCmd = "__contention"

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
		return fmt.Errorf("the %d contention spinners (pid %d) ended mid-run (%v), so this cell may have run without them", c.Threads, c.PID, c.waitErr)
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

// startContention starts this executable as the spinner process and waits
// until every spinner thread runs.
func startContention(ctx context.Context, n int) (*Contention, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, contentionCmd, strconv.Itoa(n))
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

// newCmdContention is the spinner process (hidden): N default-class threads
// spinning until stdin closes or it is killed.
func newCmdContention(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    contentionCmd + " N",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 {
				return usageErrorf("spinner count %q: allowed 1 and above", args[0])
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			go func() {
				_, _ = io.Copy(io.Discard, f.IO.In)
				cancel()
			}()
			workload.Spin(ctx, n, func(applied []qos.Applied) {
				b, _ := json.Marshal(applied)
				fmt.Fprintf(f.IO.Out, "%s\n", b)
			})
			return nil
		},
	}
}
