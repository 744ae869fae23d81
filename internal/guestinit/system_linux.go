package guestinit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Where the kernel lists virtio-serial ports and puts their device nodes.
const (
	virtioPortClassDir = "/sys/class/virtio-ports"
	devDir             = "/dev"
)

// systemPorts finds ports where the Linux kernel lists them.
func systemPorts() PortFinder {
	return PortFinder{ClassDir: virtioPortClassDir, DevDir: devDir}
}

// Where the kernel lists input devices and puts their event nodes.
const (
	inputClassDir = "/sys/class/input"
	inputDevDir   = "/dev/input"
)

// systemInputs finds input devices where the Linux kernel lists them.
func systemInputs() inputFinder {
	return inputFinder{ClassDir: inputClassDir, DevDir: inputDevDir}
}

// bootClock is the time since the kernel started (CLOCK_BOOTTIME), the clock
// the kernel log stamps lines with.
func bootClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// mountPoint is one file system the guest needs.
type mountPoint struct {
	fstype, target string
	flags          uintptr
	data           string
}

// systemMounts are the kernel's file systems and the tmpfs the agent writes
// in; /dev comes first so that the console can be opened as soon as possible.
func systemMounts(scratchDir string) []mountPoint {
	const nodevs = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	m := []mountPoint{
		{"devtmpfs", "/dev", unix.MS_NOSUID, "mode=0755"},
		{"proc", "/proc", nodevs, ""},
		{"sysfs", "/sys", nodevs, ""},
		{"tmpfs", "/tmp", unix.MS_NOSUID | unix.MS_NODEV, "mode=1777"},
	}
	if scratchDir != "" {
		m = append(m, mountPoint{"tmpfs", scratchDir, unix.MS_NOSUID | unix.MS_NODEV, "mode=0755"})
	}
	return m
}

// mountAll mounts each file system, creating its directory; one already
// mounted there is kept.
func mountAll(points []mountPoint) error {
	for _, m := range points {
		if err := os.MkdirAll(m.target, 0o755); err != nil { //nolint:gosec // G301: mount points of the guest's root (/proc, /sys, /dev, the scratch disk): 0755 as on any Linux system
			return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
		}
		if isMountPoint(m.target) {
			continue
		}
		err := unix.Mount(m.fstype, m.target, m.fstype, m.flags, m.data)
		if err != nil && !errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
		}
	}
	return nil
}

