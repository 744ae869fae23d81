//go:build linux

package qos

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/procsched"
)

// onDiscardedThread runs f on a locked OS thread that is never unlocked, so
// the runtime ends the thread when the goroutine exits and whatever f did to
// it dies with it, as it does for the agent's workers.
func onDiscardedThread[T any](f func() T) T {
	done := make(chan T, 1)
	go func() {
		runtime.LockOSThread()
		done <- f()
	}()
	return <-done
}

// rawSched is a thread's scheduling state read with raw syscalls, without
// this package's read-back code.
type rawSched struct {
	tid              int
	policy           uint32
	nice             int // sched_getattr's sched_nice
	getpriorityNice  int // 20 - getpriority's raw answer
	utilMin, utilMax uint32
	err              error
}

func readRawSched(tid int) rawSched {
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return rawSched{err: fmt.Errorf("sched_getattr: %w", err)}
	}
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return rawSched{err: fmt.Errorf("getpriority: %w", err)}
	}
	if tid == 0 {
		tid = unix.Gettid()
	}
	return rawSched{tid: tid, policy: attr.Policy, nice: int(attr.Nice), getpriorityNice: 20 - prio, utilMin: attr.Util_min, utilMax: attr.Util_max}
}

// threadCapSysNice reports whether the calling thread has CAP_SYS_NICE in its effective set.
func threadCapSysNice() (bool, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, err
	}
	return data[0].Effective&(1<<unix.CAP_SYS_NICE) != 0, nil
}

// dropCapSysNice removes CAP_SYS_NICE from the calling thread's effective set
// (capset changes only the calling thread).
func dropCapSysNice() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[0].Effective &^= 1 << unix.CAP_SYS_NICE
	hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// kernelUclamp probes, on a discarded thread, whether the kernel accepts
// utilization clamps at all.
func kernelUclamp(t *testing.T) bool {
	t.Helper()
	err := onDiscardedThread(func() error {
		flags := uint64(unix.SCHED_FLAG_KEEP_ALL | unix.SCHED_FLAG_UTIL_CLAMP_MAX)
		return unix.SchedSetAttr(0, &unix.SchedAttr{Flags: flags, Util_max: 1024}, 0)
	})
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
		return false
	}
	require.NoError(t, err, "probe uclamp")
	return true
}

// processCapSysNice is whether a fresh thread of this process has CAP_SYS_NICE.
func processCapSysNice(t *testing.T) bool {
	t.Helper()
	type result struct {
		has bool
		err error
	}
	r := onDiscardedThread(func() result {
		has, err := threadCapSysNice()
		return result{has, err}
	})
	require.NoError(t, r.err, "capget")
	return r.has
}

// onBaseThread runs f as onDiscardedThread does, on a thread first put at
// SCHED_OTHER nice 0 without clamps, the base the expectations below build
// on: a test run under `nice -n 10` hands out threads at nice 10, which
// would read back as no class at all. A process that may not lower its
// nice (no CAP_SYS_NICE, RLIMIT_NICE 0) cannot make that base, and the test
// is skipped saying so.
func onBaseThread[T any](t *testing.T, f func() T) T {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	r := onDiscardedThread(func() result {
		if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_NORMAL}, 0); err != nil {
			return result{err: err}
		}
		flags := uint64(unix.SCHED_FLAG_KEEP_POLICY | unix.SCHED_FLAG_KEEP_PARAMS | unix.SCHED_FLAG_UTIL_CLAMP_MIN | unix.SCHED_FLAG_UTIL_CLAMP_MAX)
		_ = unix.SchedSetAttr(0, &unix.SchedAttr{Flags: flags, Util_max: uclampScale}, 0) // refused without uclamp: nothing to reset
		return result{v: f()}
	})
	if r.err != nil {
		t.Skipf("cannot put a test thread at SCHED_OTHER nice 0 (%v): this test runs under a raised nice without CAP_SYS_NICE; run it as root or without nice", r.err)
	}
	return r.v
}

