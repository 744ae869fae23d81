package vz

import (
	"encoding/json"
	"github.com/qoslab/qoslab/internal/guestchan"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
)

// testLimits are a small Mac's: 1 to 8 vCPUs, 128 MiB to 16 GiB.
var testLimits = Limits{MinCPUs: 1, MaxCPUs: 8, MinMemoryBytes: 128 << 20, MaxMemoryBytes: 16 << 30}

// linuxImage makes an arm64 image's files: its kernel compressed, and
// uncompressed as the image build writes it.
func linuxImage(t *testing.T) hv.Image {
	t.Helper()
	dir := t.TempDir()
	img := hv.Image{Name: "linux-arm64", Dir: dir, Kernel: filepath.Join(dir, "vmlinuz"), UncompressedKernel: filepath.Join(dir, "Image"),
		Initramfs: filepath.Join(dir, "initramfs.cpio.gz"), Cmdline: "quiet panic=-1 console=ttyAMA0", Arch: "arm64"}
	require.NoError(t, os.WriteFile(img.Kernel, []byte("compressed kernel"), 0o644))
	require.NoError(t, os.WriteFile(img.UncompressedKernel, []byte("kernel"), 0o644))
	require.NoError(t, os.WriteFile(img.Initramfs, []byte("initramfs"), 0o644))
	return img
}

func TestPlanLinux(t *testing.T) {
	img := linuxImage(t)
	dir := t.TempDir()
	p, err := planVM(hv.Spec{Image: img, CPUs: 2, MemoryMiB: 512, DiskBytes: 1, StateDir: dir}, testLimits)
	require.NoError(t, err)
	assert.Equal(t, guestLinux, p.Kind)
	assert.Equal(t, hv.DefaultBootTimeout(hv.MachineInfo{Backend: backendName, Accel: backendName, Image: img}), p.bootTimeout())
	assert.Equal(t, filepath.Base(dir), p.Name)
	assert.Equal(t, 2, p.CPUs)
	assert.Equal(t, 512, p.MemoryMiB)
	assert.Equal(t, uint64(512<<20), p.MemoryBytes())
	assert.Equal(t, img.UncompressedKernel, p.Kernel, "the framework boots the kernel uncompressed")
	assert.Equal(t, img.Initramfs, p.Initramfs)
	assert.Equal(t, "quiet panic=-1 console=hvc0 qoslab.listen=vsock:1024", p.Cmdline, "the virtio console is the only console (vz has no UART), and vsock the agent's one channel")
	assert.Equal(t, filepath.Join(dir, consoleLogFile), p.ConsoleLog)
	assert.Equal(t, filepath.Join(dir, agentSocketFile), p.AgentSocket)
	assert.Equal(t, uint32(guestchan.VsockPort), p.AgentPort)
	assert.Equal(t, filepath.Join(dir, scratchDiskFile), p.ScratchDisk)
	assert.Equal(t, int64(1<<20), p.ScratchBytes, "the scratch disk is rounded up to whole MiB")
	assert.Equal(t, cachingUncached, p.ScratchCaching)
	assert.Equal(t, "/dev/vda", p.GuestDisk)
	assert.False(t, p.NAT, "a Linux guest is reached over vsock only")
	assert.Equal(t, linuxStopTimeout, p.StopTimeout)
	assert.Empty(t, p.Notes)
	assert.Empty(t, p.Bundle)

	p, err = planVM(hv.Spec{Image: img, CPUs: 1, MemoryMiB: 256, StateDir: dir}, testLimits)
	require.NoError(t, err)
	assert.Empty(t, p.ScratchDisk, "no scratch disk asked for")
	assert.Empty(t, p.GuestDisk)

	old := img
	old.UncompressedKernel = ""
	_, err = planVM(hv.Spec{Image: old, CPUs: 1, MemoryMiB: 256, StateDir: dir}, testLimits)
	assert.ErrorContains(t, err, "has no uncompressed kernel", "an image built before the build wrote one")
	assert.ErrorContains(t, err, "qoslab image build linux --arch arm64")
}