// isMountPoint tells whether something is mounted on dir: its device differs
// from its parent's. (Mounting proc or devtmpfs twice does not fail with
// EBUSY, it stacks a second mount.)
func isMountPoint(dir string) bool {
	var st, parent unix.Stat_t
	if unix.Stat(dir, &st) != nil || unix.Stat(filepath.Join(dir, ".."), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// The consoles init tries when the kernel's (/dev/console) cannot be
// opened: the usual serial consoles of x86 (ttyS0), virtio (hvc0) and arm64
// (ttyAMA0) machines.
var fallbackConsoles = []string{"/dev/ttyS0", "/dev/hvc0", "/dev/ttyAMA0"}

// consoleWait bounds waiting for the kernel's console after the modules
// have loaded: a virtio console's port, and with it hvc0, is added after
// its driver loads, in milliseconds; a kernel whose console never comes
// must not hold the guest up long.
const consoleWait = 3 * time.Second

// attachConsole makes fds 0, 1 and 2 the kernel's console (/dev/console),
// which the agent process inherits. The kernel opens it for /init when the
// initramfs has the node and a console exists; when neither held (fds 0-2
// closed, or the Go runtime's /dev/null in their place), it is opened here.
func attachConsole() error {
	return openConsole("/dev/console")
}

// waitConsole waits up to wait for the kernel's console, and then tries the
// usual serial consoles. It returns the device attached.
func waitConsole(wait time.Duration) (string, error) {
	deadline := time.Now().Add(wait)
	var err error
	for {
		if err = attachConsole(); err == nil {
			return "/dev/console", nil
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	errs := []error{err}
	for _, dev := range fallbackConsoles {
		ferr := openConsole(dev)
		if ferr == nil {
			return dev, nil
		}
		errs = append(errs, ferr)
	}
	return "", fmt.Errorf("no console after waiting %s: %w", wait, errors.Join(errs...))
}

// openConsole puts dev on fds 0, 1 and 2.
func openConsole(dev string) error {
	// Not O_CLOEXEC: when fds 0-2 were closed, open returns one of them
	// and it must survive the exec of the agent process.
	fd, err := unix.Open(dev, unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dev, err)
	}
	var errs []error
	for target := 0; target <= 2; target++ {
		if fd != target {
			if err := unix.Dup3(fd, target, 0); err != nil {
				errs = append(errs, fmt.Errorf("%s onto fd %d: %w", dev, target, err))
			}
		}
	}
	if fd > 2 {
		_ = unix.Close(fd)
	}
	return errors.Join(errs...)
}

// newBootLog writes to the kernel log and, attached to stdout, the console.
func newBootLog() *bootLog {
	l := &bootLog{}
	l.useKernelLog()
	return l
}

// useKernelLog has l write to /dev/kmsg, once devtmpfs is mounted.
func (l *bootLog) useKernelLog() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0); err == nil {
		l.kmsg = f
	}
	if b, err := os.ReadFile("/proc/sys/kernel/printk"); err == nil {
		l.consoleLevel = parseConsoleLevel(string(b), 0)
	}
}

// unlimitKernelLog lets init's lines through: by default the kernel drops
// /dev/kmsg writes beyond ten per five seconds.
func unlimitKernelLog() error {
	return os.WriteFile("/proc/sys/kernel/printk_devkmsg", []byte("on\n"), 0)
}

// kmsgReader reads kernel log records without waiting for new ones.
type kmsgReader struct{ fd int }

// openKmsg reads the kernel log from its oldest record, or (tail) from the
// next one written; nil when /dev/kmsg cannot be read.
func openKmsg(tail bool) *kmsgReader {
	fd, err := unix.Open("/dev/kmsg", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	if tail {
		if _, err := unix.Seek(fd, 0, unix.SEEK_END); err != nil {
			_ = unix.Close(fd)
			return nil
		}
	}
	return &kmsgReader{fd: fd}
}

// each calls f with every record not read yet, until f returns false.
func (r *kmsgReader) each(f func(at time.Duration, msg string) bool) {
	if r == nil {
		return
	}
	buf := make([]byte, 8192)
	for {
		n, err := unix.Read(r.fd, buf)
		if errors.Is(err, unix.EPIPE) {
			continue // records overwritten before we read them
		}
		if err != nil || n <= 0 {
			return
		}
		if at, msg, ok := kmsgRecord(string(buf[:n])); ok && !f(at, msg) {
			return
		}
	}
}

// messages returns the texts of the records not read yet.
func (r *kmsgReader) messages() []string {
	var out []string
	r.each(func(_ time.Duration, msg string) bool {
		out = append(out, msg)
		return true
	})
	return out
}

func (r *kmsgReader) close() {
	if r != nil {
		_ = unix.Close(r.fd)
	}
}

// initRunTime is when the kernel ran /init, from its log line.
func initRunTime() (time.Duration, bool) {
	r := openKmsg(false)
	defer r.close()
	var at time.Duration
	found := false
	r.each(func(t time.Duration, msg string) bool {
		if initRunMessage(msg) {
			at, found = t, true
		}
		return !found
	})
	return at, found
}

// loadModules loads each module in order, timing each one.
func loadModules(paths []string) ([]bootStep, error) {
	tail := openKmsg(true)
	defer tail.close()
	var steps []bootStep
	for _, path := range paths {
		began := time.Now()
		err := finitModule(path)
		steps = append(steps, bootStep{Name: moduleName(path), Took: time.Since(began)})
		var errno syscall.Errno
		if errors.As(err, &errno) {
			err = moduleLoadError(path, errno, tail.messages())
		}
		if err != nil {
			return steps, err
		}
	}
	return steps, nil
}

// finitModule loads the module in path; the kernel reads the file itself.
func finitModule(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("load module %s: %w (is it in the initramfs?)", path, err)
	}
	defer unix.Close(fd)
	flags := 0
	if compressedModule(path) {
		flags = unix.MODULE_INIT_COMPRESSED_FILE
	}
	return unix.FinitModule(fd, "", flags)
}

// powerOff ends the guest, and with it QEMU: after fatal (nil for a
// requested stop) is on the console, the file systems are synced and the
// machine powered off. It never returns: PID 1 must not exit.
func powerOff(log *bootLog, fatal error) {
	if fatal != nil {
		log.errorf("FATAL: %v", fatal)
		log.errorf("powering off in 1 s")
		// Time for the console to show the error before the machine is gone.
		time.Sleep(time.Second)
	} else {
		log.notef("powering off")
	}
	unix.Sync()
	err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	// Still here: try a reboot (QEMU with -no-reboot exits on it), then stay.
	log.errorf("power off: %v; rebooting instead", err)
	err = unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	log.errorf("reboot: %v; halting here", err)
	for {
		// A sleeping timer, not an empty select: with no goroutine left to
		// run, the Go runtime would call it a deadlock and exit.
		time.Sleep(time.Hour)
	}
}

// describeExit says how a process ended.
func describeExit(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exited with status %d", ws.ExitStatus())
	case ws.Signaled():
		return "killed by " + unix.SignalName(ws.Signal())
	default:
		return fmt.Sprintf("ended (wait status %#x)", uint32(ws))
	}
}
