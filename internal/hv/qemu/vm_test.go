package qemu

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/testvm"
)

// These tests boot QEMU for real, with a stub kernel instead of Linux: a
// multiboot image of a few bytes that QEMU's x86 loader starts directly.
// It writes a marker to the serial port, so the console log shows that
// the guest ran, then halts (or, as the "reset" stub, spins a while and
// executes an invalid instruction with no interrupt table, which triple
// faults and resets the machine). A boot takes a fraction of a second
// under TCG, and all that is needed is qemu-system-x86_64.

// stubMarker is what the stub kernels write to the console.
const stubMarker = "Q"

// stubKernel returns the bytes of a multiboot kernel running code.
func stubKernel(code []byte) []byte {
	const (
		magic    = 0x1BADB002
		flags    = 1 << 16 // the header gives the load addresses (no ELF)
		loadAddr = 0x100000
		hdrSize  = 32
	)
	sum := uint32(magic + flags)
	checksum := -sum // the three first words add up to 0
	words := []uint32{magic, flags, checksum, loadAddr, loadAddr, 0, 0, loadAddr + hdrSize}
	var b bytes.Buffer
	for _, w := range words {
		_ = binary.Write(&b, binary.LittleEndian, w)
	}
	b.Write(code)
	return b.Bytes()
}

// Stub code, 32-bit protected mode as multiboot starts it.
var (
	printMarker = []byte{
		0x66, 0xBA, 0xF8, 0x03, // mov dx, 0x3f8 (COM1)
		0xB0, stubMarker[0], // mov al, 'Q'
		0xEE, // out dx, al
	}
	haltForever = []byte{0xF4, 0xEB, 0xFD} // hlt; jmp back to hlt
	spinThenUD2 = []byte{
		0xB9, 0x00, 0x00, 0x00, 0x10, // mov ecx, 0x10000000
		0x49, 0x75, 0xFD, // dec ecx; jnz back
		0x0F, 0x0B, // ud2
	}
)

// stubImage writes a stub kernel and a dummy initramfs (multiboot loads it
// as a module) and returns them as an image.
func stubImage(t testing.TB, code ...[]byte) hv.Image {
	dir := t.TempDir()
	img := hv.Image{Name: "stub", Dir: dir, Arch: "amd64", Kernel: filepath.Join(dir, "kernel"), Initramfs: filepath.Join(dir, "initrd")}
	require.NoError(t, os.WriteFile(img.Kernel, stubKernel(bytes.Join(code, nil)), 0o644))
	require.NoError(t, os.WriteFile(img.Initramfs, []byte("not an initramfs"), 0o644))
	return img
}

// vmMissing skips a test that needs what this host lacks to boot a VM
// (QEMU, a kernel, vhost-device-vsock), or fails it with
// QOSLAB_REQUIRE_VM=1, which CI sets so that no VM test is skipped there.
func vmMissing(t testing.TB, why string) {
	t.Helper()
	testvm.Missing(t, why, "run scripts/setup.sh and make test-deps")
}

// requireQEMU skips (or, with QOSLAB_REQUIRE_VM=1, fails) a test that boots
// QEMU when there is none.
func requireQEMU(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		vmMissing(t, "qemu-system-x86_64 is not installed (sudo apt-get install qemu-system-x86)")
	}
}

// consoleShows is a Ready that waits for marker in the console log.
func consoleShows(marker string) func(context.Context, hv.Machine) error {
	return func(ctx context.Context, m hv.Machine) error {
		for {
			if b, err := os.ReadFile(m.Info().ConsoleLog); err == nil && bytes.Contains(b, []byte(marker)) {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// shortTempDir is a state directory whose socket paths fit in sockaddr_un
// however long the test's name.
func shortTempDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "qoslab-vm-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func stubSpec(t *testing.T, img hv.Image) hv.Spec {
	return hv.Spec{
		Name: "stub", Image: img, CPUs: min(2, runtime.NumCPU()), MemoryMiB: 128,
		Accel: AccelTCG, StateDir: shortTempDir(t), Ready: consoleShows(stubMarker),
	}
}

// startVM starts spec and makes sure the VM is stopped when the test ends.
func startVM(t *testing.T, b *Backend, spec hv.Spec) hv.Machine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := b.Start(ctx, spec)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Stop(context.Background())) })
	return m
}

// processGone says whether no process has pid (a zombie still counts).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func waitDone(t *testing.T, m hv.Machine, within time.Duration) {
	t.Helper()
	select {
	case <-m.Done():
	case <-time.After(within):
		require.FailNow(t, "the VM's end was not noticed", "within %s", within)
	}
}

