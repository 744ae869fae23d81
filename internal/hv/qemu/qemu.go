// Package qemu boots qoslab's guest images with QEMU: KVM when a probe boot
// reaches the agent, hvf on macOS, TCG otherwise.
package qemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/hv"
)

// defaultProbeTimeout is how long a KVM probe boot has to reach the agent:
// a KVM boot of the Debian kernel reaches it in about a second, while a
// nested KVM that hangs never does.
const defaultProbeTimeout = 15 * time.Second

// qmpConnectTimeout bounds waiting for QEMU's QMP socket after starting
// it, which takes well under a second unless the host is very busy.
const qmpConnectTimeout = 15 * time.Second

// Options configure the backend.
type Options struct {
	// QEMUAMD64 and QEMUARM64 are the system emulators for amd64 and arm64
	// images: a path, or a name looked up in PATH. Empty means
	// qemu-system-x86_64 and qemu-system-aarch64.
	QEMUAMD64 string
	QEMUARM64 string
	// CacheDir remembers failed KVM probes (probeFailuresFile). Empty means
	// qoslab's directory in the user cache directory; if there is none,
	// failures are not remembered and every start with KVM probes.
	CacheDir string
	// ProbeTimeout bounds a KVM probe boot; 0 means defaultProbeTimeout.
	ProbeTimeout time.Duration
	// VhostVsock is rust-vmm's vhost-device-vsock, the vz model's vsock
	// device: a path, or a name looked up in PATH and then in
	// VhostVsockDirs. Empty means VhostVsockName.
	VhostVsock string
	// VhostVsockDirs are searched for VhostVsock after PATH: cargo's bin
	// directory (config.CargoBin), where `cargo install` puts it and which
	// a non-login shell's PATH may lack.
	VhostVsockDirs []string
}

// Backend boots VMs with QEMU.
type Backend struct {
	opts Options
}

var _ hv.Backend = (*Backend)(nil)

// New returns a QEMU backend.
func New(o Options) *Backend {
	if o.QEMUAMD64 == "" {
		o.QEMUAMD64 = "qemu-system-x86_64"
	}
	if o.QEMUARM64 == "" {
		o.QEMUARM64 = "qemu-system-aarch64"
	}
	if o.CacheDir == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			o.CacheDir = filepath.Join(dir, "qoslab")
		}
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = defaultProbeTimeout
	}
	if o.VhostVsock == "" {
		o.VhostVsock = VhostVsockName
	}
	return &Backend{opts: o}
}

// Name is the backend's name in flags and results.
func (b *Backend) Name() string { return Name }

// failuresFile is where failed KVM probes are remembered, "" for nowhere.
func (b *Backend) failuresFile() string {
	if b.opts.CacheDir == "" {
		return ""
	}
	return filepath.Join(b.opts.CacheDir, probeFailuresFile)
}

// binaryName is the emulator configured for images of arch.
func (b *Backend) binaryName(arch string) string {
	if arch == "arm64" {
		return b.opts.QEMUARM64
	}
	return b.opts.QEMUAMD64
}

// installHint says how to get the emulator for images of arch.
func installHint(arch string) string {
	if runtime.GOOS == "darwin" {
		return "brew install qemu"
	}
	if arch == "arm64" {
		return "sudo apt-get install qemu-system-arm"
	}
	return "sudo apt-get install qemu-system-x86"
}

// findQEMU returns the emulator's path and version line.
func (b *Backend) findQEMU(ctx context.Context, arch string) (path, version string, err error) {
	name := b.binaryName(arch)
	path, err = exec.LookPath(name)
	if err != nil {
		return "", "", fmt.Errorf("%s, QEMU's emulator for %s guests, is not installed: %s (or your distribution's QEMU package)", name, arch, installHint(arch))
	}
	out, err := versionOutput(ctx, path)
	if err != nil {
		return "", "", err
	}
	version, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	return path, version, nil
}

// versionTimeout bounds a `--version` that does not answer.
const versionTimeout = 10 * time.Second

