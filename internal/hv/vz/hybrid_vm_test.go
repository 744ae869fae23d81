//go:build linux

package vz

// The vz backend's own code driving a real guest instead of fakeVM: the
// host's agent socket and its proxy, the connector and its retry, and the
// stop sequence, run against the arm64 Linux guest booted in the qemu
// backend's vz device model. Its vsock is a hybrid vsock socket
// (vhost-device-vsock's: CONNECT <port>, then the guest's stream), which
// has the one-call connect of vz's connect(toPort:), and the connections it
// gives are handed out as vz's own type (vzSocketConn: no CloseWrite), so
// the proxy sees what it sees on a Mac. Only hybridVM below stands in for
// vz.VirtualMachine; what the guest does (its agent, its power button) is
// the guest a Mac boots.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/qemu"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/testvm"
	"github.com/qoslab/qoslab/internal/transport"
	"github.com/qoslab/qoslab/internal/version"
)

// Bounds of the VM tests, generous for TCG on a busy machine: none is a
// figure a test checks, only a wait that must end.
const (
	// hybridBootBound bounds a boot, from QEMU's start to the agent's answer.
	hybridBootBound = 5 * time.Minute
	// hybridDialBound bounds one hybrid vsock attempt, which waits for the
	// agent to serve first (see hybridVM.dial).
	hybridDialBound = 3 * time.Minute
	// hybridGrace is the guest's time to power off once asked: its real
	// time is logged, not checked.
	hybridGrace = 2 * time.Minute
)

// unlistenedPort is a vsock port nothing listens on in the guest.
const unlistenedPort = 4242

// hybridVM is an instance backed by a VM in the qemu backend's vz device
// model: Connect goes through the connector to the VM's hybrid vsock
// socket, RequestStop presses the power button (QMP system_powerdown) and
// ForceStop ends QEMU.
type hybridVM struct {
	m       hv.Machine
	state   qemu.State
	console string
	conns   *connector

	requests atomic.Int32 // RequestStop calls
	forced   atomic.Int32 // ForceStop calls

	mu sync.Mutex
	// handed are the connections dial made, in order.
	handed []net.Conn
}

var _ instance = (*hybridVM)(nil)

// dial is vz's VirtioSocketDevice.Connect for the connector: one attempt,
// not cancellable by its caller. It waits for the console to show the agent
// serving before it connects: vhost-device-vsock 0.3.0 loses the device
// for good to a connection that arrives while the guest's driver is still
// setting its queues up (see the qemu backend's awaitServing); vz answers
// no connection before the guest's device does either. An attempt the
// daemon holds is never abandoned before its answer (the daemon would
// fail writing OK to a host side that is gone).
func (vm *hybridVM) dial(port uint32) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hybridDialBound)
	defer cancel()
	if err := vm.awaitServing(ctx); err != nil {
		return nil, err
	}
	c, err := transport.DialHybridVsock(ctx, vm.state.HybridVsockSocket, port)
	if err != nil {
		return nil, err
	}
	vc := newVZSocketConn(c, port)
	vm.mu.Lock()
	vm.handed = append(vm.handed, vc)
	vm.mu.Unlock()
	return vc, nil
}

// awaitServing returns once the guest's console shows its agent serving.
func (vm *hybridVM) awaitServing(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(vm.console); err == nil && bytes.Contains(b, []byte(guestchan.ServingMark)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the agent did not say it serves on %s: %w", vm.console, ctx.Err())
		case <-vm.m.Done():
			return errors.New("the VM has stopped")
		case <-t.C:
		}
	}
}

func (vm *hybridVM) Connect(ctx context.Context, port uint32) (net.Conn, error) {
	return vm.conns.connectWhile(ctx, vm.m.Done(), port)
}

func (vm *hybridVM) Done() <-chan struct{} { return vm.m.Done() }

func (vm *hybridVM) Err() error { return vm.m.Err() }

func (vm *hybridVM) RequestStop() error {
	vm.requests.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return qemu.PressPowerButton(ctx, vm.m)
}

