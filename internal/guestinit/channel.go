package guestinit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/transport"
)

// virtioPortPrefix starts a Listen entry that names a virtio-serial port by
// the name the host gave it ("virtio-port:org.qoslab.agent").
const virtioPortPrefix = "virtio-port:"

// PortWait bounds how long the agent waits for its virtio-serial port: the
// port and its name arrive asynchronously after virtio_console loads (the
// host sends the name in a control message after the port is added).
const PortWait = 10 * time.Second

// Channel is one entry of Config.Listen, parsed: either a virtio-serial port
// to find by name, or a transport address to listen on as it is.
type Channel struct {
	// PortName is set for "virtio-port:NAME".
	PortName string
	// Addr is the address for every other form.
	Addr transport.Addr
}

// parseChannel reads one Config.Listen entry.
func parseChannel(s string) (Channel, error) {
	if name, ok := strings.CutPrefix(s, virtioPortPrefix); ok {
		if name == "" || strings.ContainsAny(name, "/\x00") {
			return Channel{}, fmt.Errorf("listen address %q: want %sNAME with a port name that has no '/', e.g. %s%s", s, virtioPortPrefix, virtioPortPrefix, guestchan.PortName)
		}
		return Channel{PortName: name}, nil
	}
	a, err := transport.Parse(s)
	if err != nil {
		return Channel{}, fmt.Errorf("listen address: %w, or %sNAME", err, virtioPortPrefix)
	}
	if a.Kind == transport.KindStdio {
		return Channel{}, fmt.Errorf("listen address %q: stdio is the console in a guest; use %sNAME, vsock:PORT or serial:/dev/PATH", s, virtioPortPrefix)
	}
	return Channel{Addr: a}, nil
}

// String formats c the way parseChannel reads it.
func (c Channel) String() string {
	if c.PortName != "" {
		return virtioPortPrefix + c.PortName
	}
	return c.Addr.String()
}

// Resolve turns c into a transport address, waiting (until ctx ends) for a
// named virtio-serial port to appear.
func (c Channel) Resolve(ctx context.Context, ports PortFinder) (transport.Addr, error) {
	if c.PortName == "" {
		return c.Addr, nil
	}
	dev, err := ports.Wait(ctx, c.PortName)
	if err != nil {
		return transport.Addr{}, err
	}
	return transport.Addr{Kind: transport.KindSerial, Path: dev}, nil
}

// PortFinder finds virtio-serial ports by name in a sysfs-like tree:
// ClassDir/<port>/name holds the name and DevDir/<port> is the device node.
type PortFinder struct {
	ClassDir string
	DevDir   string
	// Poll is the pause between looks while waiting; 20 ms when zero.
	Poll time.Duration
}

// errPortNotFound is why Find and Wait fail when no port has the name.
var errPortNotFound = errors.New("virtio-serial port not found")

// port is what one look at the class directory saw.
type port struct {
	entry string // vport0p1
	name  string // the host's name for it, "" while not yet sent
}

// Find returns the device node of the port named name, or an error that
// wraps errPortNotFound and lists the ports there are.
func (f PortFinder) Find(name string) (string, error) {
	ports, err := f.list()
	if err != nil {
		return "", err
	}
	for _, p := range ports {
		if p.name != name {
			continue
		}
		dev := filepath.Join(f.DevDir, p.entry)
		// The device node comes with the sysfs entry from devtmpfs; checking
		// keeps a caller from racing a half-made port.
		if _, err := os.Stat(dev); err != nil {
			return "", fmt.Errorf("%w: %q is %s but %s is not there yet", errPortNotFound, name, p.entry, dev)
		}
		return dev, nil
	}
	return "", fmt.Errorf("%w: no port named %q in %s (%s)", errPortNotFound, name, f.ClassDir, describePorts(ports))
}

// Wait looks for the port named name until it is there or ctx ends.
func (f PortFinder) Wait(ctx context.Context, name string) (string, error) {
	poll := f.Poll
	if poll <= 0 {
		poll = 20 * time.Millisecond
	}
	began := time.Now()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		dev, err := f.Find(name)
		if err == nil || !errors.Is(err, errPortNotFound) {
			return dev, err
		}
		select {
		case <-ctx.Done():
			if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				return "", fmt.Errorf("%w; stopped waiting: %w", err, context.Cause(ctx))
			}
			return "", fmt.Errorf("%w, after waiting %s: is the host's virtserialport named %q, and is virtio_console loaded?",
				err, time.Since(began).Round(time.Millisecond), name)
		case <-t.C:
		}
	}
}

// list reads the class directory; a missing one is no ports (virtio_console
// creates it when it loads).
func (f PortFinder) list() ([]port, error) {
	entries, err := os.ReadDir(f.ClassDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("virtio-serial ports: %w", err)
	}
	var ports []port
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(f.ClassDir, e.Name(), "name"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("virtio-serial port %s: %w", e.Name(), err)
		}
		ports = append(ports, port{entry: e.Name(), name: strings.TrimSpace(string(b))})
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i].entry < ports[j].entry })
	return ports, nil
}

func describePorts(ports []port) string {
	if len(ports) == 0 {
		return "there are no ports"
	}
	var s []string
	for _, p := range ports {
		if p.name == "" {
			s = append(s, p.entry+" (no name yet)")
		} else {
			s = append(s, fmt.Sprintf("%s named %q", p.entry, p.name))
		}
	}
	return "there are " + strings.Join(s, ", ")
}

// channelsFromCmdline is the channels the kernel command line names with
// guestchan.ListenParam (a backend that knows its devices says which the
// VM has), else image, the image's list. note says which was taken and
// why, "" for the image's list when the command line names none.
func channelsFromCmdline(cmdline string, image []Channel) (chans []Channel, note string) {
	listen, ok := guestchan.ListenFromCmdline(cmdline)
	if !ok {
		return image, ""
	}
	if len(listen) == 0 {
		return image, fmt.Sprintf("%s= names no channel: serving on the image's (%s)", guestchan.ListenParam, describeChannels(image))
	}
	for _, s := range listen {
		ch, err := parseChannel(s)
		if err != nil {
			return image, fmt.Sprintf("%s= on the kernel command line: %v; serving on the image's channels (%s)", guestchan.ListenParam, err, describeChannels(image))
		}
		chans = append(chans, ch)
	}
	return chans, fmt.Sprintf("channels from the kernel command line (%s): %s", guestchan.ListenParam, describeChannels(chans))
}

func describeChannels(chans []Channel) string {
	s := make([]string, len(chans))
	for i, ch := range chans {
		s[i] = ch.String()
	}
	return strings.Join(s, ", ")
}

// openedChannel is one channel's listener, or why there is none, and how
// long it took to find out.
type openedChannel struct {
	listener net.Listener
	err      error
	took     time.Duration
}

// openChannels opens every channel at once, so that a channel the VM lacks
// (a virtio-serial port waited for PortWait) holds up none of the others
// longer than the slowest of them; the results are in chans' order.
func openChannels(ctx context.Context, chans []Channel, open func(context.Context, Channel) (net.Listener, error)) []openedChannel {
	out := make([]openedChannel, len(chans))
	var wg sync.WaitGroup
	for i, ch := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			l, err := open(ctx, ch)
			out[i] = openedChannel{listener: l, err: err, took: time.Since(began)}
		}()
	}
	wg.Wait()
	return out
}