// versionOutput runs `path --version`. A ctx cancelled meanwhile (an
// interrupt) is what the error says and wraps, not the "signal: killed"
// its cancellation gave the child, so the caller reports an interruption
// (experiment.IsInterrupted), not a broken binary; a child that does not
// answer in versionTimeout is said so.
func versionOutput(ctx context.Context, path string) ([]byte, error) {
	vctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(vctx, path, "--version").Output()
	switch {
	case err == nil:
		return out, nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s --version: %w", path, ctx.Err())
	case vctx.Err() != nil:
		return nil, fmt.Errorf("%s --version: no answer within %s", path, versionTimeout)
	}
	return nil, fmt.Errorf("%s --version: %w", path, err)
}

// request is a checked spec with what does not depend on the accelerator
// resolved.
type request struct {
	spec        hv.Spec
	name        string
	arch        string
	stateDir    string
	qemu        string
	qemuVersion string
	log         io.Writer
	// model is the device model: hv.ModelDefault or hv.ModelVZ.
	model string
	// vhostVsock is the vz model's vsock daemon and its version.
	vhostVsock, vhostVsockVersion string
}

func (r request) path(file string) string { return filepath.Join(r.stateDir, file) }

// check validates spec and finds what it needs.
func (b *Backend) check(ctx context.Context, spec hv.Spec) (request, error) {
	r := request{spec: spec, name: spec.Name, arch: spec.Image.Arch, log: spec.Log}
	if r.log == nil {
		r.log = io.Discard
	}
	if spec.StateDir == "" {
		return r, errors.New("no state directory for the VM's sockets, logs and disk")
	}
	dir, err := filepath.Abs(spec.StateDir)
	if err != nil {
		return r, fmt.Errorf("state directory %s: %w", spec.StateDir, err)
	}
	r.stateDir = dir
	if r.name == "" {
		r.name = filepath.Base(dir)
	}
	if r.arch == "" {
		r.arch = runtime.GOARCH
	}
	if r.arch != "amd64" && r.arch != "arm64" {
		return r, fmt.Errorf("image %q is for %q: want amd64 or arm64", spec.Image.Name, r.arch)
	}
	if host := runtime.NumCPU(); spec.CPUs < 1 || spec.CPUs > host {
		return r, fmt.Errorf("%d vCPUs: want 1 to %d (this host's CPUs)", spec.CPUs, host)
	}
	if spec.MemoryMiB < 128 {
		return r, fmt.Errorf("%d MiB of memory: want at least 128 MiB", spec.MemoryMiB)
	}
	if spec.DiskBytes < 0 {
		return r, fmt.Errorf("scratch disk of %d bytes: want 0 (none) or more", spec.DiskBytes)
	}
	switch spec.Model {
	case "", hv.ModelDefault:
		r.model = hv.ModelDefault
	case hv.ModelVZ:
		r.model = hv.ModelVZ
	default:
		return r, fmt.Errorf("device model %q: allowed %s", spec.Model, strings.Join(models, ", "))
	}
	for _, f := range []struct{ what, path string }{{"kernel", spec.Image.Kernel}, {"initramfs", spec.Image.Initramfs}} {
		if f.path == "" {
			return r, fmt.Errorf("image %q has no %s: rebuild the image", spec.Image.Name, f.what)
		}
		st, err := os.Stat(f.path)
		if err != nil {
			return r, fmt.Errorf("image %q: %s %w: rebuild the image", spec.Image.Name, f.what, err)
		}
		if !st.Mode().IsRegular() {
			return r, fmt.Errorf("image %q: %s %s is not a file: rebuild the image", spec.Image.Name, f.what, f.path)
		}
	}
	for _, f := range []string{qmpSocketFile, agentSocketFile} {
		if err := checkSocketPath(r.path(f)); err != nil {
			return r, err
		}
	}
	if r.model == hv.ModelVZ {
		if err := b.checkVZModel(ctx, &r); err != nil {
			return r, err
		}
	}
	r.qemu, r.qemuVersion, err = b.findQEMU(ctx, r.arch)
	return r, err
}

// probeKey identifies the boots a failed KVM probe is about.
func (r request) probeKey() probeKey {
	k := probeKey{QEMU: r.qemu, QEMUVersion: r.qemuVersion, HostKernel: hostKernelRelease()}
	k.Kernel, k.KernelSize = kernelKey(r.spec.Image)
	return k
}

