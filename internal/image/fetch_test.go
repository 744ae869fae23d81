package image

import (
	"context"
	"debug/elf"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/image/debkernel"
	"github.com/qoslab/qoslab/internal/image/debkernel/debtest"
)

// Where the kernel comes from: the recipe's kernel.mirror, else the
// variable, else the machine's apt sources; with none, an error naming what
// to set.
func TestKernelSourcesPrecedence(t *testing.T) {
	apt := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(apt, "sources.list"), []byte("deb http://apt.example/debian bookworm main\n"), 0o644))
	none := config.Value{Source: config.DebianMirrorEnv}
	set := config.Value{Value: "http://var.example/debian", Source: config.DebianMirrorEnv}

	r := DefaultRecipe()
	got, from, err := kernelSources(r, none, apt)
	require.NoError(t, err)
	assert.Equal(t, []debkernel.Source{{URI: "http://apt.example/debian", Suite: "bookworm"}}, got)
	assert.Contains(t, from, "apt sources")

	got, from, err = kernelSources(r, set, apt)
	require.NoError(t, err)
	assert.Equal(t, []debkernel.Source{{URI: "http://var.example/debian", Suite: "stable"}}, got)
	assert.Equal(t, "QOSLAB_DEBIAN_MIRROR", from)

	r.Kernel.Mirror, r.Kernel.Suite = "http://recipe.example/debian", "trixie"
	got, from, err = kernelSources(r, set, apt)
	require.NoError(t, err)
	assert.Equal(t, []debkernel.Source{{URI: "http://recipe.example/debian", Suite: "trixie"}}, got)
	assert.Equal(t, "kernel.mirror", from)

	_, _, err = kernelSources(DefaultRecipe(), none, t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set kernel.mirror in the recipe, or QOSLAB_DEBIAN_MIRROR")
}

// A recipe may name the mirror and suite; other keys stay errors.
func TestRecipeKernelMirrorKeys(t *testing.T) {
	assert.Empty(t, DefaultRecipe().Kernel.Mirror, "the built-in recipe names no mirror: it is configuration")
	dir := t.TempDir()
	p := filepath.Join(dir, "r.yaml")
	require.NoError(t, os.WriteFile(p, []byte("name: x\narch: arm64\nkernel:\n  source: debian\n  mirror: http://m.example/debian\n  suite: bookworm\n"), 0o644))
	r, err := loadRecipe(p)
	require.NoError(t, err)
	assert.Equal(t, "http://m.example/debian", r.Kernel.Mirror)
	assert.Equal(t, "bookworm", r.Kernel.Suite)
	require.NoError(t, os.WriteFile(p, []byte("name: x\narch: arm64\nkernel:\n  source: debian\n  mirrors: x\n"), 0o644))
	_, err = loadRecipe(p)
	assert.Error(t, err, "an unknown key is still refused")
}

// Fetching the kernel needs no guest agent (make setup fetches it before
// anything is built); building the image does.
func TestKernelOptionsNeedNoAgent(t *testing.T) {
	env := func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }
	o, err := BuildSettings{Arch: "arm64"}.KernelOptions(env)
	require.NoError(t, err, "no agent is looked for")
	assert.Equal(t, "arm64", o.Arch)
	assert.NotEmpty(t, o.KernelCacheDir)
	assert.Empty(t, o.AgentPath)
	agentPath := filepath.Join(t.TempDir(), "qoslab-agent")
	b, err := BuildSettings{Arch: "arm64", GuestAgent: agentPath}.Options(env)
	require.NoError(t, err)
	assert.Equal(t, agentPath, b.AgentPath, "a build takes its agent")
}

// Off a terminal the download is reported at each quarter, once each.
func TestDownloadProgressLines(t *testing.T) {
	var b strings.Builder
	report := downloadProgress(&b)
	for done := int64(0); done <= 100; done += 5 {
		report(done, 100)
	}
	assert.Equal(t, "kernel: downloaded 25% of 0.0 MiB\nkernel: downloaded 50% of 0.0 MiB\nkernel: downloaded 75% of 0.0 MiB\nkernel: downloaded 100% of 0.0 MiB\n", b.String())
}