func (vm *hybridVM) ForceStop(ctx context.Context) error {
	vm.forced.Add(1)
	return vm.m.Stop(ctx)
}

// inFlight says whether the connector has an attempt in flight.
func (vm *hybridVM) inFlight() bool {
	return vm.conns.parked() > 0
}

// handedOut returns the connections dial made.
func (vm *hybridVM) handedOut() []net.Conn {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	return append([]net.Conn(nil), vm.handed...)
}

// hybridHost is a vz host (openHost) running img in the vz model.
type hybridHost struct {
	h   *host
	vm  *hybridVM
	log *lockedBuffer
}

// openHybridHost plans img as the vz backend plans a Linux guest, boots
// it in the vz model and serves it as a vz host does, with agentStop; it
// returns once the agent has answered Info through the host's agent
// socket. Neither QEMU nor its daemon outlives the test.
func openHybridHost(t *testing.T, img hv.Image, agentStop AgentStop) hybridHost {
	t.Helper()
	dir := shortDir(t)
	p, err := planVM(hv.Spec{Name: "hybrid", Image: img, CPUs: 1, MemoryMiB: 512, StateDir: dir},
		Limits{MinCPUs: 1, MaxCPUs: 2, MinMemoryBytes: 128 * mib, MaxMemoryBytes: 2048 * mib})
	require.NoError(t, err)
	// The vz plan's 5 s is for a Mac; the guest here is emulated on a
	// shared machine, and how long it takes is logged, not checked.
	p.StopTimeout = hybridGrace

	var vm *hybridVM
	boot := func(ctx context.Context, p plan, _ *log.Logger) (instance, error) {
		booted, err := bootVZModel(t, ctx, p)
		if err != nil {
			return nil, err
		}
		vm = booted
		return booted, nil
	}
	logs := &lockedBuffer{}
	logger := log.New(logs, "", log.Lmicroseconds)
	ctx, cancel := context.WithTimeout(context.Background(), hybridBootBound)
	defer cancel()
	base := state{Info: hv.MachineInfo{Backend: backendName, Name: p.Name, StateDir: p.StateDir}, Phase: phaseStarting, Plan: p}
	h, err := openHost(ctx, p, base, boot, agentStop, logger, nil)
	require.NoError(t, err)
	// The vz model boots exactly what the vz backend would boot.
	args := vm.state.Args
	require.Contains(t, args, "-append")
	for i, a := range args {
		if a == "-append" {
			assert.Equal(t, p.Cmdline, args[i+1], "the vz model's command line is the vz plan's")
		}
	}

	started := time.Now()
	r, err := agentInfo(ctx, p.AgentSocket)
	require.NoError(t, err, "the agent through the host's agent socket; console:\n%s", readText(vm.console))
	t.Logf("the agent answered through agent.sock and the hybrid vsock %.1f s after QEMU ran", time.Since(started).Seconds())
	vm.conns.mu.Lock()
	t.Logf("%d connections made, %d of them late for attempts abandoned at their deadline, and closed; %d attempts in flight",
		len(vm.handedOut()), vm.conns.lateClosed, len(vm.conns.inFlight))
	vm.conns.mu.Unlock()
	assert.Equal(t, "linux", r.GetOs())
	assert.Equal(t, "arm64", r.GetArch())
	assert.EqualValues(t, version.ProtocolMajor, r.GetProtocol().GetMajor())
	return hybridHost{h: h, vm: vm, log: logs}
}

// bootVZModel boots p in the qemu backend's vz model, as the vz backend's
// boot would on a Mac, and returns once QEMU runs.
func bootVZModel(t *testing.T, ctx context.Context, p plan) (*hybridVM, error) {
	dir := shortDir(t)
	spec := hv.Spec{Name: p.Name, Image: p.Image, Model: hv.ModelVZ, CPUs: p.CPUs, MemoryMiB: p.MemoryMiB,
		Accel: qemu.AccelTCG, StateDir: dir}
	m, err := qemu.New(qemu.Options{CacheDir: t.TempDir(), VhostVsockDirs: testvm.VhostVsockDirs()}).Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	st, err := qemu.ReadState(dir)
	pids := map[int]string{m.Info().PID: "qemu-system-aarch64"}
	if err == nil {
		pids[st.VsockDaemonPID] = qemu.VhostVsockName
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = m.Stop(sctx)
		for pid, name := range pids {
			killIfStill(pid, name)
		}
	})
	if err != nil {
		return nil, err
	}
	vm := &hybridVM{m: m, state: st, console: m.Info().ConsoleLog}
	vm.conns = newConnector(ignoresStop(vm.dial))
	return vm, nil
}