// kernelKey is the guest kernel as a failed probe names it: its file name
// and version, and its size.
func kernelKey(img hv.Image) (string, int64) {
	name := filepath.Base(img.Kernel)
	if img.KernelVersion != "" {
		name += " " + img.KernelVersion
	}
	var size int64
	if st, err := os.Stat(img.Kernel); err == nil {
		size = st.Size()
	}
	return name, size
}

// PlanAccel says which accelerator Start would boot spec with, and why,
// without starting anything (for a dry run): QEMU is not run, so a
// remembered KVM probe failure counts when it was for this guest kernel
// and host kernel, whatever QEMU's version.
func (b *Backend) PlanAccel(spec hv.Spec) (accel, why string, err error) {
	arch := spec.Image.Arch
	if arch == "" {
		arch = runtime.GOARCH
	}
	host := accelHost{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, KVMProblem: kvmProblem(), HVFProblem: hvfProblem(),
		FailuresFile: b.failuresFile(), CanProbe: true}
	host.KVMFix = kvmFix(host.KVMProblem)
	if host.FailuresFile != "" && runtime.GOOS == "linux" {
		failures, _ := readProbeFailures(host.FailuresFile)
		kernel, size := kernelKey(spec.Image)
		for _, f := range failures.Failures {
			if f.Kernel == kernel && f.KernelSize == size && f.HostKernel == hostKernelRelease() && time.Since(f.At) < probeFailureTTL {
				host.KVMFailure = &f
			}
		}
	}
	plan, err := planAccel(spec.Accel, arch, host)
	switch {
	case err != nil:
		return "", "", err
	case plan.Probe:
		return accelKVM, fmt.Sprintf("if a probe boot reaches the agent within %s, else %s", b.opts.ProbeTimeout, AccelTCG), nil
	case spec.Accel != "":
		return plan.Accel, "as asked", nil
	case plan.Note != "":
		return plan.Accel, plan.Note, nil
	}
	return plan.Accel, "the best this host has", nil
}

// Start boots spec's VM. With no accelerator asked for on Linux, a KVM
// boot must reach Ready within the probe timeout, or the VM is stopped and
// booted again with TCG; a KVM failure that TCG then boots past is
// remembered for a week (probeFailuresFile in the cache directory), so
// later starts go to TCG at once. Without Ready nothing can tell a hung
// boot from a slow one, so KVM is used unprobed.
//
// A VM that is not detached dies with the controller (on Linux, even one
// killed with SIGKILL); the controller stops it on Ctrl-C and SIGTERM by
// calling Stop, which QEMU's own process group leaves to it.
func (b *Backend) Start(ctx context.Context, spec hv.Spec) (hv.Machine, error) {
	r, err := b.check(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("start VM %s: %w", r.name, err)
	}
	host := accelHost{
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		KVMProblem: kvmProblem(), HVFProblem: hvfProblem(),
		FailuresFile: b.failuresFile(), CanProbe: spec.Ready != nil,
	}
	host.KVMFix = kvmFix(host.KVMProblem)
	failures := probeFailures{}
	if host.FailuresFile != "" && runtime.GOOS == "linux" {
		failures, err = readProbeFailures(host.FailuresFile)
		if err != nil {
			fmt.Fprintln(r.log, err)
		}
		if f, ok := failures.failed(r.probeKey(), time.Now()); ok {
			host.KVMFailure = &f
		}
	}
	plan, err := planAccel(spec.Accel, r.arch, host)
	if err != nil {
		return nil, fmt.Errorf("start VM %s: %w", r.name, err)
	}
	if plan.Note != "" {
		fmt.Fprintln(r.log, plan.Note)
	}
	if r.model == hv.ModelVZ {
		if note := versionNote(r.vhostVsockVersion); note != "" {
			fmt.Fprintln(r.log, note)
		}
	}
	if !plan.Probe {
		m, err := b.bootReady(ctx, r, plan.Accel, 0)
		if err != nil {
			return nil, fmt.Errorf("start VM %s with %s: %w", r.name, plan.Accel, err)
		}
		return m, nil
	}

	m, probeErr := b.bootReady(ctx, r, accelKVM, b.opts.ProbeTimeout)
	if probeErr == nil {
		return m, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("start VM %s: %w", r.name, probeErr)
	}
	reason := fmt.Sprintf("the boot failed: %v", probeErr)
	if errors.Is(probeErr, errNoAgentInTime) {
		reason = fmt.Sprintf("no agent within %s (nested KVM?)", b.opts.ProbeTimeout)
	}
	fmt.Fprintf(r.log, "KVM probe: %s; %s\n", reason, slowTCG)
	// Keep the probe's console for a look at where it stopped.
	_ = os.Rename(r.path(consoleLogFile), r.path(probeConsoleLog))

	m, err = b.bootReady(ctx, r, AccelTCG, 0)
	if err != nil {
		return nil, fmt.Errorf("start VM %s: the KVM probe failed (%s), then TCG failed too: %w", r.name, reason, err)
	}
	if host.FailuresFile != "" {
		failure := probeFailure{probeKey: r.probeKey(), At: time.Now(), Reason: reason}
		if err := writeProbeFailures(host.FailuresFile, failures.record(failure, time.Now())); err != nil {
			fmt.Fprintln(r.log, err)
		} else {
			fmt.Fprintf(r.log, "Remembered in %s for %d days: later starts use TCG at once; delete that file to probe again.\n", host.FailuresFile, probeFailureTTL/(24*time.Hour))
		}
	}
	return m, nil
}

