//go:build darwin

package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"sync"
	"syscall"
	"time"
)

// How long Close lets powermetrics exit on SIGTERM (sudo forwards it) before
// killing its process group.
const powermetricsStopGrace = 2 * time.Second

// powermetricsProbe runs powermetrics as a child process for as long as the
// probe lives; powermetricsStream does the reading.
type powermetricsProbe struct {
	stream *powermetricsStream
	cmd    *exec.Cmd
	stdout io.Closer
	done   chan struct{} // closed once the output is read and the process reaped

	closeOnce sync.Once
	closeErr  error
}

// newPowermetricsProbe starts `powermetrics --samplers cpu_power -i <ms> -f
// plist` and returns a probe reading it, once the first sample has arrived.
// powermetrics needs root: qoslab runs it directly as root, or through
// `sudo -n` when a sudoers entry allows it; otherwise, and on a macOS without
// powermetrics, it returns an *UnavailableError saying how to enable it, and
// the run goes on without this telemetry. ctx bounds the process's life as
// well as the start; Close stops it.
func newPowermetricsProbe(ctx context.Context, interval time.Duration) (Probe, error) {
	if _, err := os.Stat(powermetricsPath); err != nil {
		return nil, powermetricsMissing(err)
	}
	root := os.Geteuid() == 0
	argv, err := powermetricsCommand(interval, root, !root && sudoAllowsPowermetrics(ctx), os.Getuid(), currentUserName())
	if err != nil {
		return nil, err
	}

	// Topology only labels core types if a cluster name is unusable, so a
	// failure is a note, not a reason to go without telemetry.
	var notes []string
	levels, err := readPerfLevels(ctx)
	if err != nil {
		notes = append(notes, fmt.Sprintf("powermetrics: no perf levels: %v", err))
	}

	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...) //nolint:gosec // G204: powermetrics with fixed arguments
	// Its own process group, so that Close (and a cancelled ctx) can signal
	// sudo and powermetrics together, and a terminal's Ctrl-C reaches qoslab
	// only, which then stops powermetrics itself. Should qoslab die without
	// Close, powermetrics dies of SIGPIPE at its next write.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return signalGroup(cmd, syscall.SIGTERM) }
	cmd.WaitDelay = powermetricsStopGrace
	stderr := &tailBuffer{max: 2 << 10}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("powermetrics stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}

	p := &powermetricsProbe{stream: newPowermetricsStream(levels, notes...), cmd: cmd, stdout: stdout, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.stream.consume(stdout)
		p.stream.end(powermetricsExitNote(cmd.Wait(), stderr.String()))
	}()

	// Wait for the first sample, so that a powermetrics that refuses to run
	// (an unknown sampler on an old macOS, sudo changing its mind) is
	// reported now as unavailable rather than as a run of empty samples.
	if interval <= 0 {
		interval = DefaultIntervalMs * time.Millisecond
	}
	timer := time.NewTimer(10*interval + 5*time.Second)
	defer timer.Stop()
	select {
	case <-p.stream.started():
	case <-ctx.Done():
		_ = p.Close()
		return nil, fmt.Errorf("start powermetrics: %w", ctx.Err())
	case <-timer.C:
		_ = p.Close()
		return nil, &UnavailableError{
			Sampler: SamplerPowermetrics,
			Reason:  fmt.Sprintf("powermetrics gave no sample in %s (stderr: %q)", 10*interval+5*time.Second, stderr.String()),
			Fix:     "run `sudo powermetrics --samplers cpu_power -i 100 -n 1 -f plist` to see what it reports",
		}
	}
	if !p.stream.hasSamples() {
		<-p.done
		return nil, &UnavailableError{
			Sampler: SamplerPowermetrics,
			Reason:  powermetricsExitNote(errors.New("before its first sample"), stderr.String()),
			Fix:     "run `sudo powermetrics --samplers cpu_power -i 100 -n 1 -f plist` to see what it reports",
		}
	}
	return p, nil
}

func (p *powermetricsProbe) Name() string { return SamplerPowermetrics }

// Sample returns what powermetrics reported since the previous call. Threads
// are left to the caller: powermetrics' cpu_power sampler has none.
func (p *powermetricsProbe) Sample(ctx context.Context, threads []ThreadRef) (Sample, error) {
	return p.stream.take(), nil
}

// Close stops powermetrics: SIGTERM to its process group, then SIGKILL after
// a grace period, then closing the pipe so that a powermetrics out of reach
// (sudo running it in a session of its own) dies of SIGPIPE. It returns once
// the reader is done, so no process or goroutine is left behind.
func (p *powermetricsProbe) Close() error {
	p.closeOnce.Do(func() {
		_ = signalGroup(p.cmd, syscall.SIGTERM)
		if p.waitDone(powermetricsStopGrace) {
			return
		}
		_ = signalGroup(p.cmd, syscall.SIGKILL)
		_ = p.stdout.Close()
		if !p.waitDone(powermetricsStopGrace) {
			p.closeErr = fmt.Errorf("powermetrics (pid %d) did not exit after SIGKILL", p.cmd.Process.Pid)
		}
	})
	return p.closeErr
}

func (p *powermetricsProbe) waitDone(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// signalGroup signals the process group cmd leads (Setpgid).
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// sudoAllowsPowermetrics reports whether this user may run powermetrics
// through sudo without a password: `sudo -n -l <cmd>` succeeds only then,
// and never prompts.
func sudoAllowsPowermetrics(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "sudo", "-n", "-l", powermetricsPath).Run() == nil
}

// readPerfLevels reads the core topology from `sysctl hw` (the subtree
// rather than named keys: naming a perf level the machine lacks makes sysctl
// fail).
func readPerfLevels(ctx context.Context) ([]perfLevel, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/sbin/sysctl", "hw").Output()
	if err != nil {
		return nil, fmt.Errorf("sysctl hw: %w", err)
	}
	return parseSysctlPerfLevels(out)
}

func currentUserName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}