func TestStartStop(t *testing.T) {
	requireQEMU(t)
	b := New(Options{CacheDir: t.TempDir()})
	spec := stubSpec(t, stubImage(t, printMarker, haltForever))
	spec.DiskBytes = 5<<20 + 1
	m := startVM(t, b, spec)

	info := m.Info()
	assert.Equal(t, "qemu", info.Backend)
	assert.Equal(t, AccelTCG, info.Accel)
	assert.Equal(t, spec.CPUs, info.CPUs)
	assert.Equal(t, spec.StateDir, info.StateDir)
	assert.Positive(t, info.BootNs)
	assert.Equal(t, "/dev/vda", info.GuestDisk)
	st, err := os.Stat(info.Disk)
	require.NoError(t, err)
	assert.Equal(t, int64(6<<20), st.Size(), "the disk is rounded up to whole MiB")

	// Each vCPU has its own thread (multi-threaded TCG), inside QEMU.
	require.Len(t, info.VCPUThreads, spec.CPUs)
	seen := map[int]bool{}
	for _, tid := range info.VCPUThreads {
		assert.Positive(t, tid)
		assert.False(t, seen[tid], "vCPU threads are distinct")
		seen[tid] = true
		if runtime.GOOS == "linux" {
			assert.DirExists(t, "/proc/"+strconv.Itoa(info.PID)+"/task/"+strconv.Itoa(tid))
		}
	}
	pgid, err := syscall.Getpgid(info.PID)
	require.NoError(t, err)
	assert.Equal(t, info.PID, pgid, "QEMU has its own process group, out of reach of the terminal's Ctrl-C")

	state, err := ReadState(spec.StateDir)
	require.NoError(t, err)
	assert.Equal(t, info, state.Info, "vm.json describes the running VM")
	assert.True(t, state.Running())

	_, err = b.Start(context.Background(), spec)
	assert.ErrorContains(t, err, "already running", "a state directory holds one VM")

	conn, err := m.DialAgent(context.Background())
	require.NoError(t, err, "the agent's virtio-serial socket accepts")
	_ = conn.Close()

	require.NoError(t, m.Stop(context.Background()))
	waitDone(t, m, time.Second)
	assert.NoError(t, m.Err(), "a stop is clean")
	assert.True(t, processGone(info.PID))
	assert.NoFileExists(t, filepath.Join(spec.StateDir, qmpSocketFile))
	assert.False(t, state.Running())
	assert.NoError(t, m.Stop(context.Background()), "Stop again does nothing")
	_, err = m.DialAgent(context.Background())
	assert.ErrorContains(t, err, "the VM has ended")
}

func TestKilledFromOutside(t *testing.T) {
	requireQEMU(t)
	b := New(Options{CacheDir: t.TempDir()})
	m := startVM(t, b, stubSpec(t, stubImage(t, printMarker, haltForever)))
	pid := m.Info().PID
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	// The contract: a VM killed from outside is noticed within 2 s.
	waitDone(t, m, 2*time.Second)
	require.Error(t, m.Err())
	assert.Contains(t, m.Err().Error(), "died of signal 9")
	assert.True(t, processGone(pid))
}

func TestGuestReset(t *testing.T) {
	requireQEMU(t)
	b := New(Options{CacheDir: t.TempDir()})
	m := startVM(t, b, stubSpec(t, stubImage(t, printMarker, spinThenUD2)))
	waitDone(t, m, 30*time.Second)
	require.Error(t, m.Err(), "-no-reboot ends QEMU, and the SHUTDOWN event says why")
	assert.Contains(t, m.Err().Error(), "the guest rebooted or its kernel panicked (QEMU: guest-reset)")
}

func TestAttach(t *testing.T) {
	requireQEMU(t)
	spec := stubSpec(t, stubImage(t, printMarker, haltForever))
	spec.Detach = true
	owner := startVM(t, New(Options{CacheDir: t.TempDir()}), spec)
	info := owner.Info()
	sid, err := unix.Getsid(info.PID)
	require.NoError(t, err)
	assert.Equal(t, info.PID, sid, "a detached VM has its own session")

	attached, err := New(Options{}).Attach(context.Background(), spec.StateDir)
	require.NoError(t, err)
	got := attached.Info()
	assert.Equal(t, info.PID, got.PID)
	assert.Equal(t, info.VCPUThreads, got.VCPUThreads, "read again over QMP")
	assert.Equal(t, info.Image, got.Image)
	assert.Zero(t, got.BootNs, "not booted by this controller")

	require.NoError(t, attached.Stop(context.Background()))
	waitDone(t, attached, time.Second)
	waitDone(t, owner, time.Second)
	assert.NoError(t, attached.Err())
	assert.True(t, processGone(info.PID))

	_, err = New(Options{}).Attach(context.Background(), spec.StateDir)
	assert.ErrorContains(t, err, "it is not running")
}