// errNoAgentInTime is a boot that did not reach Ready before its deadline.
var errNoAgentInTime = errors.New("no agent before the deadline")

// bootReady boots with accel and waits for spec.Ready, within timeout if
// it is not 0. A VM that does not get there is stopped.
func (b *Backend) bootReady(ctx context.Context, r request, accel string, timeout time.Duration) (*machine, error) {
	m, started, err := b.boot(ctx, r, accel)
	if err != nil {
		return nil, err
	}
	if r.spec.Ready == nil {
		return m, nil
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, timeout)
	}
	err = hv.AwaitReady(rctx, m, r.spec.Ready, "qemu")
	timedOut := timeout > 0 && errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	if err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), quitTimeout+termTimeout+hv.KillTimeout)
		_ = m.Stop(stopCtx)
		cancel()
		if timedOut {
			err = fmt.Errorf("%w (%s): %w", errNoAgentInTime, timeout, err)
		}
		return nil, &hv.ConsoleError{Err: err, Path: m.consoleNamed(), More: m.daemonSaid()}
	}
	m.mu.Lock()
	m.info.BootNs = time.Since(started).Nanoseconds()
	m.state.Info = m.info
	s := m.state
	m.mu.Unlock()
	if err := writeState(r.stateDir, s); err != nil {
		_ = m.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	return m, nil
}

