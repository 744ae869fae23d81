// Command vsockhold checks that one agent connection to a named VM lives:
// it attaches to the VM (started with `qoslab vm start NAME`), asks the
// agent's Info once, leaves the connection idle, then makes more calls on
// it, and fails when any call fails or when the client had to dial again
// (gRPC redials a dropped connection on its own, which would hide the
// drop). On a Mac it is scripts/darwin-smoke.sh's check that a vsock
// connection outlives the framework's completion handler: a connection
// whose VZVirtioSocketConnection is freed when the handler returns dies
// with it (internal/hv/vz/vzpatched/README.md).
//
// Usage: go run ./scripts/vsockhold [-idle 1s] [-calls 100] NAME
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/namedvm"
)

func main() {
	idle := flag.Duration("idle", time.Second, "how long the connection stays idle after the first call")
	calls := flag.Int("calls", 100, "Info calls after the idle time")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: vsockhold [-idle 1s] [-calls 100] NAME")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *idle, *calls); err != nil {
		fmt.Fprintln(os.Stderr, "vsockhold:", err)
		os.Exit(1)
	}
}

func run(name string, idle time.Duration, calls int) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute+idle)
	defer cancel()
	m, err := namedvm.For(guestvm.DefaultEnv(os.Getenv, guestvm.Env{})).Attach(ctx, name)
	if err != nil {
		return err
	}
	var dials atomic.Int32
	c, err := agent.NewClient(func(ctx context.Context) (net.Conn, error) {
		dials.Add(1)
		return m.DialAgent(ctx)
	})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Info(ctx); err != nil {
		return fmt.Errorf("the first Info: %w", err)
	}
	time.Sleep(idle)
	start := time.Now()
	for i := 0; i < calls; i++ {
		if _, err := c.Info(ctx); err != nil {
			return fmt.Errorf("call %d of %d (Info) after %v idle: %w", i+1, calls, idle, err)
		}
	}
	if n := dials.Load(); n != 1 {
		return fmt.Errorf("the client dialed %d times for 1+%d calls: the connection was dropped and made again", n, calls)
	}
	fmt.Printf("vm %s: one connection, idle %v, then %d Info calls in %v: it held\n", name, idle, calls, time.Since(start).Round(time.Millisecond))
	return nil
}