func TestPlanCPUsAndMemory(t *testing.T) {
	cases := []struct {
		name      string
		lim       Limits
		cpus, mem int
		wantCPUs  int
		wantMem   int
		err       string
		note      string
	}{
		{name: "in range", lim: testLimits, cpus: 8, mem: 16384, wantCPUs: 8, wantMem: 16384},
		{name: "lowest", lim: testLimits, cpus: 1, mem: 128, wantCPUs: 1, wantMem: 128},
		{name: "too many vCPUs", lim: testLimits, cpus: 9, mem: 512, err: "9 vCPUs is outside the allowed range: want 1 to 8"},
		{name: "negative vCPUs", lim: testLimits, cpus: -1, mem: 512, err: "-1 vCPUs: want 1 to 8"},
		{name: "too little memory", lim: testLimits, cpus: 1, mem: 64, err: "64 MiB of memory is outside the allowed range: want 128 to 16384"},
		{name: "too much memory", lim: testLimits, cpus: 1, mem: 16385, err: "16385 MiB of memory is outside the allowed range: want 128 to 16384"},
		{name: "defaults", lim: testLimits, wantCPUs: defaultCPUs, wantMem: defaultLinuxMemoryMiB},
		{name: "default vCPUs clamped down", lim: Limits{MinCPUs: 1, MaxCPUs: 1, MinMemoryBytes: 128 << 20, MaxMemoryBytes: 16 << 30},
			mem: 512, wantCPUs: 1, wantMem: 512, note: "1 vCPUs instead of the default 2: the allowed range is 1 to 1"},
		{name: "default memory clamped up", lim: Limits{MinCPUs: 1, MaxCPUs: 8, MinMemoryBytes: 2 << 30, MaxMemoryBytes: 16 << 30},
			cpus: 1, wantCPUs: 1, wantMem: 2048, note: "2048 MiB of memory instead of the default 1024"},
		{name: "memory bounds rounded inwards to MiB", lim: Limits{MinCPUs: 1, MaxCPUs: 8, MinMemoryBytes: 100<<20 + 1, MaxMemoryBytes: 200<<20 - 1},
			cpus: 1, mem: 100, err: "want 101 to 199"},
		{name: "empty range", lim: Limits{MinCPUs: 2, MaxCPUs: 1, MinMemoryBytes: 128 << 20, MaxMemoryBytes: 16 << 30},
			cpus: 1, mem: 512, err: "this Mac's Virtualization.framework reports an empty range"},
	}
	img := linuxImage(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := planVM(hv.Spec{Image: img, CPUs: c.cpus, MemoryMiB: c.mem, StateDir: t.TempDir()}, c.lim)
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.wantCPUs, p.CPUs)
			assert.Equal(t, c.wantMem, p.MemoryMiB)
			if c.note == "" {
				assert.Empty(t, p.Notes)
			} else {
				require.Len(t, p.Notes, 1)
				assert.Contains(t, p.Notes[0], c.note)
			}
		})
	}
}

