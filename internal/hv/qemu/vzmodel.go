package qemu

// The vz device model (hv.ModelVZ): an arm64 Linux guest laid out as the vz
// backend lays one out on Virtualization.framework, booted by
// qemu-system-aarch64, so that the guest a Mac boots is tested where there
// is no Mac. vz gives a Linux guest: the Linux boot loader's uncompressed
// Image, initramfs and command line (guestchan.VZLinuxCmdline, the code the
// vz backend uses); a virtio console as the only console; no UART; virtio
// block devices for the disks its plan has; an entropy device; a virtio
// socket device, reached from the host with connect(toPort:). QEMU here has
// no kernel vhost-vsock to rely on, so the socket device is rust-vmm's
// vhost-device-vsock, a vhost-user daemon whose host side is a unix socket
// with the same one-call connect (transport.DialHybridVsock). The daemon
// lives and dies with its VM.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/transport"
)

// rust-vmm's vhost-user vsock device, as the vz model uses it.
const (
	VhostVsockName    = "vhost-device-vsock"
	vhostVsockVersion = "0.3.0"
	// vhostVsockInstall installs the version qoslab is tested with (it
	// builds in minutes; `make test` runs it when the daemon is missing).
	vhostVsockInstall = "cargo install --locked " + VhostVsockName + "@" + vhostVsockVersion
)

// vzGuestCID is the guest's vsock CID in the vz model. A daemon serves one
// VM, and no kernel vsock is involved, so it never collides.
const vzGuestCID = 3

// The vz model's files in the VM's state directory.
const (
	// vhostUserSocketFile is where the daemon serves QEMU (vhost-user).
	vhostUserSocketFile = "vhost-vsock.sock"
	// hybridVsockFile is the host side of the guest's vsock.
	hybridVsockFile    = "vsock.sock"
	vsockDaemonLogFile = "vhost-device-vsock.log"
)

// vsockDaemonStart bounds waiting for the daemon's vhost-user socket; it
// binds it at once.
const vsockDaemonStart = 10 * time.Second

// vsockDaemonTerm is how long the daemon has to end on SIGTERM before
// SIGKILL.
const vsockDaemonTerm = 2 * time.Second

// serveCheck is how often the console is read for the agent's serving
// line before the first vsock dial.
const serveCheck = 20 * time.Millisecond

// hybridRetry is the pause before a hybrid vsock dial the guest refused
// (its agent does not listen yet) is tried again.
const hybridRetry = 100 * time.Millisecond

// vsockDaemonInstallHint says how to get the daemon.
func vsockDaemonInstallHint() string {
	return vhostVsockInstall + " (Rust from https://rustup.rs; it builds in minutes), or run `make test`, which installs it"
}

