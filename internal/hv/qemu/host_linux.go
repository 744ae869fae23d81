package qemu

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxSocketPath is the longest unix socket path Linux takes (sun_path less
// its terminating NUL).
const maxSocketPath = 107

// kvmDevice is the device KVM is used through.
const kvmDevice = "/dev/kvm"

// vhostVsockDevice is the host side of virtio-vsock.
const vhostVsockDevice = "/dev/vhost-vsock"

// qemuProcAttr: a detached VM gets its own session, so it outlives the
// controller and its terminal. Otherwise QEMU gets its own process group,
// so a terminal's Ctrl-C reaches only the controller, which then stops the
// VM in order; and it dies with the controller if the controller is killed.
// The parent-death signal follows the thread that started QEMU, which is
// why startQEMU starts it through childproc.
func qemuProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// isQEMUProcess says whether pid is a live (not zombie) QEMU whose command
// line names qmpSocket, so that a pid reused by another process after the
// VM ended is not mistaken for it.
func isQEMUProcess(pid int, qmpSocket string) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(cmdline) == 0 {
		// A zombie's cmdline is empty.
		return false
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if !strings.HasPrefix(filepath.Base(args[0]), "qemu") {
		return false
	}
	return bytes.Contains(cmdline, []byte(optValue(qmpSocket)))
}

// directIOProblem says why QEMU's cache=none (O_DIRECT) cannot be used for
// a file, or "" if it can. tmpfs, for one, refuses O_DIRECT on kernels
// before 6.6.
func directIOProblem(path string) string {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Sprintf("%s does not support O_DIRECT (%v)", filepath.Dir(path), err)
	}
	_ = unix.Close(fd)
	return ""
}

// kvmProblem says why this process cannot use KVM, or "" if it can open
// /dev/kvm (whether a guest then boots is what the probe finds out).
func kvmProblem() string {
	fd, err := unix.Open(kvmDevice, unix.O_RDWR|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		_ = unix.Close(fd)
		return ""
	case errors.Is(err, fs.ErrNotExist):
		return kvmDevice + " does not exist (no KVM module loaded, virtualization off in the firmware, or no nested virtualization in this VM)"
	case errors.Is(err, fs.ErrPermission):
		return kvmDevice + " is not accessible to this user"
	default:
		return fmt.Sprintf("open %s: %v", kvmDevice, err)
	}
}

// kvmFix is what to do about kvmProblem's answer.
func kvmFix(problem string) string {
	if strings.Contains(problem, "not accessible") {
		return "sudo usermod -aG kvm $USER  (then log in again)"
	}
	return "sudo modprobe kvm_intel  (or kvm_amd; enable virtualization in the firmware, or nested virtualization on the outer host)"
}

// vhostVsockProblem says why QEMU cannot give the guest a vsock device, or
// "" if it can.
func vhostVsockProblem() string {
	fd, err := unix.Open(vhostVsockDevice, unix.O_RDWR|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		_ = unix.Close(fd)
		return ""
	case errors.Is(err, fs.ErrNotExist):
		return vhostVsockDevice + " does not exist"
	default:
		return fmt.Sprintf("open %s: %v", vhostVsockDevice, err)
	}
}

// hvfProblem: hvf is macOS's hypervisor.
func hvfProblem() string { return "hvf exists only on macOS" }

// hostKernelRelease identifies the host kernel, which decides (with the
// outer hypervisor) whether nested KVM works.
func hostKernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