func TestPlanMacOS(t *testing.T) {
	b := makeTestBundle(t) // 4 vCPUs, 8192 MiB; its macOS needs 2 and 4096
	dir := t.TempDir()
	p, err := planVM(hv.Spec{Image: b.Image(), DiskBytes: 1 << 30, StateDir: dir}, testLimits)
	require.NoError(t, err)
	assert.Equal(t, GuestMacOS, p.Kind)
	assert.Equal(t, 4, p.CPUs, "the bundle's vCPUs are the default")
	assert.Equal(t, 8192, p.MemoryMiB, "the bundle's memory is the default")
	assert.Equal(t, b.Dir, p.Bundle)
	assert.Equal(t, b.Path(DiskFile), p.BootDisk)
	assert.Equal(t, b.Path(AuxFile), p.AuxStorage)
	assert.Equal(t, b.HardwareModel, p.HardwareModel)
	assert.Equal(t, b.MachineIdentifier, p.MachineIdentifier)
	assert.True(t, p.NAT)
	assert.Empty(t, p.Kernel)
	assert.Empty(t, p.ConsoleLog, "macOS has no serial console")
	assert.Empty(t, p.ScratchDisk, "macOS writes to its own disk")
	require.Len(t, p.Notes, 1)
	assert.Contains(t, p.Notes[0], "no scratch disk")
	assert.Equal(t, macOSStopTimeout, p.StopTimeout)
	// The host waits for the agent as long as a controller gives the boot:
	// both read hv's deadline for a macOS guest, which the bundle's image
	// names.
	assert.Equal(t, hv.OSMacOS, b.Image().OS)
	macOS := hv.DefaultBootTimeout(hv.MachineInfo{Backend: backendName, Accel: backendName, Image: b.Image()})
	assert.Equal(t, macOS, p.bootTimeout())
	assert.Greater(t, macOS, hv.DefaultBootTimeout(hv.MachineInfo{Backend: backendName, Accel: backendName}), "longer than a Linux guest's")

	// --boot-timeout is the host's wait too: a macOS guest given 10
	// minutes keeps a proxied connection waiting for its agent that long,
	// not the default's 5 minutes, and vm.json carries it to the host.
	long, err := planVM(hv.Spec{Image: b.Image(), StateDir: t.TempDir(), BootTimeout: 10 * time.Minute}, testLimits)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Minute, long.bootTimeout())
	data, err := json.Marshal(long)
	require.NoError(t, err)
	var read plan
	require.NoError(t, json.Unmarshal(data, &read))
	assert.Equal(t, 10*time.Minute, read.bootTimeout(), "the detached host reads its plan from vm.json")
	_, err = planVM(hv.Spec{Image: b.Image(), StateDir: t.TempDir(), BootTimeout: -time.Second}, testLimits)
	assert.ErrorContains(t, err, "boot timeout -1s: want 0 (the default) or more")

	cases := []struct {
		name      string
		lim       Limits
		cpus, mem int
		wantCPUs  int
		wantMem   int
		err       string
		note      string
	}{
		{name: "explicit", lim: testLimits, cpus: 6, mem: 6144, wantCPUs: 6, wantMem: 6144},
		{name: "below the guest's minimum vCPUs", lim: testLimits, cpus: 1, mem: 6144, err: "1 vCPUs is outside the allowed range: want 2 to 8 (the bundle's macOS needs 2)"},
		{name: "below the guest's minimum memory", lim: testLimits, cpus: 2, mem: 2048, err: "2048 MiB of memory is outside the allowed range: want 4096 to 16384 (the bundle's macOS needs 4096 MiB)"},
		{name: "bundle's default above the host's maximum", lim: Limits{MinCPUs: 1, MaxCPUs: 3, MinMemoryBytes: 128 << 20, MaxMemoryBytes: 6 << 30},
			wantCPUs: 3, wantMem: 6144},
		{name: "guest needs more than the host allows", lim: Limits{MinCPUs: 1, MaxCPUs: 1, MinMemoryBytes: 128 << 20, MaxMemoryBytes: 16 << 30},
			err: "the bundle's macOS needs 2 vCPUs, but Virtualization.framework allows at most 1 on this Mac"},
		{name: "guest needs more memory than the host allows", lim: Limits{MinCPUs: 1, MaxCPUs: 8, MinMemoryBytes: 128 << 20, MaxMemoryBytes: 2 << 30},
			err: "needs 4096 MiB of memory, but Virtualization.framework allows at most 2048 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := planVM(hv.Spec{Image: b.Image(), CPUs: c.cpus, MemoryMiB: c.mem, StateDir: t.TempDir()}, c.lim)
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.wantCPUs, p.CPUs)
			assert.Equal(t, c.wantMem, p.MemoryMiB)
		})
	}

	t.Run("clamped defaults are noted", func(t *testing.T) {
		p, err := planVM(hv.Spec{Image: b.Image(), StateDir: t.TempDir()}, Limits{MinCPUs: 1, MaxCPUs: 3, MinMemoryBytes: 128 << 20, MaxMemoryBytes: 6 << 30})
		require.NoError(t, err)
		assert.Equal(t, []string{
			"3 vCPUs instead of the default 4: the allowed range is 2 to 3 (the bundle's macOS needs 2)",
			"6144 MiB of memory instead of the default 8192: the allowed range is 4096 to 6144 (the bundle's macOS needs 4096 MiB)",
		}, p.Notes)
	})
}