// killIfStill kills pid when it is still a live process running name.
func killIfStill(pid int, name string) {
	if pid <= 0 {
		return
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return
	}
	argv0, _, _ := strings.Cut(string(cmdline), "\x00")
	if filepath.Base(argv0) == name {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// agentInfo asks the agent behind the unix socket path for its Info.
func agentInfo(ctx context.Context, path string) (*agentpb.InfoReply, error) {
	c, err := agent.NewClient(func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Info(ctx)
}

// The host's agent socket carries gRPC sessions to the guest's agent
// through the hybrid vsock; a client that half-closes after its request
// gets the answer (the proxy cannot pass the half-close on to vz's
// connection, and must not close both ends instead); a connection to a
// port nothing listens on fails at once and leaves no attempt in flight;
// and a stop goes through the agent, whose Shutdown powers the guest off.
func TestHybridVsockHost(t *testing.T) {
	img := hybridImage(t)
	hh := openHybridHost(t, img, agent.ShutdownOver)
	h, vm := hh.h, hh.vm

	t.Run("half-closed request", func(t *testing.T) {
		c, err := net.Dial("unix", h.plan.AgentSocket)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(time.Minute)))
		uc := c.(*net.UnixConn)
		require.NoError(t, writeInfoRequest(uc))
		require.NoError(t, uc.CloseWrite(), "the client is done sending")
		r, status, err := readInfoAnswer(uc)
		require.NoError(t, err)
		assert.Equal(t, "0", status, "grpc-status")
		assert.Equal(t, "arm64", r.GetArch())
		assert.EqualValues(t, version.ProtocolMajor, r.GetProtocol().GetMajor())
	})

	t.Run("the guest's ends are vz's connection type", func(t *testing.T) {
		handed := vm.handedOut()
		require.NotEmpty(t, handed)
		for _, c := range handed {
			assert.IsType(t, &vzSocketConn{}, c)
			_, ok := c.(closeWriter)
			assert.False(t, ok, "vz's connection cannot be half-closed")
		}
	})

	t.Run("connect to a port nothing listens on", func(t *testing.T) {
		// Bounded so that a hang fails rather than stalls; the refusal
		// comes long before.
		ctx, cancel := context.WithTimeout(context.Background(), hybridDialBound)
		defer cancel()
		asked := time.Now()
		_, err := vm.Connect(ctx, unlistenedPort)
		took := time.Since(asked)
		t.Logf("a connection to vsock port %d, where nothing listens, failed in %.0f ms", unlistenedPort, took.Seconds()*1000)
		require.Error(t, err)
		assert.ErrorIs(t, err, transport.ErrHybridVsockRefused, "refused by the guest, not left waiting")
		assert.NoError(t, ctx.Err(), "it did not wait out its bound")
		assert.Contains(t, err.Error(), fmt.Sprintf("vsock port %d", unlistenedPort))
		assertNoneLeftInFlight(t, vm)

		// connectRetry goes on from a refused attempt to one that
		// reaches the agent, over the same device.
		var ports []uint32
		g, err := connectRetry(ctx, func(ctx context.Context) (net.Conn, error) {
			port := uint32(unlistenedPort)
			if len(ports) > 0 {
				port = h.plan.AgentPort
			}
			ports = append(ports, port)
			return vm.Connect(ctx, port)
		})
		require.NoError(t, err)
		assert.Equal(t, []uint32{unlistenedPort, h.plan.AgentPort}, ports)
		assertNoneLeftInFlight(t, vm)
		c, err := agent.NewClient(agent.DialOnce(g))
		require.NoError(t, err)
		defer c.Close()
		r, err := c.Info(ctx)
		require.NoError(t, err, "the agent over the retried connection")
		assert.Equal(t, "arm64", r.GetArch())
	})

	t.Run("stop through the agent", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), agentStopReach+hybridGrace+forceStopTimeout)
		defer cancel()
		asked := time.Now()
		require.NoError(t, h.stop(ctx))
		t.Logf("stopped through the agent: the VM ended %.2f s after the stop began", time.Since(asked).Seconds())
		requireEnded(t, h)
		assert.NoError(t, h.Err())
		assert.NoError(t, vm.Err(), "QEMU ended as the guest powered off (guest-shutdown), not killed")
		assert.Zero(t, vm.requests.Load(), "no power button")
		assert.Zero(t, vm.forced.Load(), "no forced stop")
		// The host logs that it asked, unless the guest was gone before
		// the agent's answer was read.
		logs := hh.log.String()
		assert.NotContains(t, logs, "power button")
		assert.NotContains(t, logs, "by force")
		console := readText(vm.console)
		assert.Contains(t, console, "qoslab-agent: powering off")
		assert.NoFileExists(t, h.plan.AgentSocket, "the host let its agent socket go")
	})
}

