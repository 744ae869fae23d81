package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/results"
)

var bootTime = regexp.MustCompile(`agent answered ([0-9.]+) s after start \(accel tcg`)

// The arm64 guest a Mac boots on Virtualization.framework (the same kernel,
// fetched in Go, and initramfs), emulated here by qemu-system-aarch64 on
// the virt machine: it boots, its agent answers and measures one fp cell.
// CI (QOSLAB_REQUIRE_VM=1) fails without the emulator or the arm64 kernel.
func TestARM64GuestUnderEmulation(t *testing.T) {
	if runtime.GOARCH == "arm64" {
		t.Skip("an arm64 host runs its own arch's guest in TestVMEndToEnd")
	}
	missing := func(why string) {
		if os.Getenv("QOSLAB_REQUIRE_VM") == "1" {
			t.Fatalf("QOSLAB_REQUIRE_VM=1 but %s (run scripts/setup.sh)", why)
		}
		t.Skip(why)
	}
	if _, err := exec.LookPath("qemu-system-aarch64"); err != nil {
		missing("no qemu-system-aarch64 (Debian: qemu-system-arm)")
	}
	kernels, err := image.DefaultKernelCacheDir(os.Getenv)
	require.NoError(t, err)
	if _, err := image.LocateKernel(image.DefaultRecipe(), image.LocateOptions{Arch: "arm64", KernelCacheDir: kernels}); err != nil {
		missing("no arm64 Debian kernel: " + err.Error())
	}
	dir := binaries(t)
	agent := filepath.Join(dir, "linux-arm64", "qoslab-agent")
	cmd := exec.Command("go", "build", "-o", agent, "../../guest/agent")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "cross-build the arm64 agent: %s", out)

	store := t.TempDir()
	stdout, stderr, code := qoslab(t, dir, "image", "build", "linux", "--arch", "arm64", "--store", store, "--kernel-cache", kernels, "--guest-agent", agent)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "built linux-arm64")
	assert.FileExists(t, filepath.Join(store, "linux-arm64", "vmlinuz"))

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
	m := bootTime.FindStringSubmatch(stderr)
	require.Len(t, m, 2, stderr)
	secs, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	t.Logf("arm64 guest under qemu-system-aarch64 (TCG): agent answered %.2f s after start", secs)
	runs, _ := filepath.Glob(filepath.Join(res, "bench-*", results.RunFile))
	require.Len(t, runs, 1)
	b, err := os.ReadFile(runs[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"arch": "arm64"`, "the guest's Info says arm64")
	assert.Contains(t, string(b), "linux,dummy-virt", "and that it runs virtualized, from its device tree")
}
