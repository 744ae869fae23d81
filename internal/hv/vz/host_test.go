package vz

import (
	"bytes"
	"context"
	"errors"
	"github.com/qoslab/qoslab/internal/guestchan"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
)

// waitBound bounds waits for things that happen at once unless broken: a
// bound for a failing test, not a timing goal.
const waitBound = 20 * time.Second

// echoes checks that what is written to c comes back.
func echoes(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(waitBound)))
	go func() { _, _ = c.Write([]byte(msg)) }()
	got := make([]byte, len(msg))
	_, err := io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, msg, string(got))
}

// echoReady is a Ready that checks the agent echoes.
func echoReady(t *testing.T) func(ctx context.Context, m hv.Machine) error {
	return func(ctx context.Context, m hv.Machine) error {
		c, err := m.DialAgent(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		echoes(t, c, "ready?")
		return nil
	}
}

func waitDone(t *testing.T, m hv.Machine) {
	t.Helper()
	select {
	case <-m.Done():
	case <-time.After(waitBound):
		t.Fatalf("VM %s did not end", m.Info().Name)
	}
}

func unixPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	require.NoError(t, err)
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	client, err = net.Dial("unix", l.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server)
	return client, server
}

// The stop sequence, in the order its steps reach the VM: the guest's
// agent first, the power button only when the agent cannot be reached,
// force last.
func TestStopInstance(t *testing.T) {
	port := uint32(guestchan.VsockPort)
	failingStop := func(context.Context, net.Conn) error { return errors.New("agent: unknown method") }
	cases := []struct {
		name      string
		vm        func() *fakeVM
		agentStop AgentStop
		ctx       func() context.Context
		forced    bool // the VM ends by force: the grace is short
		want      []string
	}{
		{name: "the agent powers the guest off", vm: func() *fakeVM { return newFakeVM(port, 0) }, agentStop: fakeAgentStop,
			want: []string{"connect", "agent power-off"}},
		{name: "the agent answers but the guest stays up", vm: func() *fakeVM {
			vm := newFakeVM(port, 0)
			vm.agentStays = true
			return vm
		}, agentStop: fakeAgentStop, forced: true,
			// No power button once the agent was asked: in macOS it opens a dialog.
			want: []string{"connect", "agent power-off", "forced stop"}},
		{name: "no agent listens: the power button", vm: func() *fakeVM { return newFakeVM(port, 1<<20) }, agentStop: fakeAgentStop,
			want: []string{"power button"}},
		{name: "the agent refuses: the power button", vm: func() *fakeVM { return newFakeVM(port, 0) }, agentStop: failingStop,
			want: []string{"connect", "power button"}},
		{name: "no agent to ask", vm: func() *fakeVM { return newFakeVM(port, 0) }, want: []string{"power button"}},
		{name: "the guest ignores the power button", vm: func() *fakeVM {
			vm := newFakeVM(port, 1<<20)
			vm.ignoreStop = true
			return vm
		}, agentStop: fakeAgentStop, forced: true, want: []string{"power button", "forced stop"}},
		{name: "the power button cannot be pressed", vm: func() *fakeVM {
			vm := newFakeVM(port, 0)
			vm.requestErr = errors.New("the VM is starting")
			return vm
		}, forced: true, want: []string{"power button", "forced stop"}},
		{name: "no time left", vm: func() *fakeVM {
			vm := newFakeVM(port, 0)
			vm.ignoreStop = true
			return vm
		}, agentStop: fakeAgentStop, ctx: cancelled, want: []string{"power button", "forced stop"}},
		{name: "already stopped", vm: func() *fakeVM {
			vm := newFakeVM(port, 0)
			vm.end(nil)
			return vm
		}, agentStop: fakeAgentStop, want: nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vm := c.vm()
			var log bytes.Buffer
			logger := discardLogger()
			logger.SetOutput(&log)
			times := stopTimes{reach: 300 * time.Millisecond, grace: waitBound, force: waitBound}
			if c.forced {
				times.grace = time.Millisecond
			}
			ctx := context.Background()
			if c.ctx != nil {
				ctx = c.ctx()
			}
			require.NoError(t, stopInstance(ctx, vm, port, c.agentStop, times, logger))
			waitDone(t, vmMachine{vm})
			assert.Equal(t, c.want, vm.history(), "what reached the VM, in order")
			if c.forced {
				assert.Contains(t, log.String(), "stopping it by force")
			}
		})
	}
}