func TestApplySelfLinuxMapping(t *testing.T) {
	hasCap := processCapSysNice(t)
	hasUclamp := kernelUclamp(t)
	cases := []struct {
		class    Class
		policy   uint32
		nice     int // checked unless the policy is SCHED_IDLE
		needsCap bool
		clamped  bool
	}{
		{Background, unix.SCHED_IDLE, 0, false, true},
		{Utility, unix.SCHED_BATCH, 10, false, false},
		{Default, unix.SCHED_NORMAL, 0, false, false},
		{UserInitiated, unix.SCHED_NORMAL, -5, true, false},
		{UserInteractive, unix.SCHED_NORMAL, -10, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.class.String(), func(t *testing.T) {
			if tc.needsCap && !hasCap {
				t.Skipf("%s needs CAP_SYS_NICE, which this process lacks (TestApplySelfWithoutCapSysNice covers that path)", tc.class)
			}
			type result struct {
				a   Applied
				raw rawSched
			}
			r := onBaseThread(t, func() result {
				a := ApplySelf(tc.class)
				return result{a, readRawSched(0)}
			})
			require.NoError(t, r.raw.err)

			assert.Equal(t, tc.policy, r.raw.policy, "policy")
			if tc.policy != unix.SCHED_IDLE {
				assert.Equal(t, tc.nice, r.raw.nice, "sched_getattr nice")
			}
			assert.Equal(t, r.raw.nice, r.raw.getpriorityNice, "getpriority agrees with sched_getattr")

			assert.Equal(t, tc.class, r.a.Asked)
			assert.Equal(t, tc.class, r.a.Applied)
			assert.True(t, r.a.OK())
			assert.Contains(t, r.a.Detail, procsched.PolicyName(int(tc.policy)))
			wantFull := !tc.clamped || hasUclamp
			assert.Equal(t, wantFull, r.a.Full, "Full (reason %q)", r.a.Reason)
			assert.Equal(t, wantFull, r.a.Reason == "", "a reason exactly when not Full: %q", r.a.Reason)
		})
	}
}

func TestApplySelfWithoutCapSysNice(t *testing.T) {
	var rl unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NICE, &rl))
	floor := 20 - int(min(rl.Cur, 40))
	cases := []struct {
		class Class
		nice  int
	}{
		{UserInitiated, -5},
		{UserInteractive, -10},
	}
	for _, tc := range cases {
		t.Run(tc.class.String(), func(t *testing.T) {
			if floor <= tc.nice {
				t.Skipf("RLIMIT_NICE=%d lets any thread of this process take nice %d without CAP_SYS_NICE", rl.Cur, tc.nice)
			}
			type result struct {
				dropErr       error
				capAfterDrop  bool
				support       string
				a             Applied
				before, after rawSched
			}
			r := onBaseThread(t, func() result {
				var r result
				r.before = readRawSched(0)
				if r.dropErr = dropCapSysNice(); r.dropErr != nil {
					return r
				}
				r.capAfterDrop, r.dropErr = threadCapSysNice()
				r.support = Support()
				r.a = ApplySelf(tc.class)
				r.after = readRawSched(0)
				return r
			})
			require.NoError(t, r.dropErr)
			require.False(t, r.capAfterDrop, "CAP_SYS_NICE still effective after capset")
			require.NoError(t, r.before.err)
			require.NoError(t, r.after.err)

			assert.Equal(t, tc.class, r.a.Asked)
			assert.NotEqual(t, r.a.Asked, r.a.Applied)
			assert.Equal(t, Default, r.a.Applied, "a refused raise leaves the thread at default")
			assert.False(t, r.a.Full)
			assert.Contains(t, r.a.Reason, "CAP_SYS_NICE")
			assert.Contains(t, r.a.Reason, "setcap cap_sys_nice+ep")
			assert.Equal(t, r.before.nice, r.after.nice, "nice unchanged by the refused call")
			assert.Equal(t, uint32(unix.SCHED_NORMAL), r.after.policy)
			assert.Contains(t, r.support, "CAP_SYS_NICE absent")
		})
	}
}