// boot starts QEMU with accel, connects to QMP and reads the vCPU
// threads. It returns when QEMU has started, with the time it was started.
func (b *Backend) boot(ctx context.Context, r request, accel string) (*machine, time.Time, error) {
	if err := os.MkdirAll(r.stateDir, 0o700); err != nil {
		return nil, time.Time{}, fmt.Errorf("state directory: %w", err)
	}
	if old, err := ReadState(r.stateDir); err == nil && old.Running() {
		return nil, time.Time{}, fmt.Errorf("VM %s is already running in %s (qemu pid %d): stop it first", old.Info.Name, r.stateDir, old.Info.PID)
	}
	l, err := r.launch(accel)
	if err != nil {
		return nil, time.Time{}, err
	}
	args, err := commandLine(l)
	if err != nil {
		return nil, time.Time{}, err
	}
	var daemon *vsockDaemon
	if l.Model == hv.ModelVZ {
		// Started first: QEMU connects to its vhost-user socket at start.
		if daemon, err = startVsockDaemon(ctx, r.vhostVsock, r.stateDir); err != nil {
			return nil, time.Time{}, err
		}
	}
	stopDaemon := func() {
		if daemon != nil {
			daemon.stop()
		}
	}
	_ = os.Remove(l.PIDFile)
	qemuLog, err := os.Create(r.path(qemuLogFile))
	if err != nil {
		stopDaemon()
		return nil, time.Time{}, fmt.Errorf("QEMU log: %w", err)
	}
	defer qemuLog.Close()

	cmd := exec.Command(r.qemu, args...) //nolint:gosec // G204: the emulator the user configured, with the command line commandLine builds
	cmd.Dir = r.stateDir
	cmd.Stdout, cmd.Stderr = qemuLog, qemuLog
	cmd.SysProcAttr = qemuProcAttr(r.spec.Detach)

	state := b.startState(r, l, args, daemon)
	exited := make(chan error, 1)
	started := time.Now()
	class, err := startQEMU(cmd, func(err error) { exited <- err })
	if err != nil {
		stopDaemon()
		return nil, time.Time{}, fmt.Errorf("run %s: %w", r.qemu, err)
	}
	state.StartedAt = started
	state.Info.StartClass = processClass(class)
	state.Info.PID = cmd.Process.Pid
	m := newMachine(state)
	m.consoleKept = r.spec.KeepConsole
	m.daemon = daemon
	go func() { m.childExited(<-exited) }()
	if daemon != nil {
		go m.watchDaemon()
	}
	if err := m.readThreads(ctx, r.spec.Detach); err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), quitTimeout+termTimeout+hv.KillTimeout)
		defer cancel()
		_ = m.Stop(stopCtx)
		return nil, time.Time{}, err
	}
	return m, started, nil
}

// launch lays out the QEMU process that boots r with accel: its files in
// the state directory, the scratch disk (made here, empty), and the
// agent's channels of the device model.
func (r request) launch(accel string) (launch, error) {
	l := launch{
		Arch: r.arch, Accel: accel, Machine: machineQ35,
		CPUs: r.spec.CPUs, MemoryMiB: r.spec.MemoryMiB, Name: r.name,
		Kernel: r.spec.Image.Kernel, Initramfs: r.spec.Image.Initramfs, Cmdline: r.spec.Image.Cmdline,
		ConsoleLog: r.path(consoleLogFile), QMPSocket: r.path(qmpSocketFile),
		AgentSocket: r.path(agentSocketFile), PIDFile: r.path(pidFile),
	}
	if r.arch == "arm64" {
		l.Machine = machineVirt
	}
	if r.spec.DiskBytes > 0 {
		l.Disk = r.path(scratchDiskFile)
		if err := makeScratchDisk(l.Disk, r.spec.DiskBytes); err != nil {
			return l, err
		}
		l.DiskCache = "none"
		if problem := directIOProblem(l.Disk); problem != "" {
			l.DiskCache = "writeback"
			fmt.Fprintf(r.log, "Scratch disk: %s, so it uses cache=writeback: guest writes land in the host's page cache, and disk-bound results measure memory, not the disk. Put the state directory on a disk file system for cache=none.\n", problem)
		}
	}
	switch {
	case r.model == hv.ModelVZ:
		l.Model = hv.ModelVZ
		// The Linux boot loader's kernel, as vz boots it.
		l.Kernel = r.spec.Image.UncompressedKernel
		l.VhostUserSocket = r.path(vhostUserSocketFile)
		l.AgentSocket = ""
	case vhostVsockProblem() == "":
		// Guest CIDs are host-wide; 3 and up are free for guests, and a
		// random one collides with another VM's about never.
		l.VsockCID = 3 + rand.Uint32N(1<<30)
	}
	return l, nil
}