// vmMachine lets waitDone wait for a fakeVM.
type vmMachine struct{ *fakeVM }

func (vmMachine) DialAgent(context.Context) (net.Conn, error) {
	return nil, errors.New("not a machine")
}
func (vmMachine) Info() hv.MachineInfo       { return hv.MachineInfo{Name: "fake"} }
func (vmMachine) Stop(context.Context) error { return nil }

// stuckVM never stops, even by force.
type stuckVM struct{ *fakeVM }

func (stuckVM) ForceStop(ctx context.Context) error { return errors.New("refused") }

func TestStopInstanceReportsAStuckVM(t *testing.T) {
	vm := newFakeVM(uint32(guestchan.VsockPort), 0)
	vm.ignoreStop = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := stopInstance(ctx, stuckVM{vm}, vm.port, fakeAgentStop, stopTimes{reach: time.Millisecond, grace: time.Millisecond, force: time.Millisecond}, discardLogger())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "forced stop: refused")
}

func newTestBackend(fp *fakePlatform) *Backend {
	return &Backend{platform: fp.platform()}
}

func TestStartLocalThenAttachAndStop(t *testing.T) {
	ctx := context.Background()
	fp := &fakePlatform{lim: testLimits, refuse: 3}
	b := newTestBackend(fp)
	dir := t.TempDir()
	var log bytes.Buffer
	img := linuxImage(t)
	m, err := b.Start(ctx, hv.Spec{Name: "lab", Image: img, CPUs: 2, MemoryMiB: 512, DiskBytes: 3 << 20,
		StateDir: dir, Log: &log, Ready: echoReady(t)})
	require.NoError(t, err)

	info := m.Info()
	assert.Equal(t, "vz", info.Backend)
	assert.Equal(t, "vz", info.Accel)
	assert.Equal(t, "lab", info.Name)
	assert.Equal(t, os.Getpid(), info.PID, "a VM that is not detached lives in this process")
	assert.Equal(t, 2, info.CPUs)
	assert.Equal(t, 512, info.MemoryMiB)
	assert.Equal(t, filepath.Join(dir, consoleLogFile), info.ConsoleLog)
	assert.Equal(t, filepath.Join(dir, scratchDiskFile), info.Disk)
	assert.Equal(t, "/dev/vda", info.GuestDisk)
	assert.Positive(t, info.BootNs)
	assert.Equal(t, img, info.Image)

	st, err := os.Stat(filepath.Join(dir, scratchDiskFile))
	require.NoError(t, err)
	assert.Equal(t, int64(3<<20), st.Size())
	_, err = os.Stat(info.ConsoleLog)
	assert.NoError(t, err, "the console log is made for the boot")
	require.Len(t, fp.plans, 1)
	assert.Equal(t, img.UncompressedKernel, fp.plans[0].Kernel, "the kernel is booted uncompressed, as the image build wrote it")

	s, err := readState(dir)
	require.NoError(t, err)
	assert.Equal(t, phaseRunning, s.Phase)
	assert.False(t, s.Detached)
	assert.Equal(t, os.Getpid(), s.Info.PID)
	assert.Equal(t, info.BootNs, s.Info.BootNs)

	c, err := m.DialAgent(ctx)
	require.NoError(t, err)
	echoes(t, c, "direct")
	require.NoError(t, c.Close())

	// Another controller attaches through the state directory.
	attached, err := newTestBackend(fp).Attach(ctx, dir)
	require.NoError(t, err)
	assert.Zero(t, attached.Info().BootNs)
	assert.Equal(t, os.Getpid(), attached.Info().PID)
	c, err = attached.DialAgent(ctx)
	require.NoError(t, err)
	echoes(t, c, "through agent.sock")
	require.NoError(t, c.Close())

	_, err = b.Start(ctx, hv.Spec{Image: img, StateDir: dir})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already running")

	require.NoError(t, m.Stop(ctx))
	waitDone(t, m)
	assert.NoError(t, m.Err())
	assert.Equal(t, int32(1), fp.vm(0).requests.Load(), "the guest was asked to power off")
	assert.Zero(t, fp.vm(0).forced.Load())
	waitDone(t, attached)
	assert.NoError(t, attached.Err(), "a stop is clean for every controller")

	_, err = os.Stat(filepath.Join(dir, agentSocketFile))
	assert.ErrorIs(t, err, os.ErrNotExist)
	s, err = readState(dir)
	require.NoError(t, err)
	assert.Equal(t, phaseEnded, s.Phase)
	assert.Empty(t, s.EndError)
	_, err = b.Attach(ctx, dir)
	assert.ErrorContains(t, err, "it is not running")
	_, err = m.DialAgent(ctx)
	assert.ErrorContains(t, err, "the VM has ended")
	require.NoError(t, m.Stop(ctx), "stopping a stopped VM does nothing")
}

