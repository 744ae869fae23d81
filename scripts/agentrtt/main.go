// Command agentrtt times the agent's Info round trip over each channel: the
// host agent over stdio, and the agent in a VM over its virtio-serial port
// (TCG or KVM, whatever the backend picks; --accel forces one).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/qemu"
	"github.com/qoslab/qoslab/internal/image"
)

func rtts(ctx context.Context, c *agent.Client, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := c.Info(ctx); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func report(name string, d []time.Duration) {
	q := func(p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	fmt.Printf("%-28s n=%d  median %8v  p10 %8v  p90 %8v  max %8v\n", name, len(d), q(0.5), q(0.1), q(0.9), d[len(d)-1])
}

func main() {
	n := flag.Int("n", 200, "Info calls per channel")
	agentPath := flag.String("agent", "bin/qoslab-agent", "host agent binary")
	accel := flag.String("accel", "", "VM acceleration: kvm, tcg (default: the backend's choice)")
	flag.Parse()
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "agentrtt:", err)
		os.Exit(1)
	}

	local, err := agent.StartLocal(ctx, agent.LocalOptions{Path: *agentPath, Stderr: os.Stderr})
	if err != nil {
		fail(err)
	}
	d, err := rtts(ctx, local.Client, *n)
	local.Close()
	if err != nil {
		fail(err)
	}
	report("host agent (stdio)", d)

	store, err := image.DefaultStoreDir(os.Getenv)
	if err != nil {
		fail(err)
	}
	img, _, err := image.Load(store, image.DefaultRecipe().ImageName(""))
	if err != nil {
		fail(fmt.Errorf("%w (build it with `qoslab image build linux`)", err))
	}
	dir, err := os.MkdirTemp("", "qoslab-rtt-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	cache, _ := os.UserCacheDir()
	backend := qemu.New(qemu.Options{CacheDir: cache + "/qoslab"})
	m, c, err := guestvm.Boot(ctx, backend, os.Stderr, hv.Spec{Name: "rtt", Image: img, CPUs: 2, MemoryMiB: 1024, Accel: *accel, StateDir: dir}, hv.DefaultBootTimeout, "")
	if err != nil {
		fail(err)
	}
	defer func() {
		if err := m.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "agentrtt: stopping the VM:", err)
		}
	}()
	info := m.Info()
	fmt.Printf("vm booted: agent answered %.2f s after qemu started (accel %s)\n", float64(info.BootNs)/1e9, info.Accel)
	d, err = rtts(ctx, c, *n)
	if err != nil {
		fail(err)
	}
	report("vm agent (virtio-serial, "+info.Accel+")", d)
	_ = c.Shutdown(ctx)
}