// FindVhostVsock returns the daemon's path and version: the configured
// name looked up in PATH and then in Options.VhostVsockDirs (cargo's bin
// directory, where `cargo install` puts it and which a non-login shell's
// PATH may lack). The error
// says how to install it (tests outside this package skip on it).
func (b *Backend) FindVhostVsock(ctx context.Context) (path, version string, err error) {
	name := b.opts.VhostVsock
	path, err = exec.LookPath(name)
	if err != nil && !strings.Contains(name, "/") {
		for _, dir := range b.opts.VhostVsockDirs {
			if p, lerr := exec.LookPath(filepath.Join(dir, name)); lerr == nil {
				path, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("%s, rust-vmm's vhost-user vsock device that the vz model's vsock needs, is not installed: %s", name, vsockDaemonInstallHint())
	}
	out, err := versionOutput(ctx, path)
	if ctx.Err() != nil {
		return "", "", err // interrupted: nothing to reinstall
	}
	if err != nil {
		return "", "", fmt.Errorf("%w: reinstall it with %s", err, vhostVsockInstall)
	}
	version, err = parseVhostVsockVersion(string(out))
	if err != nil {
		return "", "", fmt.Errorf("%s: %w: reinstall it with %s", path, err, vhostVsockInstall)
	}
	return path, version, nil
}

// parseVhostVsockVersion reads `vhost-device-vsock --version`
// ("vhost-device-vsock 0.3.0").
func parseVhostVsockVersion(out string) (string, error) {
	f := strings.Fields(out)
	if len(f) < 2 || f[0] != VhostVsockName {
		return "", fmt.Errorf("--version said %q, not %s VERSION", strings.TrimSpace(out), VhostVsockName)
	}
	return f[1], nil
}

// versionNote is what to say about a daemon of another version than the
// one qoslab is tested with, "" for that one.
func versionNote(version string) string {
	if version == vhostVsockVersion {
		return ""
	}
	return fmt.Sprintf("%s %s: qoslab is tested with %s (%s)", VhostVsockName, version, vhostVsockVersion, vhostVsockInstall)
}

// checkVZModel checks what the vz model needs of the spec and the host,
// and finds the daemon.
func (b *Backend) checkVZModel(ctx context.Context, r *request) error {
	spec := r.spec
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the vz device model runs on Linux hosts only (its vsock device shares the guest's memory with vhost-device-vsock through a memfd); on a Mac, use the vz backend itself (--vm-backend vz)")
	}
	if r.arch != "arm64" {
		return fmt.Errorf("the vz device model boots arm64 images, as Virtualization.framework on Apple silicon does; image %q is for %s: build one with `qoslab image build linux --arch arm64`", spec.Image.Name, r.arch)
	}
	if spec.Detach {
		return errors.New("the vz device model is for VMs booted for a run (bench, run); a named VM (vm start) boots the default model")
	}
	if spec.Image.UncompressedKernel == "" {
		return fmt.Errorf("image %q has no uncompressed kernel, which the vz model boots as Virtualization.framework does (it was built before qoslab wrote one): rebuild it with `qoslab image build linux --arch arm64`", spec.Image.Name)
	}
	st, err := os.Stat(spec.Image.UncompressedKernel)
	if err != nil {
		return fmt.Errorf("image %q: uncompressed kernel: %w: rebuild the image", spec.Image.Name, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("image %q: uncompressed kernel %s is not a file: rebuild the image", spec.Image.Name, spec.Image.UncompressedKernel)
	}
	for _, f := range []string{vhostUserSocketFile, hybridVsockFile} {
		if err := checkSocketPath(r.path(f)); err != nil {
			return err
		}
	}
	r.vhostVsock, r.vhostVsockVersion, err = b.FindVhostVsock(ctx)
	return err
}

// vzModelArgs are QEMU's arguments for l in the vz model, without the
// binary: Virtualization.framework's devices for a Linux guest on QEMU's
// virt machine.
func vzModelArgs(l launch) []string {
	machine := "virt,memory-backend=vzmem"
	if l.Accel != accelHVF {
		machine = "virt,gic-version=max,memory-backend=vzmem"
	}
	args := []string{
		"-name", optValue(l.Name) + ",debug-threads=on",
		"-machine", machine,
		// vhost-user shares the guest's memory with the daemon.
		"-object", fmt.Sprintf("memory-backend-memfd,id=vzmem,size=%dM,share=on", l.MemoryMiB),
		"-accel", accelOption(l.Accel),
		"-cpu", cpuModel(l.Arch, l.Accel),
		"-smp", strconv.Itoa(l.CPUs),
		"-m", strconv.Itoa(l.MemoryMiB) + "M",
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		// The virtio console, vz's only console: its one port is hvc0. virt's
		// PL011 UART stays on the board, unconnected and named nowhere.
		"-chardev", "file,id=console,path=" + optValue(l.ConsoleLog),
		"-device", "virtio-serial-pci,id=vzconsole",
		"-device", "virtconsole,bus=vzconsole.0,chardev=console",
		"-chardev", "socket,id=qmp,path=" + optValue(l.QMPSocket) + ",server=on,wait=off",
		"-mon", "chardev=qmp,mode=control",
		// vz's virtio socket device.
		"-chardev", "socket,id=vsock,path=" + optValue(l.VhostUserSocket),
		"-device", "vhost-user-vsock-pci,chardev=vsock",
		// vz's entropy device.
		"-device", "virtio-rng-pci",
	}
	if l.Disk != "" {
		args = append(args,
			"-drive", "file="+optValue(l.Disk)+",format=raw,if=none,id=scratch,cache="+l.DiskCache,
			"-device", "virtio-blk-pci,drive=scratch,serial="+scratchSerial,
		)
	}
	return append(args,
		"-kernel", l.Kernel,
		"-initrd", l.Initramfs,
		// Exactly the vz backend's command line: nothing is added for QEMU.
		"-append", guestchan.VZLinuxCmdline(l.Cmdline),
		"-pidfile", l.PIDFile,
	)
}

// vsockDaemon is a vhost-device-vsock process serving one VM's vsock
// device, this controller's child.
type vsockDaemon struct {
	pid         int
	log         string
	vhostSocket string
	hybrid      string

	stopMu sync.Mutex
	// stopping is set once stop begins, so that its end is not a fault.
	stopping bool

	mu   sync.Mutex
	err  error // how it ended, once done is closed
	done chan struct{}
}

// startVsockDaemon starts the daemon at path for the VM in stateDir, and
// returns once it serves its vhost-user socket (QEMU connects to it at
// start, so it must be there first).
func startVsockDaemon(ctx context.Context, path, stateDir string) (*vsockDaemon, error) {
	d := &vsockDaemon{
		log:         filepath.Join(stateDir, vsockDaemonLogFile),
		vhostSocket: filepath.Join(stateDir, vhostUserSocketFile),
		hybrid:      filepath.Join(stateDir, hybridVsockFile),
		done:        make(chan struct{}),
	}
	for _, f := range []string{d.vhostSocket, d.hybrid} {
		_ = os.Remove(f)
	}
	logf, err := os.Create(d.log)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", VhostVsockName, err)
	}
	defer logf.Close()
	// The separate flags rather than --vm's comma-separated list, which a
	// path with a comma would break.
	cmd := exec.Command(path, "--guest-cid", strconv.Itoa(vzGuestCID), "--socket", d.vhostSocket, "--uds-path", d.hybrid) //nolint:gosec // G204: the vsock daemon the user configured, with the arguments the vz model needs
	cmd.Dir = stateDir
	cmd.Stdout, cmd.Stderr = logf, logf
	// As QEMU: its own process group, out of reach of a terminal's Ctrl-C
	// (the controller stops it after the VM), and dead with the controller.
	cmd.SysProcAttr = qemuProcAttr(false)
	if _, err := startQEMU(cmd, func(err error) {
		d.mu.Lock()
		d.err = err
		d.mu.Unlock()
		close(d.done)
	}); err != nil {
		return nil, fmt.Errorf("run %s: %w", path, err)
	}
	d.pid = cmd.Process.Pid

	wctx, cancel := context.WithTimeout(ctx, vsockDaemonStart)
	defer cancel()
	for {
		if st, err := os.Stat(d.vhostSocket); err == nil && st.Mode()&os.ModeSocket != 0 {
			return d, nil
		}
		select {
		case <-d.done:
			return nil, fmt.Errorf("%s exited at start: %s", VhostVsockName, d.exitDetail())
		case <-wctx.Done():
			d.stop()
			return nil, fmt.Errorf("%s (pid %d) did not serve %s within %s: %w; see %s", VhostVsockName, d.pid, d.vhostSocket, vsockDaemonStart, wctx.Err(), d.log)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// exitDetail says how the daemon ended, with its last words.
func (d *vsockDaemon) exitDetail() string {
	d.mu.Lock()
	err := d.err
	d.mu.Unlock()
	how := "status 0"
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		how = exit.String()
	} else if err != nil {
		how = err.Error()
	}
	return fmt.Sprintf("%s; %s", how, hv.LogTail(d.log))
}

// ended says whether the daemon has ended.
func (d *vsockDaemon) ended() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// stop ends the daemon (SIGTERM, then SIGKILL) and returns once it has
// ended, removing the sockets it leaves.
func (d *vsockDaemon) stop() {
	d.stopMu.Lock()
	defer d.stopMu.Unlock()
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	if !d.ended() {
		_ = syscall.Kill(d.pid, syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(vsockDaemonTerm):
			_ = syscall.Kill(d.pid, syscall.SIGKILL)
			select {
			case <-d.done:
			case <-time.After(hv.KillTimeout):
			}
		}
	}
	for _, f := range []string{d.vhostSocket, d.hybrid} {
		_ = os.Remove(f)
	}
}

// isStopping says whether stop has begun.
func (d *vsockDaemon) isStopping() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stopping
}

// watchDaemon fails the VM when its vsock daemon ends while the VM runs:
// the agent is out of reach, so the VM is stopped and Err says why.
func (m *machine) watchDaemon() {
	d := m.daemon
	select {
	case <-d.done:
	case <-m.Done():
		return
	}
	if d.isStopping() || m.StopAsked() || m.Ended() {
		return
	}
	m.mu.Lock()
	m.fault = fmt.Errorf("%s (pid %d), the VM's vsock device, ended while the VM ran (%s): the agent was out of reach, so the VM was stopped", VhostVsockName, d.pid, d.exitDetail())
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), quitTimeout+termTimeout+hv.KillTimeout)
	defer cancel()
	_ = m.Stop(ctx)
}

// daemonSaid is what the vz model's daemon logged, for a boot that failed
// ("" when it logged nothing, or there is none): vhost-device-vsock logs
// errors only, and a broken device explains an agent that never answered.
func (m *machine) daemonSaid() string {
	if m.daemon == nil {
		return ""
	}
	if b, err := os.ReadFile(m.daemon.log); err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s said: %s", VhostVsockName, hv.LogTail(m.daemon.log))
}

// awaitServing returns once the guest's console shows that its agent
// serves (guestchan.ServingMark), or ctx or the VM ends. vhost-device-vsock
// 0.3.0 loses the device for good when a host connection arrives after QEMU
// has given it the guest's memory but before the guest's driver has made
// the queues ready (its queue worker ends on the error of reading a queue
// that is not ready), which a dial repeated while the guest boots hits now
// and then; by the time the agent serves, the driver has long been ready.
// So the vz model dials only then: vz's connect(toPort:) needs no such wait,
// and the wait's cost is one look at the console per serveCheck.
func (m *machine) awaitServing(ctx context.Context) error {
	if m.serving.Load() {
		return nil
	}
	t := time.NewTicker(serveCheck)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(m.consoleLog); err == nil && strings.Contains(string(b), guestchan.ServingMark) {
			m.serving.Store(true)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the agent to say on the console (%s) that it serves: %w", m.consoleNamed(), ctx.Err())
		case <-m.Done():
			return m.EndErr()
		case <-t.C:
		}
	}
}

// dialHybrid connects to the agent through the vz model's vsock, trying
// again while the guest boots (the guest refuses a connection to a port
// nothing listens on yet) until ctx ends or the VM does.
//
// An attempt is never abandoned while the daemon holds it: one sent before
// the guest's vsock driver loads waits in the daemon until the driver takes
// it, and if the host side were gone by the time the guest accepted it,
// vhost-device-vsock 0.3.0 would fail writing its OK (it unwraps that
// write) and lose the device. So each attempt waits for its answer as long
// as ctx allows.
func (m *machine) dialHybrid(ctx context.Context) (net.Conn, error) {
	if err := m.awaitServing(ctx); err != nil {
		return nil, err
	}
	for {
		c, err := transport.DialHybridVsock(ctx, m.hybridSocket, guestchan.VsockPort)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, transport.ErrHybridVsockRefused) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last attempt: %w)", ctx.Err(), err)
		case <-m.Done():
			return nil, m.EndErr()
		case <-time.After(hybridRetry):
		}
	}
}
