package qemu

import (
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxSocketPath is the longest unix socket path macOS takes (sun_path less
// its terminating NUL).
const maxSocketPath = 103

const (
	kvmDevice        = "/dev/kvm"
	vhostVsockDevice = "/dev/vhost-vsock"
)

// processZombie is SZOMB in <sys/proc.h>.
const processZombie = 5

// qemuProcAttr: a detached VM gets its own session, so it outlives the
// controller and its terminal. Otherwise QEMU gets its own process group,
// so a terminal's Ctrl-C reaches only the controller, which then stops the
// VM in order. macOS has no parent-death signal: a controller killed with
// SIGKILL leaves its VM running, to be stopped with `qoslab vm stop`.
func qemuProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}

// isQEMUProcess says whether pid is a live (not zombie) QEMU. macOS keeps
// only the first 16 bytes of the command name in the process table, which
// the arguments cannot be read from without more privileges, so a reused
// pid is told apart only by its name.
func isQEMUProcess(pid int, qmpSocket string) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return false
	}
	if kp.Proc.P_stat == processZombie {
		return false
	}
	return strings.HasPrefix(unix.ByteSliceToString(kp.Proc.P_comm[:]), "qemu")
}

// directIOProblem: QEMU on macOS implements cache=none with F_NOCACHE,
// which every local file system takes.
func directIOProblem(path string) string { return "" }

func kvmProblem() string { return "KVM exists only on Linux" }

func kvmFix(string) string { return "" }

func vhostVsockProblem() string { return "QEMU on macOS has no vhost-vsock" }

// hvfProblem says why QEMU cannot use Hypervisor.framework, or "" if it can.
func hvfProblem() string {
	v, err := unix.SysctlUint32("kern.hv_support")
	if err != nil || v != 1 {
		return "this Mac does not support Hypervisor.framework (sysctl kern.hv_support is not 1)"
	}
	return ""
}

func hostKernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
