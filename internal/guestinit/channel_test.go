package guestinit

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/transport"
)

// boundedWait caps every wait in these tests; none should come near it.
const boundedWait = 5 * time.Second

func TestParseChannel(t *testing.T) {
	cases := []struct {
		in   string
		want Channel
	}{
		{"virtio-port:org.qoslab.agent", Channel{PortName: "org.qoslab.agent"}},
		{"vsock:1024", Channel{Addr: transport.Addr{Kind: transport.KindVsock, Port: 1024, CID: transport.VsockAnyCID}}},
		{"serial:/dev/hvc0", Channel{Addr: transport.Addr{Kind: transport.KindSerial, Path: "/dev/hvc0"}}},
		{"tcp::7000", Channel{Addr: transport.Addr{Kind: transport.KindTCP, Port: 7000}}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseChannel(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.in, got.String(), "String reads back")
		})
	}
}

func TestParseChannelRefuses(t *testing.T) {
	cases := []struct {
		in, mention string
	}{
		{"virtio-port:", "virtio-port:NAME"},
		{"virtio-port:a/b", "no '/'"},
		{"stdio", "stdio is the console"},
		{"bogus:1", "virtio-port:NAME"},
		{"serial:dev/vport0p1", "not an absolute path"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			_, err := parseChannel(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.in, "names the bad value")
			assert.Contains(t, err.Error(), tc.mention)
		})
	}
}

// fakePorts is a sysfs-like tree: class/<entry>/name and dev/<entry>.
type fakePorts struct {
	t      *testing.T
	finder PortFinder
}

func newFakePorts(t *testing.T) fakePorts {
	root := t.TempDir()
	return fakePorts{t: t, finder: PortFinder{
		ClassDir: filepath.Join(root, "sys/class/virtio-ports"),
		DevDir:   filepath.Join(root, "dev"),
		Poll:     5 * time.Millisecond,
	}}
}

// add makes the port's sysfs entry with name ("" for none yet) and, when
// node is true, its device node.
func (f fakePorts) add(entry, name string, node bool) {
	f.t.Helper()
	dir := filepath.Join(f.finder.ClassDir, entry)
	require.NoError(f.t, os.MkdirAll(dir, 0o755))
	require.NoError(f.t, os.WriteFile(filepath.Join(dir, "name"), []byte(name+"\n"), 0o644))
	if node {
		require.NoError(f.t, os.MkdirAll(f.finder.DevDir, 0o755))
		require.NoError(f.t, os.WriteFile(filepath.Join(f.finder.DevDir, entry), nil, 0o644))
	}
}

func TestPortFinderFindsByName(t *testing.T) {
	f := newFakePorts(t)
	f.add("vport0p1", "org.qemu.guest_agent.0", true)
	f.add("vport1p1", guestchan.PortName, true)
	f.add("vport1p2", "", true)

	dev, err := f.finder.Find(guestchan.PortName)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(f.finder.DevDir, "vport1p1"), dev)
}

func TestPortFinderNotFound(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(f fakePorts)
		mention []string
	}{
		{"no class directory", func(fakePorts) {}, []string{"there are no ports"}},
		{"other names", func(f fakePorts) {
			f.add("vport0p1", "org.qemu.guest_agent.0", true)
			f.add("vport0p2", "", true)
		}, []string{`vport0p1 named "org.qemu.guest_agent.0"`, "vport0p2 (no name yet)"}},
		{"named but no device node", func(f fakePorts) {
			f.add("vport0p1", guestchan.PortName, false)
		}, []string{"vport0p1", "not there yet"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakePorts(t)
			tc.setup(f)
			_, err := f.finder.Find(guestchan.PortName)
			require.ErrorIs(t, err, errPortNotFound)
			assert.Contains(t, err.Error(), guestchan.PortName)
			for _, m := range tc.mention {
				assert.Contains(t, err.Error(), m)
			}
		})
	}
}

func TestPortFinderWaitsForThePortToAppear(t *testing.T) {
	f := newFakePorts(t)
	// The port exists before the host has sent its name, as after
	// virtio_console loads.
	f.add("vport0p1", "", true)
	ctx, cancel := context.WithTimeout(context.Background(), boundedWait)
	defer cancel()

	var naming atomic.Bool
	added := make(chan struct{})
	go func() {
		defer close(added)
		time.Sleep(30 * time.Millisecond)
		naming.Store(true) // before the write: Wait cannot see the name earlier
		f.add("vport0p1", guestchan.PortName, true)
	}()
	// The writer finishes before the test's directory is removed.
	defer func() { <-added }()
	dev, err := f.finder.Wait(ctx, guestchan.PortName)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(f.finder.DevDir, "vport0p1"), dev)
	assert.True(t, naming.Load(), "Wait returned before the port had its name")
}

