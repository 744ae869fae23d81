package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
)

// PowerOffFlag is the agent's flag that makes a Shutdown request power its
// machine off once answered: what a macOS guest's LaunchDaemon passes, since
// there the agent is not init and a Shutdown that only ended it would have
// launchd start it again (KeepAlive) and leave the guest running.
const PowerOffFlag = "power-off-on-shutdown"

// PowerOffCommand is what an agent started with --power-off-on-shutdown
// runs, as root, after answering a Shutdown request. It is fixed: nothing
// a request carries reaches it.
func PowerOffCommand() []string { return []string{"/sbin/shutdown", "-h", "now"} }

// CheckPowerOff says why this agent may not power its machine off, or nil.
// It must run on macOS (a Linux guest's agent is its init, which powers
// off by itself), as root, which shutdown(8) needs, and inside a virtual
// machine: a host whose agent was started with the flag by mistake must
// not go down at the end of a run.
func CheckPowerOff(goos string, euid int, virtualized bool, how string) error {
	switch {
	case goos != "darwin":
		return fmt.Errorf("this is %s: only a macOS guest's agent powers its machine off (a Linux guest's init does so itself)", goos)
	case !virtualized:
		return fmt.Errorf("this machine is not a virtual machine (%s): only a guest's agent powers its machine off", how)
	case euid != 0:
		return fmt.Errorf("shutdown needs root and the agent runs as uid %d: a guest's LaunchDaemon runs it as root", euid)
	}
	return nil
}

// Virtualized says whether this machine is a virtual machine, and how that
// was found (kern.hv_vmm_present on macOS, the CPU's hypervisor flag on
// Linux), as Info reports it.
func Virtualized() (bool, string) {
	r := &agentpb.InfoReply{}
	describeMachine(r)
	return r.GetVirtualized(), r.GetVirtualization()
}

// PowerOff returns what runs PowerOffCommand with run, for Serve's after.
func PowerOff(run func(ctx context.Context, argv []string) error) func(context.Context) error {
	return func(ctx context.Context) error {
		argv := PowerOffCommand()
		if err := run(ctx, argv); err != nil {
			return fmt.Errorf("power off with %s: %w", strings.Join(argv, " "), err)
		}
		return nil
	}
}

// Serve serves an agent within policy on lis until ctx ends, or until a
// Shutdown request has been answered and every call has finished; in that
// case only, it then runs after (when not nil) and returns its error, so
// that an agent that powers its machine off does so once its answer is out.
func Serve(ctx context.Context, policy Policy, lis net.Listener, after func(context.Context) error) error {
	var shutdown atomic.Bool
	stopped := make(chan struct{})
	var stopOnce sync.Once
	srv := NewServer(policy, nil)
	g := srv.GRPCServer()
	srv.shutdown = func() {
		shutdown.Store(true)
		g.GracefulStop()
		stopOnce.Do(func() { close(stopped) })
	}
	defer srv.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			g.Stop()
		case <-done:
		}
	}()
	err := g.Serve(lis)
	if err != nil && !errors.Is(err, net.ErrClosed) && ctx.Err() == nil {
		return err
	}
	if !shutdown.Load() {
		return nil
	}
	// Serve returns as soon as the listener closes; the Shutdown answer
	// may still be on its way.
	select {
	case <-stopped:
	case <-ctx.Done():
		return nil
	}
	if after == nil {
		return nil
	}
	return after(context.WithoutCancel(ctx))
}

// ShutdownOver asks the agent at the other end of conn to shut down, which
// a guest's agent answers by powering its guest off, and closes conn. It
// is how the vz backend stops a guest through its agent.
func ShutdownOver(ctx context.Context, conn net.Conn) error {
	defer conn.Close()
	c, err := NewClient(DialOnce(conn))
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Shutdown(ctx)
}