// startState is vm.json for the VM l boots, before QEMU runs: daemon is
// the vz model's vsock daemon, nil in QEMU's own model.
func (b *Backend) startState(r request, l launch, args []string, daemon *vsockDaemon) State {
	state := State{
		Info: hv.MachineInfo{
			Backend: b.Name(), Name: r.name, Accel: l.Accel,
			CPUs: r.spec.CPUs, MemoryMiB: r.spec.MemoryMiB,
			StateDir: r.stateDir, ConsoleLog: l.ConsoleLog, Image: r.spec.Image,
		},
		RequestedAccel: r.spec.Accel, DiskBytes: r.spec.DiskBytes, DiskCache: l.DiskCache,
		Detached: r.spec.Detach, Machine: l.Machine,
		QEMU: r.qemu, QEMUVersion: r.qemuVersion, Args: args,
		QMPSocket: l.QMPSocket, AgentSocket: l.AgentSocket, VsockCID: l.VsockCID,
	}
	if daemon != nil {
		state.Info.Model = hv.ModelVZ
		state.Model = hv.ModelVZ
		state.HybridVsockSocket = daemon.hybrid
		state.VsockDaemon = r.vhostVsock
		state.VsockDaemonVersion = r.vhostVsockVersion
		state.VsockDaemonPID = daemon.pid
	}
	if l.Disk != "" {
		state.Info.Disk, state.Info.GuestDisk = l.Disk, guestchan.ScratchDisk
	}
	return state
}

// readThreads connects to a QEMU just started, reads its vCPU threads and
// writes them to vm.json. The connection is held for the VM's life, unless
// the VM is detached: then QMP is left to the controllers that attach.
func (m *machine) readThreads(ctx context.Context, detach bool) error {
	c, err := m.connectQMP(ctx)
	if err != nil {
		return err
	}
	threads, err := c.vcpuThreads(ctx)
	if detach {
		// Leave QMP free for the controllers that will attach.
		_ = c.Close()
	} else {
		m.mu.Lock()
		m.qmp = c
		m.mu.Unlock()
		if m.Ended() {
			// QEMU ended before the connection was handed over, so its exit
			// was recorded without it.
			_ = c.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("vCPU threads: %w", err)
	}
	m.mu.Lock()
	m.info.VCPUThreads = threads
	m.state.Info = m.info
	s := m.state
	m.mu.Unlock()
	return writeState(m.stateDir, s)
}

// connectQMP waits for QEMU's QMP socket and connects to it.
func (m *machine) connectQMP(ctx context.Context) (*qmpClient, error) {
	ctx, cancel := context.WithTimeout(ctx, qmpConnectTimeout)
	defer cancel()
	for {
		c, err := dialQMP(ctx, m.qmpSocket)
		if err == nil {
			return c, nil
		}
		select {
		case <-m.Done():
			return nil, fmt.Errorf("qemu exited at start: %w", m.exitDetail())
		case <-ctx.Done():
			return nil, fmt.Errorf("QMP socket %s not ready within %s: %w", m.qmpSocket, qmpConnectTimeout, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// exitDetail is Err, or QEMU's last words when it exited with no error
// recorded.
func (m *machine) exitDetail() error {
	if err := m.Err(); err != nil {
		return err
	}
	return errors.New(hv.LogTail(m.qemuLog))
}

// makeScratchDisk makes a sparse raw disk of size bytes (rounded up to
// whole MiB, as block devices come in sectors), dropping what an earlier
// run wrote so that the host disk space comes back.
func makeScratchDisk(path string, size int64) error {
	const mib = 1 << 20
	size = (size + mib - 1) / mib * mib
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600) //nolint:gosec // G304: the scratch disk in the VM's state directory
	if err != nil {
		return fmt.Errorf("scratch disk: %w", err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("scratch disk %s of %d bytes: %w", path, size, err)
	}
	return nil
}

// Attach finds a VM started earlier from its state directory. Its vCPU
// threads are read again over QMP when QMP answers (another controller
// may hold it), else taken from vm.json; they do not change while QEMU
// runs.
func (b *Backend) Attach(ctx context.Context, stateDir string) (hv.Machine, error) {
	s, err := hv.AttachState(stateDir, ReadState, func(s *State) *hv.MachineInfo { return &s.Info },
		func(_ string, s State) (bool, string, error) {
			return s.Running(), fmt.Sprintf("qemu pid %d", s.Info.PID), nil
		})
	if err != nil {
		return nil, err
	}
	m := newMachine(s)
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_ = m.useQMP(qctx, func(c *qmpClient) error {
		threads, err := c.vcpuThreads(qctx)
		if err == nil {
			m.info.VCPUThreads = threads
		}
		return err
	})
	cancel()
	go m.watchAttached()
	return m, nil
}