func TestLocalVMEnds(t *testing.T) {
	cases := []struct {
		name string
		why  error
		want string
	}{
		{"the guest powers off", nil, ""},
		{"the VM fails", errors.New("Virtualization.framework put the VM in its error state"), "error state"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			fp := &fakePlatform{lim: testLimits}
			dir := t.TempDir()
			m, err := newTestBackend(fp).Start(ctx, hv.Spec{Image: linuxImage(t), StateDir: dir})
			require.NoError(t, err)
			attached, err := newTestBackend(fp).Attach(ctx, dir)
			require.NoError(t, err)

			fp.vm(0).end(c.why)
			waitDone(t, m)
			waitDone(t, attached)
			s, err := readState(dir)
			require.NoError(t, err)
			assert.Equal(t, phaseEnded, s.Phase)
			if c.want == "" {
				assert.NoError(t, m.Err())
				assert.NoError(t, attached.Err())
				assert.Empty(t, s.EndError)
				return
			}
			assert.ErrorContains(t, m.Err(), c.want)
			assert.ErrorContains(t, attached.Err(), c.want)
			assert.Contains(t, s.EndError, c.want)
		})
	}
}

func TestStartFailuresReleaseTheStateDirectory(t *testing.T) {
	ctx := context.Background()
	t.Run("boot fails", func(t *testing.T) {
		fp := &fakePlatform{lim: testLimits, bootErr: errors.New("Virtualization.framework refuses the VM's configuration")}
		dir := t.TempDir()
		_, err := newTestBackend(fp).Start(ctx, hv.Spec{Image: linuxImage(t), StateDir: dir})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "refuses the VM's configuration")
		held, err := running(dir)
		require.NoError(t, err)
		assert.False(t, held)
	})
	t.Run("the agent never answers", func(t *testing.T) {
		fp := &fakePlatform{lim: testLimits}
		dir := t.TempDir()
		_, err := newTestBackend(fp).Start(ctx, hv.Spec{Image: linuxImage(t), StateDir: dir,
			Ready: func(ctx context.Context, m hv.Machine) error { return errors.New("no answer") }})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no answer")
		select {
		case <-fp.vm(0).Done():
		default:
			t.Fatal("the VM was left running")
		}
		held, err := running(dir)
		require.NoError(t, err)
		assert.False(t, held)
	})
	t.Run("bad spec writes nothing", func(t *testing.T) {
		fp := &fakePlatform{lim: testLimits}
		dir := filepath.Join(t.TempDir(), "vm")
		_, err := newTestBackend(fp).Start(ctx, hv.Spec{Image: linuxImage(t), CPUs: 99, StateDir: dir})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "99 vCPUs is outside the allowed range: want 1 to 8")
		_, err = os.Stat(dir)
		assert.ErrorIs(t, err, os.ErrNotExist)
		assert.Empty(t, fp.booted)
	})
}