func TestApplySelfFallsBackToRlimitNice(t *testing.T) {
	var orig unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NICE, &orig))
	// 25 lets a thread without CAP_SYS_NICE go down to nice -5 (user-initiated).
	raised := unix.Rlimit{Cur: 25, Max: max(orig.Max, 25)}
	if err := unix.Setrlimit(unix.RLIMIT_NICE, &raised); err != nil {
		t.Skipf("cannot raise RLIMIT_NICE to 25 (needs CAP_SYS_RESOURCE when the hard limit is %d): %v", orig.Max, err)
	}
	t.Cleanup(func() { assert.NoError(t, unix.Setrlimit(unix.RLIMIT_NICE, &orig), "restore RLIMIT_NICE") })

	type result struct {
		dropErr error
		a       Applied
		after   rawSched
	}
	r := onBaseThread(t, func() result {
		var r result
		if r.dropErr = dropCapSysNice(); r.dropErr != nil {
			return r
		}
		r.a = ApplySelf(UserInteractive)
		r.after = readRawSched(0)
		return r
	})
	require.NoError(t, r.dropErr)
	require.NoError(t, r.after.err)
	assert.Equal(t, -5, r.after.nice, "settles for the nice RLIMIT_NICE allows")
	assert.Equal(t, UserInitiated, r.a.Applied)
	assert.False(t, r.a.Full)
	assert.Contains(t, r.a.Reason, "CAP_SYS_NICE")
}

func TestApplySelfUclamp(t *testing.T) {
	hasUclamp := kernelUclamp(t)
	hasCap := processCapSysNice(t)
	cases := []struct {
		class            Class
		needsCap         bool
		utilMin, utilMax uint32
	}{
		{Background, false, 0, uclampBackgroundMax},
		{UserInteractive, true, uclampUserInteractiveMin, 1024},
	}
	for _, tc := range cases {
		t.Run(tc.class.String(), func(t *testing.T) {
			if tc.needsCap && !hasCap {
				t.Skipf("%s needs CAP_SYS_NICE, which this process lacks", tc.class)
			}
			type result struct {
				a   Applied
				raw rawSched
			}
			r := onBaseThread(t, func() result {
				a := ApplySelf(tc.class)
				return result{a, readRawSched(0)}
			})
			require.NoError(t, r.raw.err)
			assert.Equal(t, tc.class, r.a.Applied, "the class counts as applied when policy and nice read back right")
			if hasUclamp {
				assert.True(t, r.a.Full, "reason %q", r.a.Reason)
				assert.Equal(t, tc.utilMin, r.raw.utilMin, "uclamp min")
				assert.Equal(t, tc.utilMax, r.raw.utilMax, "uclamp max")
				assert.Contains(t, r.a.Detail, fmt.Sprintf("uclamp=%d..%d", tc.utilMin, tc.utilMax))
			} else {
				assert.False(t, r.a.Full)
				assert.Contains(t, r.a.Reason, "uclamp unavailable")
				assert.Contains(t, r.a.Detail, "uclamp=unsupported")
			}
		})
	}
}

func TestApplySelfResetsStaleUclamp(t *testing.T) {
	if !kernelUclamp(t) {
		t.Skip("kernel has no uclamp: no clamp can go stale")
	}
	type result struct {
		setErr error
		a      Applied
		raw    rawSched
	}
	r := onDiscardedThread(func() result {
		flags := uint64(unix.SCHED_FLAG_KEEP_ALL | unix.SCHED_FLAG_UTIL_CLAMP_MIN | unix.SCHED_FLAG_UTIL_CLAMP_MAX)
		if err := unix.SchedSetAttr(0, &unix.SchedAttr{Flags: flags, Util_min: 100, Util_max: 200}, 0); err != nil {
			return result{setErr: err}
		}
		a := ApplySelf(Default)
		return result{a: a, raw: readRawSched(0)}
	})
	require.NoError(t, r.setErr, "set a stale clamp")
	require.NoError(t, r.raw.err)
	assert.True(t, r.a.Full, "reason %q", r.a.Reason)
	assert.Equal(t, uint32(0), r.raw.utilMin)
	assert.Equal(t, uint32(1024), r.raw.utilMax)
}