func TestPlanRefusals(t *testing.T) {
	img := linuxImage(t)
	amd64 := img
	amd64.Arch = "amd64"
	noKernel := img
	noKernel.UncompressedKernel = filepath.Join(t.TempDir(), "absent")
	emptyInitramfs := img
	emptyInitramfs.Initramfs = filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(emptyInitramfs.Initramfs, nil, 0o644))
	noInitramfs := img
	noInitramfs.Initramfs = ""
	long := filepath.Join("/tmp", strings.Repeat("d", maxSocketPath))

	cases := []struct {
		name string
		spec hv.Spec
		want string
	}{
		{"no state directory", hv.Spec{Image: img}, "no state directory"},
		{"amd64 image", hv.Spec{Image: amd64, StateDir: "/tmp/x"}, "is for amd64: Virtualization.framework on Apple silicon boots arm64 guests"},
		{"no kernel file", hv.Spec{Image: noKernel, StateDir: "/tmp/x"}, "kernel"},
		{"empty initramfs", hv.Spec{Image: emptyInitramfs, StateDir: "/tmp/x"}, "is not a non-empty file"},
		{"no initramfs", hv.Spec{Image: noInitramfs, StateDir: "/tmp/x"}, "has no initramfs"},
		{"neither image nor bundle", hv.Spec{Image: hv.Image{Name: "nothing"}, StateDir: "/tmp/x"}, "neither a kernel"},
		{"another accelerator", hv.Spec{Image: img, Accel: "kvm", StateDir: "/tmp/x"}, `accelerator "kvm": the vz backend has only vz`},
		{"negative disk", hv.Spec{Image: img, DiskBytes: -1, StateDir: "/tmp/x"}, "scratch disk of -1 bytes"},
		{"long state directory", hv.Spec{Image: img, StateDir: long}, "use a shorter state directory"},
		{"missing bundle", hv.Spec{Image: hv.Image{Dir: filepath.Join(t.TempDir(), "absent")}, StateDir: "/tmp/x"}, "no VM bundle at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := planVM(c.spec, testLimits)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := planVM(hv.Spec{Image: img, Accel: "vz", StateDir: t.TempDir()}, testLimits)
	assert.NoError(t, err, "vz is this backend's accelerator")
}

func TestPlanChangesNothingOfABundle(t *testing.T) {
	b := makeTestBundle(t)
	require.NoError(t, os.Remove(b.Path(AuxFile)))
	before := snapshot(t, b.Dir)
	state := t.TempDir()
	_, err := planVM(hv.Spec{Image: b.Image(), StateDir: state}, testLimits)
	require.Error(t, err)
	assert.Contains(t, err.Error(), AuxFile)
	assert.Equal(t, before, snapshot(t, b.Dir))
	entries, err := os.ReadDir(state)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing is written to the state directory")

	b = makeTestBundle(t)
	before = snapshot(t, b.Dir)
	_, err = planVM(hv.Spec{Image: b.Image(), CPUs: 64, StateDir: state}, testLimits)
	require.Error(t, err)
	assert.Equal(t, before, snapshot(t, b.Dir))
}