func TestOneBundleOneVM(t *testing.T) {
	ctx := context.Background()
	bundle := makeTestBundle(t)
	fp := &fakePlatform{lim: testLimits}
	b := newTestBackend(fp)
	first, err := b.Start(ctx, hv.Spec{Image: bundle.Image(), StateDir: t.TempDir()})
	require.NoError(t, err)
	info := first.Info()
	assert.Equal(t, 4, info.CPUs)
	assert.Equal(t, filepath.Join(info.StateDir, hostLogFile), info.ConsoleLog, "a macOS guest's log is the host's")
	assert.Empty(t, info.Disk)

	second := t.TempDir()
	_, err = b.Start(ctx, hv.Spec{Image: bundle.Image(), StateDir: second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is in use by another running VM")
	held, err := running(second)
	require.NoError(t, err)
	assert.False(t, held)

	require.NoError(t, first.Stop(ctx))
	again, err := b.Start(ctx, hv.Spec{Image: bundle.Image(), StateDir: second})
	require.NoError(t, err, "the bundle is free once its VM stopped")
	require.NoError(t, again.Stop(ctx))
}

func TestHostMainRefusesAStateNotStarting(t *testing.T) {
	dir := t.TempDir()
	p, err := planVM(hv.Spec{Image: linuxImage(t), StateDir: dir}, testLimits)
	require.NoError(t, err)
	require.NoError(t, writeState(dir, state{Info: hv.MachineInfo{Backend: backendName}, Phase: phaseEnded, Plan: p}))
	boot := func(context.Context, plan, *log.Logger) (instance, error) {
		t.Fatal("booted")
		return nil, nil
	}
	err = hostMain(context.Background(), dir, boot, fakeAgentStop, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not waiting to start")

	err = hostMain(context.Background(), t.TempDir(), boot, fakeAgentStop, io.Discard)
	assert.ErrorContains(t, err, "no VM was started there")
}

// detachedBackend starts vz hosts as this test binary, which runs hostMain
// with fake guests (see TestMain).
func detachedBackend(t *testing.T, fp *fakePlatform) *Backend {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(testHostEnv, "1")
	return &Backend{opts: Options{Executable: exe, HostArgs: []string{"vzhost"}}, platform: fp.platform()}
}

func TestDetachedStartAttachStop(t *testing.T) {
	ctx := context.Background()
	fp := &fakePlatform{lim: testLimits}
	b := detachedBackend(t, fp)
	t.Setenv(testHostRefuseEnv, "5")
	dir := t.TempDir()
	m, err := b.Start(ctx, hv.Spec{Name: "lab", Image: linuxImage(t), StateDir: dir, Detach: true, Ready: echoReady(t)})
	require.NoError(t, err)
	pid := m.Info().PID
	assert.NotEqual(t, os.Getpid(), pid, "a detached VM lives in its own host process")
	assert.Positive(t, m.Info().BootNs)
	s, err := readState(dir)
	require.NoError(t, err)
	assert.True(t, s.Detached)
	assert.Equal(t, phaseRunning, s.Phase)
	assert.Equal(t, pid, s.Info.PID)

	attached, err := b.Attach(ctx, dir)
	require.NoError(t, err)
	c, err := attached.DialAgent(ctx)
	require.NoError(t, err)
	echoes(t, c, "hello from another controller")
	require.NoError(t, c.Close())

	require.NoError(t, m.Stop(ctx))
	waitDone(t, m)
	assert.NoError(t, m.Err())
	waitDone(t, attached)
	assert.NoError(t, attached.Err())
	s, err = readState(dir)
	require.NoError(t, err)
	assert.Equal(t, phaseEnded, s.Phase)
	logText, err := os.ReadFile(filepath.Join(dir, hostLogFile))
	require.NoError(t, err)
	assert.Contains(t, string(logText), "asked to stop the VM")
}

func TestDetachedHostKilled(t *testing.T) {
	ctx := context.Background()
	fp := &fakePlatform{lim: testLimits}
	b := detachedBackend(t, fp)
	dir := t.TempDir()
	m, err := b.Start(ctx, hv.Spec{Name: "lab", Image: linuxImage(t), StateDir: dir, Detach: true})
	require.NoError(t, err)
	attached, err := b.Attach(ctx, dir)
	require.NoError(t, err)

	require.NoError(t, syscall.Kill(m.Info().PID, syscall.SIGKILL))
	waitDone(t, m)
	waitDone(t, attached)
	for _, mm := range []hv.Machine{m, attached} {
		require.Error(t, mm.Err())
		assert.Contains(t, mm.Err().Error(), "ended without saying why")
	}
	_, err = b.Attach(ctx, dir)
	assert.ErrorContains(t, err, "it is not running")

	// The next start clears what the killed host left.
	m, err = b.Start(ctx, hv.Spec{Name: "lab", Image: linuxImage(t), StateDir: dir, Detach: true, Ready: echoReady(t)})
	require.NoError(t, err)
	require.NoError(t, m.Stop(ctx))
}

func TestDetachedHostFailsToBoot(t *testing.T) {
	fp := &fakePlatform{lim: testLimits}
	b := detachedBackend(t, fp)
	t.Setenv(testHostBootErrEnv, "the framework refused: no entitlement")
	dir := t.TempDir()
	_, err := b.Start(context.Background(), hv.Spec{Image: linuxImage(t), StateDir: dir, Detach: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the vz host exited before the VM ran")
	assert.Contains(t, err.Error(), "the framework refused: no entitlement")
	held, err := running(dir)
	require.NoError(t, err)
	assert.False(t, held)
}

// A bundle made before bundles kept a MAC address gets one on its first
// boot, written once; every boot uses the bundle's, and the bundle stays
// locked while its config.json is replaced.
func TestBootUsesTheBundlesMAC(t *testing.T) {
	ctx := context.Background()
	bundle := makeTestBundle(t)
	editConfig("mac_address", nil)(t, bundle)
	editConfig("schema_version", "1.0")(t, bundle)
	old, err := OpenBundle(bundle.Dir)
	require.NoError(t, err)
	require.Empty(t, old.Config.MACAddress)

	fp := &fakePlatform{lim: testLimits}
	b := newTestBackend(fp)
	first, err := b.Start(ctx, hv.Spec{Image: bundle.Image(), StateDir: t.TempDir()})
	require.NoError(t, err)
	written, err := OpenBundle(bundle.Dir)
	require.NoError(t, err)
	mac := written.Config.MACAddress
	require.NoError(t, checkMAC(mac))
	assert.Equal(t, bundleSchema, written.Config.SchemaVersion)
	written.Config.MACAddress, written.Config.SchemaVersion = "", old.Config.SchemaVersion
	assert.Equal(t, old.Config, written.Config, "nothing else changed")
	assert.Equal(t, mac, fp.plans[0].MACAddress, "the boot used the MAC it wrote")
	s, err := readState(first.Info().StateDir)
	require.NoError(t, err)
	assert.Equal(t, mac, s.Plan.MACAddress, "vm.json says which")

	// The new config.json is locked as the old one was.
	_, err = lockExclusive(bundle.Path(BundleConfigFile), false)
	assert.ErrorIs(t, err, errLocked)
	_, err = b.Start(ctx, hv.Spec{Image: bundle.Image(), StateDir: t.TempDir()})
	assert.ErrorContains(t, err, "is in use by another running VM")
	require.NoError(t, first.Stop(ctx))

	again, err := b.Start(ctx, hv.Spec{Image: bundle.Image(), StateDir: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, again.Stop(ctx))
	require.Len(t, fp.plans, 2)
	assert.Equal(t, mac, fp.plans[1].MACAddress, "the same MAC on the next boot")
	kept, err := OpenBundle(bundle.Dir)
	require.NoError(t, err)
	assert.Equal(t, mac, kept.Config.MACAddress)
}

// The service process found at boot is in the machine's Info, for the
// controller that started the VM and for one that attaches; when it was
// not found, why.
func TestServiceProcessInMachineInfo(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		pid  int
		err  error
	}{
		{"found", 4242, nil},
		{"not found", 0, errors.New("no new com.apple.Virtualization.VirtualMachine process of uid 501 appeared when the VM started")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := &fakePlatform{lim: testLimits, servicePID: tc.pid, serviceErr: tc.err}
			dir := t.TempDir()
			m, err := newTestBackend(fp).Start(ctx, hv.Spec{Name: "svc", Image: linuxImage(t), StateDir: dir, Ready: echoReady(t)})
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Stop(ctx) })
			attached, err := newTestBackend(fp).Attach(ctx, dir)
			require.NoError(t, err)
			for _, info := range []hv.MachineInfo{m.Info(), attached.Info()} {
				assert.Equal(t, tc.pid, info.ServicePID)
				if tc.err != nil {
					assert.Equal(t, tc.err.Error(), info.ServiceError)
				} else {
					assert.Empty(t, info.ServiceError)
				}
			}
		})
	}
}