func TestApplySelfDoesNotLeakToOtherThreads(t *testing.T) {
	// A peer thread, looked at by tid before and after another thread
	// applies background to itself.
	peer := make(chan int)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: whatever happens to it ends with it
		peer <- unix.Gettid()
		<-release
	}()
	defer close(release)
	tid := <-peer
	before := readRawSched(tid)
	require.NoError(t, before.err)
	require.NotEqual(t, uint32(unix.SCHED_IDLE), before.policy, "precondition: the peer is not background already")

	bg := onDiscardedThread(func() rawSched {
		ApplySelf(Background)
		return readRawSched(0)
	})
	require.NoError(t, bg.err)
	require.Equal(t, uint32(unix.SCHED_IDLE), bg.policy, "precondition: background applied")
	require.NotEqual(t, tid, bg.tid, "two different threads")

	after := readRawSched(tid)
	require.NoError(t, after.err)
	assert.Equal(t, before, after, "the peer thread is untouched")
}

func TestApplySelfUnknownClass(t *testing.T) {
	for _, c := range []Class{Unspecified, Class(5), Class(-1)} {
		t.Run(c.String(), func(t *testing.T) {
			type result struct {
				a             Applied
				before, after rawSched
			}
			r := onDiscardedThread(func() result {
				before := readRawSched(0)
				a := ApplySelf(c)
				return result{a, before, readRawSched(0)}
			})
			require.NoError(t, r.before.err)
			require.NoError(t, r.after.err)
			assert.Equal(t, c, r.a.Asked)
			assert.Equal(t, linuxClass(r.before.policy, r.before.nice), r.a.Applied, "the thread is left as it was, and read back as such")
			assert.False(t, r.a.Full)
			assert.Contains(t, r.a.Reason, fmt.Sprintf("unknown QoS class %d", int(c)))
			assert.Contains(t, r.a.Reason, Allowed)
			assert.Equal(t, r.before, r.after)
		})
	}
}

func TestReadSelfFromRawSchedAttr(t *testing.T) {
	hasCap := processCapSysNice(t)
	cases := []struct {
		policy uint32
		nice   int
		want   Class
		detail string
	}{
		{unix.SCHED_IDLE, 0, Background, "SCHED_IDLE nice=0"},
		{unix.SCHED_BATCH, 10, Utility, "SCHED_BATCH nice=10"},
		{unix.SCHED_NORMAL, 0, Default, "SCHED_OTHER nice=0"},
		{unix.SCHED_NORMAL, -5, UserInitiated, "SCHED_OTHER nice=-5"},
		{unix.SCHED_NORMAL, -10, UserInteractive, "SCHED_OTHER nice=-10"},
		{unix.SCHED_BATCH, 5, Unspecified, "SCHED_BATCH nice=5"},
		{unix.SCHED_NORMAL, 3, Unspecified, "SCHED_OTHER nice=3"},
	}
	for _, tc := range cases {
		t.Run(tc.detail, func(t *testing.T) {
			if tc.nice < 0 && !hasCap {
				t.Skipf("nice %d needs CAP_SYS_NICE, which this process lacks", tc.nice)
			}
			type result struct {
				setErr  error
				class   Class
				detail  string
				readErr error
			}
			r := onBaseThread(t, func() result {
				if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: tc.policy, Nice: int32(tc.nice)}, 0); err != nil {
					return result{setErr: err}
				}
				c, d, err := ReadSelf()
				return result{class: c, detail: d, readErr: err}
			})
			require.NoError(t, r.setErr, "sched_setattr")
			require.NoError(t, r.readErr)
			assert.Equal(t, tc.want, r.class)
			assert.Contains(t, r.detail, tc.detail)
		})
	}
}

func TestSupportLinux(t *testing.T) {
	hasUclamp := kernelUclamp(t)
	hasCap := processCapSysNice(t)
	s := onDiscardedThread(Support)
	assert.Contains(t, s, "linux ")
	assert.Contains(t, s, "sched_setattr")
	if hasUclamp {
		assert.Contains(t, s, "uclamp available")
	} else {
		assert.Contains(t, s, "uclamp unavailable (kernel has no CONFIG_UCLAMP_TASK)")
	}
	if hasCap {
		assert.Contains(t, s, "CAP_SYS_NICE present")
	} else {
		assert.Contains(t, s, "CAP_SYS_NICE absent")
	}
}