// The stop's fallback: an agent that cannot be asked (here its AgentStop
// fails after reaching it) leaves the power button, system_powerdown,
// which the guest's init answers by powering off: no forced stop.
func TestHybridVsockStopFallsBackToThePowerButton(t *testing.T) {
	img := hybridImage(t)
	var agentStops atomic.Int32
	refuse := func(ctx context.Context, c net.Conn) error {
		agentStops.Add(1)
		_ = c.Close()
		return errors.New("this agent does not power off (the test's)")
	}
	hh := openHybridHost(t, img, refuse)
	h, vm := hh.h, hh.vm

	ctx, cancel := context.WithTimeout(context.Background(), agentStopReach+hybridGrace+forceStopTimeout)
	defer cancel()
	asked := time.Now()
	require.NoError(t, h.stop(ctx))
	t.Logf("stopped with the power button: the VM ended %.2f s after the stop began", time.Since(asked).Seconds())
	requireEnded(t, h)
	assert.Equal(t, int32(1), agentStops.Load(), "the agent was reached and asked first")
	assert.Equal(t, int32(1), vm.requests.Load(), "the power button, once")
	assert.Zero(t, vm.forced.Load(), "no forced stop")
	assert.NoError(t, h.Err())
	assert.NoError(t, vm.Err(), "QEMU ended as the guest powered off (guest-shutdown), not killed")
	logs := hh.log.String()
	assert.Contains(t, logs, "this agent does not power off (the test's)): pressing the power button")
	assert.NotContains(t, logs, "by force")
	console := readText(vm.console)
	assert.Contains(t, console, "pressed: stopping the agent, then powering off")
	assert.Contains(t, console, "qoslab-agent: powering off")
}

func requireEnded(t *testing.T, h *host) {
	t.Helper()
	select {
	case <-h.Done():
	default:
		t.Fatal("stop returned with the VM still running")
	}
}

// writeInfoRequest writes an HTTP/2 connection preface and one gRPC Info
// call, its request ending the stream, as a gRPC client would; nothing else
// is written, so the connection can be half-closed after it.
func writeInfoRequest(w io.Writer) error {
	if _, err := io.WriteString(w, http2.ClientPreface); err != nil {
		return err
	}
	fr := http2.NewFramer(w, nil)
	if err := fr.WriteSettings(); err != nil {
		return err
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":path", agentpb.Agent_Info_FullMethodName},
		{":authority", "qoslab-agent"}, {"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			return err
		}
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		return err
	}
	msg, err := proto.Marshal(&agentpb.InfoRequest{Protocol: agent.Protocol()})
	if err != nil {
		return err
	}
	// gRPC's message framing: not compressed, then the length.
	data := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
	return fr.WriteData(1, true, append(data, msg...))
}

