//go:build linux

package qos

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/procsched"
)

// uclampScale is the kernel's utilization scale (SCHED_CAPACITY_SCALE): 1024 is
// a fully busy big core.
const uclampScale = 1024

// The clamps a class asks for. Background caps its utilization at a quarter so
// schedutil keeps its CPU at low frequency (and EAS places it on little cores),
// as Darwin does with background threads; user-interactive asks for at least
// three quarters so its CPU ramps up at once. Every other class gets the
// defaults (0..1024), which also clears a clamp left by an earlier class.
const (
	uclampBackgroundMax      = uclampScale / 4
	uclampUserInteractiveMin = uclampScale * 3 / 4
)

// linuxSched is one class's Linux mapping.
type linuxSched struct {
	policy  uint32
	nice    int
	utilMin uint32
	utilMax uint32
	// clamped says the clamps are part of the class (not only a reset), so a
	// kernel without uclamp makes the class fall short of Full.
	clamped bool
}

// linuxMapping returns the mapping of a valid class, as docs/design.md
// tabulates it.
func linuxMapping(c Class) (linuxSched, bool) {
	switch c {
	case Background:
		return linuxSched{policy: unix.SCHED_IDLE, nice: 0, utilMin: 0, utilMax: uclampBackgroundMax, clamped: true}, true
	case Utility:
		return linuxSched{policy: unix.SCHED_BATCH, nice: 10, utilMin: 0, utilMax: uclampScale}, true
	case Default:
		return linuxSched{policy: unix.SCHED_NORMAL, nice: 0, utilMin: 0, utilMax: uclampScale}, true
	case UserInitiated:
		return linuxSched{policy: unix.SCHED_NORMAL, nice: -5, utilMin: 0, utilMax: uclampScale}, true
	case UserInteractive:
		return linuxSched{policy: unix.SCHED_NORMAL, nice: -10, utilMin: uclampUserInteractiveMin, utilMax: uclampScale, clamped: true}, true
	}
	return linuxSched{}, false
}

// linuxClass maps a thread's policy and nice back to the class whose mapping
// they are, or Unspecified. SCHED_IDLE ignores nice (every idle thread has the
// same minimal weight), so any nice counts as background.
func linuxClass(policy uint32, nice int) Class {
	if policy == unix.SCHED_IDLE {
		return Background
	}
	for _, c := range all {
		m, _ := linuxMapping(c)
		if m.policy == policy && m.nice == nice {
			return c
		}
	}
	return Unspecified
}

// uclampKernel is what is known about the kernel's per-task utilization clamps.
type uclampKernel int

const (
	uclampUnknown uclampKernel = iota
	uclampAvailable
	uclampUnavailable
)

// uclampSysctl exists exactly when the kernel is built with CONFIG_UCLAMP_TASK.
const uclampSysctl = "/proc/sys/kernel/sched_util_clamp_max"

// probeUclamp looks for the uclamp sysctl; without /proc (an agent running as
// PID 1 before mounting it) the answer is unknown.
func probeUclamp() uclampKernel {
	_, err := os.Stat(uclampSysctl)
	switch {
	case err == nil:
		return uclampAvailable
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Stat("/proc/sys/kernel"); err == nil {
			return uclampUnavailable
		}
	}
	return uclampUnknown
}

// threadSched is the calling thread's scheduling state as the kernel reports it.
type threadSched struct {
	policy  uint32
	nice    int
	utilMin uint32
	utilMax uint32
	uclamp  uclampKernel
}

// readThreadSched reads a thread's policy and clamps with sched_getattr and
// its nice with getpriority (tid 0: the calling thread).
func readThreadSched(tid int, uclamp uclampKernel) (threadSched, error) {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return threadSched{}, fmt.Errorf("sched_getattr: %w", err)
	}
	// The raw syscall returns 20-nice (1..40) so that no valid answer is
	// negative; x/sys passes it through without glibc's conversion.
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return threadSched{}, fmt.Errorf("getpriority: %w", err)
	}
	s := threadSched{policy: attr.Policy, nice: 20 - prio, utilMin: attr.Util_min, utilMax: attr.Util_max, uclamp: uclamp}
	if s.uclamp == uclampUnknown && s.utilMax != 0 {
		// Without uclamp the kernel leaves both fields zero; with it the
		// maximum is never zero for a thread this package has set.
		s.uclamp = uclampAvailable
	}
	return s, nil
}

// String is the read-back Detail, e.g. "SCHED_IDLE nice=0 uclamp=unsupported".
func (s threadSched) String() string {
	uc := "unknown"
	switch s.uclamp {
	case uclampAvailable:
		uc = fmt.Sprintf("%d..%d", s.utilMin, s.utilMax)
	case uclampUnavailable:
		uc = "unsupported"
	}
	return fmt.Sprintf("%s nice=%d uclamp=%s", procsched.PolicyName(int(s.policy)), s.nice, uc)
}