func TestAttachedNoticesKill(t *testing.T) {
	requireQEMU(t)
	spec := stubSpec(t, stubImage(t, printMarker, haltForever))
	spec.Detach = true
	owner := startVM(t, New(Options{CacheDir: t.TempDir()}), spec)
	attached, err := New(Options{}).Attach(context.Background(), spec.StateDir)
	require.NoError(t, err)

	require.NoError(t, syscall.Kill(owner.Info().PID, syscall.SIGKILL))
	waitDone(t, attached, 2*time.Second)
	require.Error(t, attached.Err())
	assert.Contains(t, attached.Err().Error(), "ended outside this controller")
}

func TestStartCancelledDuringBoot(t *testing.T) {
	requireQEMU(t)
	spec := stubSpec(t, stubImage(t, haltForever)) // never prints the marker
	ctx, cancel := context.WithCancel(context.Background())
	var pid int
	spec.Ready = func(ctx context.Context, m hv.Machine) error {
		pid = m.Info().PID
		cancel() // Ctrl-C while booting
		<-ctx.Done()
		return ctx.Err()
	}
	m, err := New(Options{CacheDir: t.TempDir()}).Start(ctx, spec)
	assert.Nil(t, m)
	require.ErrorIs(t, err, context.Canceled)
	require.Positive(t, pid)
	assert.True(t, processGone(pid), "no QEMU is left")
}

func TestBootFailureStopsVM(t *testing.T) {
	requireQEMU(t)
	spec := stubSpec(t, stubImage(t, haltForever))
	var pid int
	spec.Ready = func(ctx context.Context, m hv.Machine) error {
		pid = m.Info().PID
		return errors.New("the agent refused the protocol version")
	}
	_, err := New(Options{CacheDir: t.TempDir()}).Start(context.Background(), spec)
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "the agent refused the protocol version")
	assert.Contains(t, err.Error(), "console.log")
	assert.True(t, processGone(pid))
}

func TestQEMUFailsToStart(t *testing.T) {
	requireQEMU(t)
	spec := stubSpec(t, stubImage(t, haltForever))
	spec.MemoryMiB = 1 << 30 // 1 PiB: more than QEMU can map
	_, err := New(Options{CacheDir: t.TempDir()}).Start(context.Background(), spec)
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "qemu exited at start", "QEMU's own words are in the error")
}

// The KVM probe, run for real: where KVM boots the stub within the probe
// timeout the VM uses KVM; where it does not (this project's machines run
// nested KVM, which starts the firmware in seconds and then hangs in the
// Linux kernel or aborts), the VM falls back to TCG, says so, and the next start remembers.
func TestKVMProbe(t *testing.T) {
	requireQEMU(t)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the KVM probe runs on Linux, and the stub kernel is x86")
	}
	if problem := kvmProblem(); problem != "" {
		t.Skipf("no KVM to probe: %s", problem)
	}
	cache := t.TempDir()
	b := New(Options{CacheDir: cache, ProbeTimeout: 1500 * time.Millisecond})
	var log bytes.Buffer
	spec := stubSpec(t, stubImage(t, printMarker, haltForever))
	spec.Accel, spec.Log = "", &log
	m := startVM(t, b, spec)
	remembered := filepath.Join(cache, probeFailuresFile)
	t.Logf("KVM probe with a %s timeout: %s; log:\n%s", b.opts.ProbeTimeout, m.Info().Accel, log.String())

	switch m.Info().Accel {
	case accelKVM:
		assert.Empty(t, log.String())
		assert.NoFileExists(t, remembered)
	case AccelTCG:
		// Nested KVM either hangs in the guest kernel (no agent within the
		// timeout) or aborts QEMU at start (kvm_pvm does both, by kernel).
		assert.Regexp(t, `KVM probe: (no agent within 1\.5s \(nested KVM\?\)|the boot failed: .+); using TCG, which is slower\. Force with --accel kvm\|tcg\.`, log.String())
		assert.FileExists(t, remembered)
		assert.FileExists(t, filepath.Join(spec.StateDir, probeConsoleLog), "the probe's console is kept")
		require.NoError(t, m.Stop(context.Background()))

		// The next start believes the failure and does not probe.
		log.Reset()
		m = startVM(t, b, spec)
		assert.Equal(t, AccelTCG, m.Info().Accel)
		assert.Contains(t, log.String(), "KVM probe failed at")
		assert.NotContains(t, log.String(), "KVM probe: no agent")

		checks := b.Check(context.Background())
		var probe *hv.Check
		for i := range checks {
			if checks[i].Name == "KVM probe" {
				probe = &checks[i]
			}
		}
		require.NotNil(t, probe)
		assert.True(t, probe.OK, "an unusable KVM is a warning, not a thing missing: TCG is used")
		assert.True(t, probe.Warn)
		assert.Contains(t, probe.Detail, "KVM is present but unusable here: a probe boot failed at")
		assert.Contains(t, probe.Fix, "rm "+remembered)
	default:
		t.Fatalf("accelerator %q: want kvm or tcg", m.Info().Accel)
	}
}
