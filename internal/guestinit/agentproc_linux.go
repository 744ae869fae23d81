package guestinit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/transport"
	"github.com/qoslab/qoslab/internal/version"
)

// scratchDeviceWait bounds how long the agent waits for the scratch disk's
// node: virtio_blk has loaded by now, but the disk may still be probing.
const scratchDeviceWait = 2 * time.Second

// runAgent is the agent process init starts: it serves the controller on the
// configured channels until told to shut down. args are init's boot times.
func runAgent(args []string) int {
	started := bootClock()
	log := newBootLog()
	// Init started this process once the console was there, or gave up.
	log.attach(os.Stdout)
	times := agentBootTimes(log, args, started)

	cfg, err := ReadConfig(guestchan.ConfigPath)
	if err != nil {
		log.errorf("%v", err)
		return 1
	}
	chans, err := cfg.Channels()
	if err != nil {
		log.errorf("%v", err)
		return 1
	}
	if cmdline, err := os.ReadFile("/proc/cmdline"); err == nil {
		named, note := channelsFromCmdline(string(cmdline), chans)
		if note != "" {
			log.notef("%s", note)
		}
		chans = named
	}
	ctx, stop := signal.NotifyContext(context.Background(), unix.SIGINT, unix.SIGTERM)
	defer stop()

	listeners, step := listenAll(ctx, log, chans)
	times.Steps = append(times.Steps, step)
	if len(listeners) == 0 {
		log.errorf("no channel to serve on: all %d listen addresses failed (above)", len(chans))
		return 1
	}
	policy := agentPolicy(ctx, log, cfg)

	times.Ready = bootClock()
	log.notef("%s", times.Summary())
	var addrs []string
	for _, l := range listeners {
		addrs = append(addrs, l.Addr().String())
	}
	log.notef("%s%s%s", version.String(), guestchan.ServingMark, strings.Join(addrs, ", "))

	err = serve(ctx, policy, listeners, func(l net.Listener, err error) {
		log.errorf("%v", err)
	})
	unix.Sync()
	if err != nil {
		log.errorf("%v", err)
		return 1
	}
	log.notef("agent stopped")
	return 0
}

// agentBootTimes is init's boot times (args[0]) with the agent process's
// start, at started, added; without them, the boot began at started.
func agentBootTimes(log *bootLog, args []string, started time.Duration) bootTimes {
	var times bootTimes
	if len(args) > 0 {
		var err error
		if times, err = decodeBootTimes(args[0]); err != nil {
			log.notef("%v; the boot summary covers the agent process only", err)
		}
	}
	if times.Spawned > 0 {
		times.Steps = append(times.Steps, bootStep{Name: "agent start", Took: started - times.Spawned})
	}
	if times.InitStart == 0 {
		times.InitStart = started
	}
	return times
}

// listenAll opens every channel at once, noting those that fail, and
// returns the listeners and the boot step "channels": how long opening them
// took, each channel a part.
func listenAll(ctx context.Context, log *bootLog, chans []Channel) ([]net.Listener, bootStep) {
	began := time.Now()
	opened := openChannels(ctx, chans, openChannel)
	var listeners []net.Listener
	var parts []bootStep
	for i, o := range opened {
		parts = append(parts, bootStep{Name: chans[i].String(), Took: o.took})
		if o.err != nil {
			log.notef("not serving on %s: %v", chans[i], o.err)
			continue
		}
		listeners = append(listeners, o.listener)
	}
	return listeners, bootStep{Name: "channels", Took: time.Since(began), Parts: parts}
}

// agentPolicy is what the agent allows: the scratch directory, and the
// scratch disk as a block sink once its node is there.
func agentPolicy(ctx context.Context, log *bootLog, cfg Config) agent.Policy {
	policy := agent.Policy{ScratchDir: cfg.ScratchDir}
	if cfg.ScratchDevice != "" {
		if err := waitForFile(ctx, cfg.ScratchDevice, scratchDeviceWait); err != nil {
			log.notef("scratch device: %v; the block sink is off", err)
		} else {
			policy.BlockDevices = []string{cfg.ScratchDevice}
		}
	}
	return policy
}

// openChannel resolves ch, waiting up to PortWait for a virtio-serial port,
// and listens on it.
func openChannel(ctx context.Context, ch Channel) (net.Listener, error) {
	rctx, cancel := context.WithTimeout(ctx, PortWait)
	defer cancel()
	addr, err := ch.Resolve(rctx, systemPorts())
	if err != nil {
		return nil, err
	}
	return transport.Listen(ctx, addr)
}

// waitForFile waits until path exists or wait has passed.
func waitForFile(ctx context.Context, path string, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		_, err := os.Stat(path)
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (waited %s)", err, wait)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
