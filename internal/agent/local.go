package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/childproc"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/transport"
)

// agentBinary is the agent's file name next to the controller.
const agentBinary = "qoslab-agent"

// FindAgent returns the agent binary to run: explicit (from --agent or
// QOSLAB_AGENT) when given, else the one next to the running controller.
func FindAgent(explicit string) (string, error) {
	if explicit != "" {
		st, err := os.Stat(explicit)
		if err != nil {
			return "", fmt.Errorf("agent %s (from --agent or QOSLAB_AGENT): %w", explicit, err)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("agent %s (from --agent or QOSLAB_AGENT) is not an executable file", explicit)
		}
		return explicit, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the agent: locate qoslab itself: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	next := filepath.Join(filepath.Dir(self), agentBinary)
	if st, err := os.Stat(next); err == nil && !st.IsDir() {
		return next, nil
	}
	return "", fmt.Errorf("agent binary not found: looked for %s next to %s; build it with `make build` (puts both in bin/), or pass --agent PATH or set QOSLAB_AGENT", agentBinary, self)
}

// FindGuestAgent returns the agent built for a guest's OS and arch:
// explicit when given, else the one `make build` lays out beside the
// controller (bin/linux-amd64/qoslab-agent beside bin/qoslab).
func FindGuestAgent(explicit, goos, arch string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	p := filepath.Join(filepath.Dir(self), goos+"-"+arch, agentBinary)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no %s/%s agent at %s: build it with `make build` (cross-builds every agent) or pass --guest-agent PATH", goos, arch, p)
	}
	return p, nil
}

// LocalOptions start an agent as a child process of the controller.
type LocalOptions struct {
	Path         string
	ScratchDir   string
	BlockDevices []string
	Stderr       io.Writer // the agent's log; nil discards it
}

// Local is an agent running as a child process, spoken to over its stdio.
type Local struct {
	*Client
	// StartClass is the class the agent process was started at (its
	// threads inherit it until a worker applies its own), as read back.
	StartClass qos.Applied
	child      *childproc.Piped
}

// StartLocal starts the agent binary with the stdio transport, at the
// default class whatever the controller's own (see childproc).
func StartLocal(ctx context.Context, o LocalOptions) (*Local, error) {
	args := []string{"--listen", "stdio"}
	if o.ScratchDir != "" {
		args = append(args, "--scratch", o.ScratchDir)
	}
	for _, d := range o.BlockDevices {
		args = append(args, "--allow-block", d)
	}
	// Not CommandContext: Close decides how the agent ends, politely first.
	cmd := exec.Command(o.Path, args...) //nolint:gosec // G204: the agent binary the user chose (--agent) or the one beside qoslab, by design
	cmd.Stderr = o.Stderr
	child, err := childproc.StartPiped(cmd, qos.Default)
	if err != nil {
		return nil, fmt.Errorf("start agent %s: %w", o.Path, err)
	}
	l := &Local{StartClass: child.StartClass, child: child}
	conn := transport.PipeConn(child.Stdout, child.Stdin, "agent-stdio")
	l.Client, err = NewClient(DialOnce(conn))
	if err != nil {
		child.Kill()
		return nil, err
	}
	l.EndsWith(child.Exited(), func() error {
		return fmt.Errorf("agent %s (pid %d) exited: %v; its messages are above", o.Path, child.Pid(), exitText(child.Err()))
	})
	return l, nil
}

// Pid is the agent process's id.
func (l *Local) Pid() int { return l.child.Pid() }

// Exited is closed when the agent process has ended.
func (l *Local) Exited() <-chan struct{} { return l.child.Exited() }

// Close asks the agent to shut down, waits briefly, and kills it if it has not
// gone, so no agent outlives the controller's use of it.
func (l *Local) Close() error {
	select {
	case <-l.child.Exited():
	default:
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = l.Shutdown(ctx)
		cancel()
		select {
		case <-l.child.Exited():
		case <-time.After(3 * time.Second):
			l.child.Kill()
		}
	}
	_ = l.Client.Close()
	var exitErr *exec.ExitError
	if err := l.child.Err(); err != nil && !errors.As(err, &exitErr) {
		return err
	}
	return nil
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