// setPolicyNice sets a thread's policy and nice in one sched_setattr, so the
// thread never passes through a mix of two classes.
func setPolicyNice(tid int, policy uint32, nice int) error {
	return unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: policy, Nice: int32(nice)}, 0)
}

// setUclamp sets a thread's clamps, keeping its policy and nice. It is a call
// of its own because a kernel without uclamp refuses the whole call.
func setUclamp(tid int, min, max uint32) error {
	flags := uint64(unix.SCHED_FLAG_KEEP_POLICY | unix.SCHED_FLAG_KEEP_PARAMS | unix.SCHED_FLAG_UTIL_CLAMP_MIN | unix.SCHED_FLAG_UTIL_CLAMP_MAX)
	return unix.SchedSetAttr(tid, &unix.SchedAttr{Flags: flags, Util_min: min, Util_max: max}, 0)
}

// uclampRefused reports whether err is the kernel saying it has no uclamp:
// EOPNOTSUPP without CONFIG_UCLAMP_TASK, EINVAL from kernels older than 5.3
// that do not know the flags.
func uclampRefused(err error) (string, bool) {
	switch {
	case errors.Is(err, unix.EOPNOTSUPP):
		return "kernel has no CONFIG_UCLAMP_TASK", true
	case errors.Is(err, unix.EINVAL):
		return "kernel does not know SCHED_FLAG_UTIL_CLAMP (Linux < 5.3)", true
	}
	return "", false
}

// niceFloorWithoutCap is the lowest nice RLIMIT_NICE lets this process set
// without CAP_SYS_NICE (20 - limit, so the default limit 0 allows only 20).
func niceFloorWithoutCap() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NICE, &rl); err != nil {
		return 20
	}
	return 20 - int(min(rl.Cur, 40))
}

// capSysNiceHowTo tells the user how to let the agent raise priority.
const capSysNiceHowTo = "run the agent as root or grant it with `setcap cap_sys_nice+ep <agent binary>`"

// ApplySelf applies class c to the calling OS thread (which the caller keeps
// locked for good) and reads it back: policy and nice with one sched_setattr,
// then the utilization clamps with another.
func ApplySelf(c Class) Applied { return ApplyThread(0, c) }

// ApplyThread applies class c to the thread tid of any process this one may
// reschedule (0: the calling thread), such as a VM's vCPU threads, and reads
// it back as ApplySelf does.
func ApplyThread(tid int, c Class) Applied {
	a := Applied{Asked: c}
	m, ok := linuxMapping(c)
	if !ok {
		s, err := readThreadSched(tid, probeUclamp())
		a.Reason = fmt.Sprintf("unknown QoS class %d: allowed %s", int(c), Allowed)
		if err != nil {
			a.Reason += "; read back: " + err.Error()
			return a
		}
		a.Applied, a.Detail = linuxClass(s.policy, s.nice), s.String()
		return a
	}

	var shortfalls []string
	policyErr := setPolicyNice(tid, m.policy, m.nice)
	clamps := m
	if policyErr != nil {
		shortfalls = append(shortfalls, policyNiceShortfall(tid, m, policyErr))
		// Give the thread the clamps of the class it ended up in, so a
		// refused user-interactive does not keep its utilization floor.
		clamps, _ = linuxMapping(Default)
		if s, err := readThreadSched(tid, uclampUnknown); err == nil {
			if got, ok := linuxMapping(linuxClass(s.policy, s.nice)); ok {
				clamps = got
			}
		}
	}

	uclamp := uclampAvailable
	if err := setUclamp(tid, clamps.utilMin, clamps.utilMax); err != nil {
		if why, refused := uclampRefused(err); refused {
			uclamp = uclampUnavailable
			// Nothing to apply and nothing stale to clear: only a class
			// whose mapping includes clamps falls short.
			if clamps.clamped {
				shortfalls = append(shortfalls, fmt.Sprintf("uclamp unavailable (%s): %s", why, clampWanted(clamps)))
			}
		} else {
			uclamp = probeUclamp()
			shortfalls = append(shortfalls, fmt.Sprintf("set uclamp %d..%d: %v", clamps.utilMin, clamps.utilMax, err))
		}
	}

	s, err := readThreadSched(tid, uclamp)
	if err != nil {
		a.Reason = strings.Join(append(shortfalls, "read back: "+err.Error()), "; ")
		return a
	}
	a.Applied, a.Detail = linuxClass(s.policy, s.nice), s.String()
	if a.Applied != c && policyErr == nil {
		shortfalls = append(shortfalls, fmt.Sprintf("thread reads back as %s (%s)", a.Applied, a.Detail))
	}
	if uclamp == uclampAvailable && (s.utilMin != clamps.utilMin || s.utilMax != clamps.utilMax) {
		shortfalls = append(shortfalls, fmt.Sprintf("uclamp reads back as %d..%d, asked %d..%d", s.utilMin, s.utilMax, clamps.utilMin, clamps.utilMax))
	}
	a.Full = len(shortfalls) == 0 && a.Applied == c
	a.Reason = strings.Join(shortfalls, "; ")
	return a
}

