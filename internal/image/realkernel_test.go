package image

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/testvm"
)

// realKernel is the Debian amd64 kernel qoslab image fetch-kernel put in the
// kernel cache (QOSLAB_KERNEL_CACHE, else the default cache); when there is
// none, the test is skipped, saying why, or with QOSLAB_REQUIRE_VM=1 (CI,
// whose make setup fetches it) fails.
func realKernel(t *testing.T) KernelSource {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		// make setup fetches this machine's arch's kernel, make test-deps the other's.
		t.Skip("the real-kernel tests read the amd64 kernel, which make setup fetches on amd64 machines")
	}
	const fix = "run scripts/setup.sh, which fetches it"
	cache := testvm.KernelCache()
	if cache == "" {
		var err error
		if cache, err = DefaultKernelCacheDir(os.Getenv); err != nil {
			testvm.Missing(t, "no real kernel: "+err.Error(), fix)
		}
	}
	ks, err := LocateKernel(DefaultRecipe(), LocateOptions{Arch: "amd64", KernelCacheDir: cache})
	if err != nil {
		testvm.Missing(t, "no real Debian kernel in the kernel cache (set QOSLAB_KERNEL_CACHE to another): "+err.Error(), fix)
	}
	return ks
}

func indexOf(mods []Module, name string) int {
	for i, m := range mods {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// The Debian package's extract has no modules.dep: the order comes from
// each module's .modinfo.
func TestRealKernelModuleOrder(t *testing.T) {
	ks := realKernel(t)
	assert.Equal(t, sourceDebian, ks.Source)
	assert.Equal(t, formatBzImage, ks.Info.Format)
	assert.Equal(t, ks.Version, ks.Info.Version, "the bzImage's version string agrees with lib/modules/<version>")

	set, err := resolveModuleSet(ks.ModulesDir, ks.Version, "amd64", DefaultRecipe().Modules)
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(ks.ModulesDir, "modules.dep")); err != nil {
		assert.Equal(t, depsFromModinfo, set.DepsFrom)
	}
	names := make([]string, len(set.Load))
	for i, m := range set.Load {
		names[i] = m.Name
	}
	t.Logf("load order: %v; built in: %v", names, set.Builtin)
	before := func(a, b string) {
		t.Helper()
		ia, ib := indexOf(set.Load, a), indexOf(set.Load, b)
		require.GreaterOrEqual(t, ia, 0, "%s is loaded", a)
		require.GreaterOrEqual(t, ib, 0, "%s is loaded", b)
		assert.Less(t, ia, ib, "%s loads before %s", a, b)
	}
	for _, dep := range []string{"virtio", "virtio_ring", "virtio_pci_modern_dev", "virtio_pci_legacy_dev"} {
		before(dep, "virtio_pci")
	}
	before("virtio_ring", "virtio") // virtio.ko: depends=virtio_ring
	before("vsock", "vmw_vsock_virtio_transport_common")
	before("vmw_vsock_virtio_transport_common", "vmw_vsock_virtio_transport")
	before("vsock", "vmw_vsock_virtio_transport")
	before("virtio_ring", "virtio_console")
	before("virtio_ring", "virtio_blk")
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "%s is loaded once", n)
		seen[n] = true
	}

	_, err = resolveModuleSet(ks.ModulesDir, ks.Version, "amd64", []string{"virtio_nonesuch"})
	assert.ErrorContains(t, err, "module virtio_nonesuch does not exist for kernel "+ks.Version)
	assert.ErrorContains(t, err, ks.ModulesDir)
	// serial 8250 is built into Debian's kernel.
	set, err = resolveModuleSet(ks.ModulesDir, ks.Version, "amd64", []string{"8250", "virtio-blk"})
	require.NoError(t, err)
	assert.Equal(t, []string{"8250"}, set.Builtin)
	assert.Equal(t, "virtio_blk", set.Load[len(set.Load)-1].Name)
}

// The default recipe builds from the real kernel with the real agent.
func TestRealKernelBuild(t *testing.T) {
	ks := realKernel(t)
	agent := filepath.Join("..", "..", "bin", "linux-amd64", "qoslab-agent")
	if _, err := os.Stat(agent); err != nil {
		testvm.Missing(t, "no agent to install: "+err.Error(), "make cross builds "+agent)
	}
	testvm.Slow(t, "building a real image compresses ~20 MiB")
	store := t.TempDir()
	m, err := Build(context.Background(), BuildOptions{
		Recipe: DefaultRecipe(), AgentPath: agent, AgentVersion: "test", StoreDir: store,
		KernelCacheDir: filepath.Dir(ks.Origin), Progress: testWriter{t},
	})
	require.NoError(t, err)
	img, lm, err := Load(store, "linux")
	require.NoError(t, err)
	assert.Equal(t, m.Initramfs.SHA256, lm.Initramfs.SHA256)
	assert.Equal(t, ks.Version, img.KernelVersion)
	assert.Greater(t, len(m.Modules), 4)
	// Debian's kernel has a PVH entry: the image boots its vmlinux.
	require.NotNil(t, m.BootKernel)
	assert.Equal(t, vmlinuxFile, m.BootKernel.File, m.BootKernel.Reason)
	require.NotNil(t, lm.Vmlinux)
	assert.Equal(t, m.Vmlinux.SHA256, lm.Vmlinux.SHA256)
	assert.Equal(t, filepath.Join(store, "linux", vmlinuxFile), img.Kernel)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// The real kernel's payload unpacks to a PVH-bootable vmlinux; where the xz
// tool is installed, to the same bytes it gives.
func TestRealKernelVmlinux(t *testing.T) {
	testvm.Slow(t, "unpacks the real kernel's payload")
	ks := realKernel(t)
	bz, err := os.ReadFile(ks.Image)
	require.NoError(t, err)
	p, err := bzImagePayload(bz)
	require.NoError(t, err)
	t.Logf("payload: %s, %d bytes, %d uncompressed", p.Compression, len(p.Data), p.Size)
	start := time.Now()
	v, err := extractVmlinux(context.Background(), bz)
	require.NoError(t, err)
	t.Logf("unpacked in %s", time.Since(start).Round(time.Millisecond))
	assert.Equal(t, int(p.Size), len(v.ELF))
	assert.NotZero(t, v.PVHEntry)
	assert.Equal(t, ks.Version, bannerVersion(v.ELF), "the vmlinux is the same kernel")

	xz, err := exec.LookPath("xz")
	if err != nil || p.Compression != compressionXZ {
		t.Logf("not compared with the xz tool (%s payload, xz: %v)", p.Compression, err)
		return
	}
	cmd := exec.Command(xz, "--decompress", "--stdout", "--single-stream")
	cmd.Stdin = bytes.NewReader(p.Data)
	want, err := cmd.Output()
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, v.ELF), "the same bytes as xz gives (%d and %d bytes)", len(want), len(v.ELF))
}