// readInfoAnswer reads the agent's answer to writeInfoRequest, up to the
// end of its stream: the reply and the trailers' grpc-status.
func readInfoAnswer(r io.Reader) (*agentpb.InfoReply, string, error) {
	fr := http2.NewFramer(nil, r)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var data []byte
	status := ""
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return nil, "", fmt.Errorf("read the answer (%d bytes of data so far): %w", len(data), err)
		}
		switch f := f.(type) {
		case *http2.DataFrame:
			data = append(data, f.Data()...)
		case *http2.MetaHeadersFrame:
			if v := f.PseudoValue("status"); v != "" && v != "200" {
				return nil, "", fmt.Errorf("HTTP status %s", v)
			}
			for _, hf := range f.RegularFields() {
				if hf.Name == "grpc-status" {
					status = hf.Value
				}
			}
			if f.StreamEnded() {
				if len(data) < 5 || int(binary.BigEndian.Uint32(data[1:5])) != len(data)-5 {
					return nil, status, fmt.Errorf("the answer's data is not one gRPC message: % x", data)
				}
				var reply agentpb.InfoReply
				if err := proto.Unmarshal(data[5:], &reply); err != nil {
					return nil, status, err
				}
				return &reply, status, nil
			}
		case *http2.RSTStreamFrame:
			return nil, "", fmt.Errorf("the stream was reset: %v", f.ErrCode)
		case *http2.GoAwayFrame:
			return nil, "", fmt.Errorf("the agent went away: %v", f.ErrCode)
		}
	}
}

// hybridImage builds linux-arm64 with this checkout's agent from the
// Debian kernel the set-up fetched. It skips without what the vz model
// needs (qemu-system-aarch64, vhost-device-vsock, the kernel), or fails
// with QOSLAB_REQUIRE_VM=1, as CI sets.
func hybridImage(t *testing.T) hv.Image {
	t.Helper()
	testvm.Slow(t, "boots a real guest")
	missing := func(why string) { testvm.Missing(t, why, "run scripts/setup.sh and make test-deps") }
	if _, err := exec.LookPath("qemu-system-aarch64"); err != nil {
		missing("no qemu-system-aarch64")
	}
	if _, _, err := qemu.New(qemu.Options{VhostVsockDirs: testvm.VhostVsockDirs()}).FindVhostVsock(context.Background()); err != nil {
		missing(err.Error())
	}
	kernels, err := image.DefaultKernelCacheDir(os.Getenv)
	require.NoError(t, err)
	if _, err := image.LocateKernel(image.DefaultRecipe(), image.LocateOptions{Arch: "arm64", KernelCacheDir: kernels}); err != nil {
		missing("no arm64 Debian kernel: " + err.Error())
	}
	dir := t.TempDir()
	agentBin := filepath.Join(dir, "qoslab-agent")
	build := exec.Command("go", "build", "-o", agentBin, "../../../guest/agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build the arm64 agent: %s", out)
	store := filepath.Join(dir, "images")
	_, err = image.Build(context.Background(), image.BuildOptions{
		Recipe: image.DefaultRecipe(), Arch: "arm64", AgentPath: agentBin, StoreDir: store, KernelCacheDir: kernels,
	})
	require.NoError(t, err)
	img, _, err := image.Load(store, image.DefaultRecipe().ImageName("arm64"))
	require.NoError(t, err)
	return img
}

// shortDir is a temporary directory short enough for unix sockets.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "qoslab-vz-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func readText(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// lockedBuffer is a log's buffer, read while the host writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// assertNoneLeftInFlight asserts that vm's connector has no attempt left
// in flight for good. An attempt that passed its deadline (firstAttempt)
// on a slow or busy host is abandoned but stays in flight until the
// guest's late answer, so this waits a bounded time for those answers.
func assertNoneLeftInFlight(t *testing.T, vm *hybridVM) {
	t.Helper()
	if n := vm.conns.parked(); n > 0 {
		t.Logf("%d attempts still in flight; waiting for the guest's late answers", n)
	}
	assert.Eventually(t, func() bool { return !vm.inFlight() }, time.Minute, 10*time.Millisecond,
		"no attempt left in flight")
}