// clampWanted says which clamp the class would have had.
func clampWanted(m linuxSched) string {
	if m.utilMin > 0 {
		return fmt.Sprintf("utilization floor %d/%d not set", m.utilMin, uclampScale)
	}
	return fmt.Sprintf("utilization cap %d/%d not set", m.utilMax, uclampScale)
}

// policyNiceShortfall explains a failed sched_setattr and, when the thread may
// not raise its priority that far, falls back to the highest priority it may
// take (RLIMIT_NICE's floor, or nice 0), so it ends as close to c as allowed.
func policyNiceShortfall(tid int, m linuxSched, err error) string {
	what := fmt.Sprintf("sched_setattr(%s, nice %d): %v", procsched.PolicyName(int(m.policy)), m.nice, err)
	if !errors.Is(err, unix.EPERM) || m.nice >= 0 {
		return what
	}
	floor := niceFloorWithoutCap()
	why := fmt.Sprintf("nice %d needs CAP_SYS_NICE (RLIMIT_NICE allows nice >= %d without it): %s", m.nice, floor, capSysNiceHowTo)
	if fallback := fallbackNice(m.nice, floor); fallback != m.nice {
		if ferr := setPolicyNice(tid, m.policy, fallback); ferr != nil {
			why += fmt.Sprintf("; fallback to nice %d: %v", fallback, ferr)
		}
	}
	return why
}

// fallbackNice is the nice to settle for when asked (negative) is refused and
// RLIMIT_NICE lets the thread go down to floor: as close to asked as the limit
// allows, and never above 0, since a refused raise should not also lower the
// thread below default.
func fallbackNice(asked, floor int) int {
	return max(asked, min(0, floor))
}

// ReadSelf reads the calling thread's class and the OS-level detail it is read from.
func ReadSelf() (Class, string, error) { return ReadThread(0) }

// ReadThread reads thread tid's class and detail (0: the calling thread).
func ReadThread(tid int) (Class, string, error) {
	s, err := readThreadSched(tid, probeUclamp())
	if err != nil {
		return Unspecified, "", err
	}
	return linuxClass(s.policy, s.nice), s.String(), nil
}

// Support describes what this kernel and process can apply, e.g.
// "linux 6.18.44: sched_setattr, uclamp unavailable (kernel has no CONFIG_UCLAMP_TASK), CAP_SYS_NICE present".
func Support() string {
	var parts []string
	release := ""
	var uts unix.Utsname
	if err := unix.Uname(&uts); err == nil {
		release = " " + unix.ByteSliceToString(uts.Release[:])
	}
	if _, err := unix.SchedGetAttr(0, 0); err != nil {
		parts = append(parts, fmt.Sprintf("sched_setattr unavailable (%v)", err))
	} else {
		parts = append(parts, "sched_setattr")
	}
	switch probeUclamp() {
	case uclampAvailable:
		parts = append(parts, "uclamp available")
	case uclampUnavailable:
		parts = append(parts, "uclamp unavailable (kernel has no CONFIG_UCLAMP_TASK)")
	default:
		parts = append(parts, "uclamp unknown ("+uclampSysctl+" unreadable)")
	}
	switch has, err := hasCapSysNice(); {
	case err != nil:
		parts = append(parts, fmt.Sprintf("CAP_SYS_NICE unknown (%v)", err))
	case has:
		parts = append(parts, "CAP_SYS_NICE present")
	default:
		floor := niceFloorWithoutCap()
		parts = append(parts, fmt.Sprintf("CAP_SYS_NICE absent (RLIMIT_NICE allows nice >= %d; user-initiated and user-interactive need nice -5 and -10: %s)", floor, capSysNiceHowTo))
	}
	return "linux" + release + ": " + strings.Join(parts, ", ")
}

// hasCapSysNice reports whether the calling thread has CAP_SYS_NICE in its
// effective set (capabilities are per thread on Linux).
func hasCapSysNice() (bool, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, fmt.Errorf("capget: %w", err)
	}
	return data[unix.CAP_SYS_NICE/32].Effective&(1<<(unix.CAP_SYS_NICE%32)) != 0, nil
}