// debianArchive serves a suite "stable" whose arm64 kernel package holds a
// kernel image and a .ko.xz module, as Debian 13's does; unsigned when
// signed is false.
func debianArchive(t *testing.T, signed bool) (*debtest.Archive, string) {
	t.Helper()
	ver := "6.12.1+deb13-arm64"
	mod := string(xzStream(t, makeModule(elf.EM_AARCH64, "virtio_blk", ver), false, 1))
	deb := debtest.Deb(t, "linux-image-"+ver, "6.12.1-1", [][2]string{
		{"./boot/", ""}, {"./boot/vmlinuz-" + ver, string(makeArm64Image(ver))},
		{"./usr/lib/modules/" + ver + "/kernel/drivers/block/", ""},
		{"./usr/lib/modules/" + ver + "/kernel/drivers/block/virtio_blk.ko.xz", mod},
		{"./usr/lib/modules/" + ver + "/modules.builtin", "kernel/drivers/virtio/virtio_pci.ko\n"},
	})
	a := debtest.NewArchive(t)
	if !signed {
		a.Key = nil
	}
	a.Suite(t, "stable", "arm64", []debtest.Package{
		{Name: "linux-image-arm64", Version: "6.12.1-1", Depends: "linux-image-" + ver + " (= 6.12.1-1)", Deb: []byte{}},
		{Name: "linux-image-" + ver, Version: "6.12.1-1", Deb: deb},
	})
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return a, srv.URL + "/debian"
}

// An unsigned InRelease stops the fetch with what to do; the flag takes it,
// says so, and the record, the located kernel and the build's output carry
// the warning.
func TestFetchKernelInsecureUnsignedIndex(t *testing.T) {
	_, mirror := debianArchive(t, false)
	cache := t.TempDir()
	var out strings.Builder
	o := BuildOptions{Recipe: DefaultRecipe(), Arch: "arm64", KernelCacheDir: cache, Progress: &out, Mirror: config.Value{Value: mirror, Source: config.DebianMirrorEnv}}
	_, err := FetchKernel(context.Background(), o)
	require.Error(t, err)
	assert.ErrorIs(t, err, debkernel.ErrUnverifiedIndex)
	for _, want := range []string{mirror + "/dists/stable/InRelease", "it is not signed", "--insecure-unsigned-index", "image.insecure-unsigned-index", "QOSLAB_IMAGE_INSECURE_UNSIGNED_INDEX=1"} {
		assert.Contains(t, err.Error(), want)
	}
	entries, _ := os.ReadDir(cache)
	assert.Empty(t, entries, "nothing fetched")

	o.InsecureUnsignedIndex = true
	dir, err := FetchKernel(context.Background(), o)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "WARNING: --insecure-unsigned-index")
	assert.Contains(t, out.String(), "NOT VERIFIED")
	ks, err := LocateKernel(DefaultRecipe(), LocateOptions{Arch: "arm64", KernelCacheDir: cache})
	require.NoError(t, err)
	assert.Equal(t, dir, ks.Origin)
	require.NotNil(t, ks.Fetch)
	assert.False(t, ks.Fetch.Verified())
	assert.Contains(t, ks.FetchLine(), "UNVERIFIED index (it is not signed")

	out.Reset()
	agent := filepath.Join(t.TempDir(), "qoslab-agent")
	writeFile(t, agent, makeAgent(elf.EM_AARCH64, ""))
	store := t.TempDir()
	r := DefaultRecipe()
	r.Modules = []string{"virtio_pci", "virtio_blk"}
	m, err := Build(context.Background(), BuildOptions{Recipe: r, Arch: "arm64", AgentPath: agent, StoreDir: store, KernelCacheDir: cache, Progress: &out})
	require.NoError(t, err, "the kernel is in the cache: no fetch, no flag needed")
	assert.Contains(t, out.String(), "kernel: WARNING: linux-image-6.12.1+deb13-arm64 6.12.1-1 from "+mirror+" stable came through an UNVERIFIED index")
	require.NotNil(t, m.Kernel.Fetch, "the manifest records it")
	assert.Contains(t, m.Kernel.Fetch.Index.Unverified, "it is not signed")
	assert.Equal(t, []string{"/lib/modules/6.12.1+deb13-arm64/kernel/drivers/block/virtio_blk.ko"}, []string{m.Modules[0].Path})
}