func TestLinuxClass(t *testing.T) {
	cases := []struct {
		policy uint32
		nice   int
		want   Class
	}{
		{unix.SCHED_IDLE, 0, Background},
		{unix.SCHED_IDLE, 7, Background},
		{unix.SCHED_BATCH, 10, Utility},
		{unix.SCHED_BATCH, 0, Unspecified},
		{unix.SCHED_NORMAL, 0, Default},
		{unix.SCHED_NORMAL, -5, UserInitiated},
		{unix.SCHED_NORMAL, -10, UserInteractive},
		{unix.SCHED_NORMAL, 10, Unspecified},
		{unix.SCHED_FIFO, 0, Unspecified},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", procsched.PolicyName(int(tc.policy)), tc.nice), func(t *testing.T) {
			assert.Equal(t, tc.want, linuxClass(tc.policy, tc.nice))
		})
	}
}

func TestLinuxMappingRoundTrips(t *testing.T) {
	for _, c := range all {
		m, ok := linuxMapping(c)
		require.True(t, ok, "%s has a mapping", c)
		assert.Equal(t, c, linuxClass(m.policy, m.nice), "%s reads back as itself", c)
		assert.LessOrEqual(t, m.utilMin, m.utilMax)
		assert.LessOrEqual(t, m.utilMax, uint32(uclampScale))
	}
	_, ok := linuxMapping(Unspecified)
	assert.False(t, ok)
}

func TestFallbackNice(t *testing.T) {
	cases := []struct {
		name         string
		asked, floor int
		want         int
	}{
		{"default limit", -10, 20, 0},
		{"limit allows part", -10, -5, -5},
		{"limit allows all", -10, -15, -10},
		{"limit at zero", -5, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, fallbackNice(tc.asked, tc.floor))
		})
	}
}

func TestThreadSchedString(t *testing.T) {
	cases := []struct {
		s    threadSched
		want string
	}{
		{threadSched{policy: unix.SCHED_IDLE, uclamp: uclampUnavailable}, "SCHED_IDLE nice=0 uclamp=unsupported"},
		{threadSched{policy: unix.SCHED_NORMAL, nice: -10, utilMin: 768, utilMax: 1024, uclamp: uclampAvailable}, "SCHED_OTHER nice=-10 uclamp=768..1024"},
		{threadSched{policy: unix.SCHED_BATCH, nice: 10}, "SCHED_BATCH nice=10 uclamp=unknown"},
		{threadSched{policy: 42, nice: 1, uclamp: uclampUnavailable}, "policy(42) nice=1 uclamp=unsupported"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.s.String())
		})
	}
}

func BenchmarkApplySelf(b *testing.B) {
	// Locked for good so the benchmark's thread is discarded with its class.
	runtime.LockOSThread()
	for b.Loop() {
		ApplySelf(Default)
	}
}

func BenchmarkReadSelf(b *testing.B) {
	runtime.LockOSThread()
	for b.Loop() {
		if _, _, err := ReadSelf(); err != nil {
			b.Fatal(err)
		}
	}
}

// The portable reading of a policy agrees with the mapping qoslab applies.
func TestClassOfLinuxPolicyAgreesWithTheMapping(t *testing.T) {
	for _, c := range all {
		m, ok := linuxMapping(c)
		require.True(t, ok)
		assert.Equal(t, c, ClassOfLinuxPolicy(procsched.PolicyName(int(m.policy)), m.nice), "%s", c)
		assert.Equal(t, linuxClass(m.policy, m.nice), ClassOfLinuxPolicy(procsched.PolicyName(int(m.policy)), m.nice))
	}
	assert.Equal(t, Background, ClassOfLinuxPolicy("SCHED_IDLE", 10), "nice does not matter to SCHED_IDLE")
	assert.Equal(t, Unspecified, ClassOfLinuxPolicy("SCHED_FIFO", 0))
	assert.Equal(t, Unspecified, ClassOfLinuxPolicy("SCHED_OTHER", 3))
}
