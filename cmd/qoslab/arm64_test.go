package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/guestinit"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/image/debkernel"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/testvm"
)

var bootTime = regexp.MustCompile(`agent answered ([0-9.]+) s after start \(accel tcg`)

// The arm64 guest a Mac boots on Virtualization.framework (the same kernel,
// fetched in Go, and initramfs), emulated here by qemu-system-aarch64 on
// the virt machine: it boots, its agent answers and measures one fp cell.
// Two kernels: the one make test-deps fetched from this machine's apt sources
// (Debian 12, bookworm, on CI), and the mirror's current stable (Debian 13,
// trixie, today: .ko.xz modules under usr/lib/modules), which the image
// build fetches itself with no apt or dpkg on PATH, as on a Mac.
// CI (QOSLAB_REQUIRE_VM=1) fails without the emulator, the arm64 kernel or
// a mirror.
func TestARM64GuestUnderEmulation(t *testing.T) {
	t.Parallel()
	if runtime.GOARCH == "arm64" {
		t.Skip("an arm64 host runs its own arch's guest in TestVMEndToEnd")
	}
	missing := func(t *testing.T, why string) {
		t.Helper()
		testvm.Missing(t, why, "run make test-deps")
	}
	if _, err := exec.LookPath("qemu-system-aarch64"); err != nil {
		missing(t, "no qemu-system-aarch64 (Debian: qemu-system-arm)")
	}
	kernels, err := image.DefaultKernelCacheDir(os.Getenv)
	require.NoError(t, err)
	dir := binaries(t)
	agent := filepath.Join(dir, "linux-arm64", "qoslab-agent")
	cmd := exec.Command("go", "build", "-o", agent, "../../guest/agent")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "cross-build the arm64 agent: %s", out)

	t.Run("apt-sources", func(t *testing.T) {
		if _, err := image.LocateKernel(image.DefaultRecipe(), image.LocateOptions{Arch: "arm64", KernelCacheDir: kernels}); err != nil {
			missing(t, "no arm64 Debian kernel: "+err.Error())
		}
		bootARM64(t, dir, agent, kernels, nil)
	})
	t.Run("stable", func(t *testing.T) {
		mirror := os.Getenv(config.DebianMirrorEnv)
		if mirror == "" {
			srcs, _ := debkernel.AptSources("/etc/apt")
			if len(srcs) == 0 {
				missing(t, "no Debian mirror: set "+config.DebianMirrorEnv+" or give this machine apt sources")
			}
			mirror = srcs[0].URI
		}
		// A cache of its own, kept between runs (the default cache's
		// linux-image-arm64 link is the apt sources' kernel): the first
		// run fetches about 90 MB.
		stable := filepath.Join(filepath.Dir(kernels), "kernels-stable")
		// No apt, no dpkg, nothing at all on PATH: the build needs none.
		env := []string{config.DebianMirrorEnv + "=" + mirror, "PATH=" + t.TempDir()}
		ks := bootARM64(t, dir, agent, stable, env)
		require.NotNil(t, ks.Fetch, "fetched by this qoslab, which records it")
		require.True(t, ks.Fetch.Verified(), "%+v", ks.Fetch.Index)
		assert.Equal(t, mirror+" stable", ks.Fetch.Source)
		shipped, err := debkernel.ArchiveKeys()
		require.NoError(t, err)
		var fprs []string
		for _, e := range shipped {
			fprs = append(fprs, fmt.Sprintf("%X", e.PrimaryKey.Fingerprint[:]))
		}
		assert.Contains(t, fprs, ks.Fetch.Index.SignedBy.Fingerprint, "verified by a key that ships with qoslab")
	})
}