func TestPortFinderWaitGivesUp(t *testing.T) {
	f := newFakePorts(t)
	f.add("vport0p1", "other", true)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := f.finder.Wait(ctx, guestchan.PortName)
	require.ErrorIs(t, err, errPortNotFound)
	assert.Contains(t, err.Error(), "after waiting")
	assert.Contains(t, err.Error(), `vport0p1 named "other"`, "says what is there")
	assert.Contains(t, err.Error(), "virtio_console", "says what to check")
}

func TestPortFinderWaitStopsWhenCancelled(t *testing.T) {
	f := newFakePorts(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.finder.Wait(ctx, guestchan.PortName)
	require.ErrorIs(t, err, errPortNotFound)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestChannelResolve(t *testing.T) {
	f := newFakePorts(t)
	f.add("vport2p1", guestchan.PortName, true)
	ctx, cancel := context.WithTimeout(context.Background(), boundedWait)
	defer cancel()

	port, err := parseChannel(virtioPortPrefix + guestchan.PortName)
	require.NoError(t, err)
	got, err := port.Resolve(ctx, f.finder)
	require.NoError(t, err)
	assert.Equal(t, transport.Addr{Kind: transport.KindSerial, Path: filepath.Join(f.finder.DevDir, "vport2p1")}, got)

	vsock, err := parseChannel("vsock:1024")
	require.NoError(t, err)
	got, err = vsock.Resolve(ctx, f.finder)
	require.NoError(t, err)
	assert.Equal(t, vsock.Addr, got, "other addresses are used as they are")
}

func TestChannelsFromCmdline(t *testing.T) {
	image := []Channel{{PortName: guestchan.PortName}, {Addr: transport.Addr{Kind: transport.KindVsock, CID: transport.VsockAnyCID, Port: guestchan.VsockPort}}}
	vsock := []Channel{image[1]}
	tests := []struct {
		name     string
		cmdline  string
		want     []Channel
		wantNote string
	}{
		{"none named: the image's", "quiet console=ttyAMA0 panic=-1", image, ""},
		{"vz's command line: vsock only", guestchan.VZLinuxCmdline("quiet console=ttyAMA0"), vsock, "channels from the kernel command line (qoslab.listen): vsock:1024"},
		{"named empty", "qoslab.listen=", image, "qoslab.listen= names no channel: serving on the image's (virtio-port:org.qoslab.agent, vsock:1024)"},
		{"a bad one", "qoslab.listen=vsock:1024,bogus:1", image, `qoslab.listen= on the kernel command line: listen address: transport address "bogus:1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, note := channelsFromCmdline(tt.cmdline, image)
			assert.Equal(t, tt.want, got)
			if tt.wantNote == "" {
				assert.Empty(t, note)
			} else {
				assert.Contains(t, note, tt.wantNote)
			}
		})
	}
}

// The channels are opened together: a channel still waiting for its device
// (here, until the other has been opened, which one after the other would
// never happen) holds up none of the others.
func TestOpenChannelsTogether(t *testing.T) {
	chans := []Channel{{PortName: guestchan.PortName}, {Addr: transport.Addr{Kind: transport.KindVsock, CID: transport.VsockAnyCID, Port: guestchan.VsockPort}}}
	vsockOpened := make(chan struct{})
	missing := errors.New("no port named org.qoslab.agent")
	open := func(ctx context.Context, ch Channel) (net.Listener, error) {
		if ch.PortName != "" {
			select {
			case <-vsockOpened:
				return nil, missing
			case <-time.After(boundedWait):
				return nil, errors.New("the port was waited for before vsock was opened")
			}
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		close(vsockOpened)
		return l, err
	}
	got := openChannels(context.Background(), chans, open)
	require.Len(t, got, 2)
	assert.ErrorIs(t, got[0].err, missing, "results are in the channels' order")
	require.NoError(t, got[1].err)
	require.NotNil(t, got[1].listener)
	_ = got[1].listener.Close()
}