// bootARM64 builds linux-arm64 from the kernel cache kernels (env added to
// the build's environment), boots it under TCG, measures one fp cell in it
// and returns the kernel it was built from.
func bootARM64(t *testing.T, dir, agent, kernels string, env []string) image.KernelSource {
	t.Helper()
	store := t.TempDir()
	stdout, stderr, code := qoslabEnv(t, dir, env, "image", "build", "linux", "--arch", "arm64", "--store", store, "--kernel-cache", kernels, "--guest-agent", agent)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "built linux-arm64")
	assert.FileExists(t, filepath.Join(store, "linux-arm64", "vmlinuz"))
	_, m, err := image.Load(store, "linux-arm64")
	require.NoError(t, err)
	for _, mod := range m.Modules {
		assert.True(t, strings.HasSuffix(mod.Path, ".ko"), "%s: the image holds modules decompressed", mod.Path)
	}

	res := t.TempDir()
	csvPath := filepath.Join(res, "fp.csv")
	_, stderr, code = qoslab(t, dir, "bench", "--target", "vm", "--image", "linux-arm64", "--image-store", store, "--accel", "tcg",
		"--workload", "fp", "--qos", "default", "--loops", "1e6", "--repeat", "1", "--format", "csv", "--out", csvPath, "--save", "--results", res)
	require.Equal(t, 0, code, stderr)
	csvFile, err := os.ReadFile(csvPath)
	require.NoError(t, err)
	samples, err := results.ReadCSV(strings.NewReader(string(csvFile)))
	require.NoError(t, err)
	require.Len(t, samples, 1)
	assert.Equal(t, "vm", samples[0].Target)
	assert.Positive(t, samples[0].Rate)
	match := bootTime.FindStringSubmatch(stderr)
	require.Len(t, match, 2, stderr)
	secs, err := strconv.ParseFloat(match[1], 64)
	require.NoError(t, err)
	t.Logf("arm64 guest, kernel %s (%s), under qemu-system-aarch64 (TCG): agent answered %.2f s after start", m.KernelVersion, m.Kernel.Package, secs)
	runs, _ := filepath.Glob(filepath.Join(res, "bench-*", results.RunFile))
	require.Len(t, runs, 1)
	b, err := os.ReadFile(runs[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"arch": "arm64"`, "the guest's Info says arm64")
	assert.Contains(t, string(b), "linux,dummy-virt", "and that it runs virtualized, from its device tree")
	assert.Contains(t, string(b), m.KernelVersion, "and which kernel it runs")

	t.Run("vz device model", func(t *testing.T) { vzModelBench(t, dir, store) })
	return m.Kernel
}

// vhostVsockInstalled looks where qoslab looks: PATH, then cargo's bin.
func vhostVsockInstalled() bool {
	if _, err := exec.LookPath("vhost-device-vsock"); err == nil {
		return true
	}
	cargo := os.Getenv("CARGO_HOME")
	if cargo == "" {
		cargo = filepath.Join(os.Getenv("HOME"), ".cargo")
	}
	_, err := os.Stat(filepath.Join(cargo, "bin", "vhost-device-vsock"))
	return err == nil
}

var (
	channelsLine = regexp.MustCompile(`qoslab-agent: up in ([0-9.]+) s, ([0-9.]+) s after kernel start \(.*channels ([0-9.]+) s \[([^\]]*)\]\)`)
	modelBoot    = regexp.MustCompile(`agent answered ([0-9.]+) s after start`)
)

// The same image in Virtualization.framework's device model: the command
// line the vz backend builds, the virtio console as the only console, no
// virtio-serial port, the agent over vsock through vhost-device-vsock. The
// agent answers, through vsock (the model has no other channel), and
// measures one fp cell; no channel waits for a device the model lacks.
func vzModelBench(t *testing.T, dir, store string) {
	if !vhostVsockInstalled() {
		testvm.Missing(t, "vhost-device-vsock is not installed: cargo install --locked vhost-device-vsock@0.3.0", "make test installs it")
	}
	res := t.TempDir()
	jsonPath := filepath.Join(res, "bench.json")
	began := time.Now()
	_, stderr, code := qoslab(t, dir, "bench", "--target", "vm", "--image", "linux-arm64", "--vm-model", "vz", "--accel", "tcg",
		"--workload", "fp", "--duration", "500ms", "--repeat", "1", "--image-store", store, "--save", "--results", res, "--format", "json", "--out", jsonPath)
	took := time.Since(began)
	if code != 0 {
		kept, _ := filepath.Glob(filepath.Join(res, "bench-*", "vm-console.log"))
		for _, k := range kept {
			b, _ := os.ReadFile(k)
			t.Logf("%s:\n%s", k, b)
		}
	}
	require.Equal(t, 0, code, stderr)
	out, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	assert.Contains(t, stderr, "vm: backend qemu, model vz")
	var doc struct {
		Machines map[string]struct {
			Backend string `json:"backend"`
			Accel   string `json:"accel"`
			Model   string `json:"model"`
		} `json:"machines"`
		Samples []struct {
			Target string  `json:"target"`
			Rate   float64 `json:"rate"`
		} `json:"samples"`
	}
	require.NoError(t, json.Unmarshal(out, &doc), string(out))
	assert.Equal(t, "qemu", doc.Machines["vm"].Backend, "it is QEMU that ran, never Virtualization.framework")
	assert.Equal(t, "vz", doc.Machines["vm"].Model)
	assert.Equal(t, "tcg", doc.Machines["vm"].Accel)
	require.Len(t, doc.Samples, 2, "fp at the two default classes")
	for _, s := range doc.Samples {
		assert.Equal(t, "vm", s.Target)
		assert.Positive(t, s.Rate)
	}

	consoles, _ := filepath.Glob(filepath.Join(res, "bench-*", "vm-console.log"))
	require.Len(t, consoles, 1)
	console, err := os.ReadFile(consoles[0])
	require.NoError(t, err)
	// The agent's lines are on the virtio console, so hvc0 was the console:
	// attached once the modules loaded where virtio_console is a module
	// (Debian 12), at once where it is built in (Debian 13).
	assert.NotContains(t, string(console), "no console after waiting")
	assert.Contains(t, string(console), "qoslab-agent: channels from the kernel command line (qoslab.listen): vsock:1024")
	assert.Regexp(t, `qoslab-agent: \S+ serving on vm\(\d+\):1024\r?\n`, string(console), "the agent serves on vsock only")
	assert.Regexp(t, `qoslab-agent: power button: /dev/input/event\d+ \(gpio-keys\)`, string(console))
	assert.NotContains(t, string(console), "virtio-port", "no channel waits for a virtio-serial port the model lacks")
	m := channelsLine.FindStringSubmatch(string(console))
	require.Len(t, m, 5, "the boot summary with the channel timings:\n%s", console)
	channels, err := strconv.ParseFloat(m[3], 64)
	require.NoError(t, err)
	assert.Less(t, channels, guestinit.PortWait.Seconds(), "the channels took less than a virtio-serial port's wait: none waited for a missing device")
	assert.Equal(t, "vsock:1024", strings.Split(m[4], " ")[0])
	boot := modelBoot.FindStringSubmatch(stderr)
	require.Len(t, boot, 2, stderr)
	t.Logf("vz model under TCG: agent answered %s s after QEMU started; guest: up in %s s, %s s after kernel start, channels %s s [%s]; the bench took %.1f s",
		boot[1], m[1], m[2], m[3], m[4], took.Seconds())
}
