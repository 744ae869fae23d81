package image

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cavaliergopher/cpio"
	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/guestinit"
	"github.com/qoslab/qoslab/internal/image/debkernel/debtest"
)

type buildFixture struct {
	ft    fakeKernelTree
	agent string
	opts  BuildOptions
}

func newBuildFixture(t *testing.T) *buildFixture {
	ft := newFakeKernel(t, elf.EM_X86_64)
	agent := filepath.Join(t.TempDir(), "qoslab-agent")
	writeFile(t, agent, makeAgent(elf.EM_X86_64, ""))
	r := Recipe{
		Name: "test", Arch: "amd64",
		Kernel:  KernelSpec{Source: sourcePath, Path: ft.kernel, ModulesDir: ft.modules},
		Modules: []string{"c", "e", "d-dash"},
		Cmdline: "quiet panic=-1", ArchCmdline: map[string]string{"amd64": "console=ttyS0"},
	}
	return &buildFixture{ft: ft, agent: agent, opts: BuildOptions{
		Recipe: r, AgentPath: agent, AgentVersion: "v9.9.9", StoreDir: t.TempDir(),
	}}
}

type cpioFile struct {
	hdr  cpio.Header
	data []byte
}

func readInitramfs(t *testing.T, path string) ([]cpioFile, []byte) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	cr := cpio.NewReader(bytes.NewReader(raw))
	var out []cpioFile
	for {
		h, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(cr)
		require.NoError(t, err)
		out = append(out, cpioFile{*h, data})
	}
	return out, raw
}

func TestBuild(t *testing.T) {
	fx := newBuildFixture(t)
	var progress bytes.Buffer
	fx.opts.Progress = &progress
	m, err := Build(context.Background(), fx.opts)
	require.NoError(t, err)
	dir := filepath.Join(fx.opts.StoreDir, "test")

	assert.Equal(t, SchemaVersion, m.SchemaVersion)
	assert.Equal(t, "test", m.Name)
	assert.Equal(t, "amd64", m.Arch)
	assert.Equal(t, fx.ft.version, m.KernelVersion)
	assert.Equal(t, sourcePath, m.KernelSource)
	assert.Equal(t, formatBzImage, m.Kernel.Info.Format)
	assert.Equal(t, "quiet panic=-1 console=ttyS0", m.Cmdline)
	assert.Equal(t, fx.opts.Recipe.Modules, m.Recipe.Modules)
	assert.Equal(t, []string{"e"}, m.BuiltinModules)
	assert.Equal(t, depsFromModinfo, m.ModuleDepsFrom)
	var modPaths []string
	for _, mod := range m.Modules {
		modPaths = append(modPaths, mod.Path)
	}
	lm := "/lib/modules/" + fx.ft.version + "/kernel/"
	wantMods := []string{lm + "drivers/a/a.ko", lm + "drivers/b/b.ko", lm + "drivers/c/c.ko", lm + "net/d-dash.ko"}
	assert.Equal(t, wantMods, modPaths)
	assert.Equal(t, "v9.9.9", m.Agent.Version)
	agentDigest, err := hashFile(fx.agent)
	require.NoError(t, err)
	assert.Equal(t, agentDigest.SHA256, m.Agent.SHA256)
	kernelDigest, err := hashFile(fx.ft.kernel)
	require.NoError(t, err)
	assert.Equal(t, kernelDigest.SHA256, m.Vmlinuz.SHA256, "vmlinuz is the kernel as it is")
	assert.Equal(t, kernelDigest.Size, m.Vmlinuz.Size)
	// The fixture's bzImage holds an xz'd kernel with a PVH entry.
	require.NotNil(t, m.Vmlinux)
	vmlinuxDigest, err := hashFile(filepath.Join(dir, vmlinuxFile))
	require.NoError(t, err)
	assert.Equal(t, vmlinuxDigest, *m.Vmlinux)
	vmlinuxBytes, err := os.ReadFile(filepath.Join(dir, vmlinuxFile))
	require.NoError(t, err)
	assert.Equal(t, makeKernelELF(fx.ft.version, pvhNote(0x1000abc)), vmlinuxBytes, "vmlinux is the bzImage's payload, unpacked")
	require.NotNil(t, m.BootKernel)
	assert.Equal(t, vmlinuxFile, m.BootKernel.File)
	assert.Equal(t, compressionXZ, m.BootKernel.PayloadCompression)
	assert.Equal(t, "0x1000abc", m.BootKernel.PVHEntry)
	assert.Contains(t, m.BootKernel.Reason, "xz payload, with a PVH entry")
	assert.Contains(t, progress.String(), "boot kernel: vmlinux (0.0 MiB, PVH entry 0x1000abc): the kernel unpacked from the bzImage's xz payload")
	assert.False(t, m.BuiltAt.IsZero())
	assert.Contains(t, progress.String(), "modules: a, b, c, d_dash (dependencies from .modinfo); built in: e")
	assert.Contains(t, progress.String(), "image test: "+dir)

	// The files, and nothing else.
	names := dirNames(t, dir)
	assert.Equal(t, []string{initramfsFile, manifestFile, vmlinuxFile, kernelFile}, names)
	assert.Equal(t, []string{".lock~test", "test"}, dirNames(t, fx.opts.StoreDir), "no build leftovers")
	var onDisk Manifest
	b, err := os.ReadFile(filepath.Join(dir, manifestFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &onDisk))
	assert.Equal(t, m.Initramfs, onDisk.Initramfs)
	assert.Equal(t, m.Vmlinux, onDisk.Vmlinux)
	assert.Equal(t, m.BootKernel, onDisk.BootKernel)

	// The initramfs.
	files, raw := readInitramfs(t, filepath.Join(dir, initramfsFile))
	var got []string
	byName := map[string]cpioFile{}
	for _, f := range files {
		got = append(got, f.hdr.Name)
		byName[f.hdr.Name] = f
		assert.Equal(t, int64(0), f.hdr.ModTime.Unix(), "%s has the fixed mtime", f.hdr.Name)
		assert.Equal(t, 0, f.hdr.Uid)
	}
	assert.True(t, sort.StringsAreSorted(got), "entries sorted, so parents come first: %v", got)
	for _, want := range []string{"dev", "dev/console", "dev/null", "etc", "etc/qoslab", "etc/qoslab/init.json", "init", "lib", "lib/modules", "proc", "scratch", "sys", "tmp"} {
		assert.Contains(t, got, want)
	}
	for _, mp := range wantMods {
		assert.Contains(t, got, mp[1:])
	}
	for _, f := range files {
		if parent := filepath.Dir(f.hdr.Name); parent != "." {
			assert.Contains(t, got, parent, "parent of %s", f.hdr.Name)
		}
	}
	init := byName["init"]
	assert.Equal(t, cpio.FileMode(cpio.TypeReg|0o755), init.hdr.Mode)
	agentBytes, _ := os.ReadFile(fx.agent)
	assert.Equal(t, agentBytes, init.data)
	assert.Equal(t, cpio.FileMode(cpio.TypeDir|0o1777), byName["tmp"].hdr.Mode)
	assert.Equal(t, cpio.FileMode(cpio.TypeChar|0o600), byName["dev/console"].hdr.Mode)
	assert.Equal(t, cpio.FileMode(cpio.TypeChar|0o666), byName["dev/null"].hdr.Mode, "the Go runtime opens /dev/null read-write")
	// The library reads no device numbers: check the raw header (rdevmajor
	// and rdevminor are the 10th and 11th fields).
	for _, node := range []struct{ name, major, minor string }{{"dev/console", "00000005", "00000001"}, {"dev/null", "00000001", "00000003"}} {
		i := bytes.Index(raw, []byte(node.name+"\x00"))
		require.Greater(t, i, 110)
		hdr := string(raw[i-110 : i])
		assert.Equal(t, "070701", hdr[:6])
		assert.Equal(t, node.major, hdr[6+9*8:6+10*8], "%s rdevmajor", node.name)
		assert.Equal(t, node.minor, hdr[6+10*8:6+11*8], "%s rdevminor", node.name)
	}

	// The init configuration, read the way the agent reads it.
	cfgPath := filepath.Join(t.TempDir(), "init.json")
	require.NoError(t, os.WriteFile(cfgPath, byName["etc/qoslab/init.json"].data, 0o644))
	cfg, err := guestinit.ReadConfig(cfgPath)
	require.NoError(t, err)
	assert.Equal(t, wantMods, cfg.Modules)
	assert.Equal(t, []string{"virtio-port:org.qoslab.agent", "vsock:1024"}, cfg.Listen)
	assert.Equal(t, "/dev/vda", cfg.ScratchDevice)
	assert.Equal(t, "/scratch", cfg.ScratchDir)
	assert.Equal(t, fx.ft.version, cfg.KernelVersion)
	for _, mp := range cfg.Modules {
		mod, err := os.ReadFile(filepath.Join(fx.ft.modules, strings.TrimPrefix(mp, "/lib/modules/"+fx.ft.version+"/")))
		require.NoError(t, err)
		assert.Equal(t, mod, byName[mp[1:]].data)
	}

	// Load gives the hv.Image.
	img, lm2, err := Load(fx.opts.StoreDir, "test")
	require.NoError(t, err)
	assert.Equal(t, m.Initramfs, lm2.Initramfs)
	absDir, _ := filepath.Abs(dir)
	assert.Equal(t, absDir, img.Dir)
	assert.Equal(t, filepath.Join(absDir, vmlinuxFile), img.Kernel, "the kernel to boot is vmlinux")
	assert.Equal(t, filepath.Join(absDir, initramfsFile), img.Initramfs)
	assert.Equal(t, "quiet panic=-1 console=ttyS0", img.Cmdline)
	assert.Equal(t, "amd64", img.Arch)
	assert.Equal(t, fx.ft.version, img.KernelVersion)
	assert.Equal(t, "v9.9.9", img.AgentVersion)

	list, err := List(fx.opts.StoreDir)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "test", list[0].Name)
	require.NotNil(t, list[0].Manifest)
	assert.Equal(t, fx.ft.version, list[0].Manifest.KernelVersion)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// The same inputs give the same bytes.
func TestBuildDeterministic(t *testing.T) {
	fx := newBuildFixture(t)
	m1, err := Build(context.Background(), fx.opts)
	require.NoError(t, err)
	fx.opts.StoreDir = t.TempDir()
	m2, err := Build(context.Background(), fx.opts)
	require.NoError(t, err)
	assert.Equal(t, m1.Vmlinuz, m2.Vmlinuz)
	assert.Equal(t, m1.Vmlinux, m2.Vmlinux)
	assert.Equal(t, m1.Initramfs, m2.Initramfs)
	// Also after touching the inputs' mtimes.
	require.NoError(t, os.Chtimes(fx.agent, m1.BuiltAt, m1.BuiltAt))
	m3, err := Build(context.Background(), fx.opts)
	require.NoError(t, err)
	assert.Equal(t, m1.Initramfs, m3.Initramfs)
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range dirNames(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		out[n] = string(b)
	}
	return out
}

// A build that fails leaves the previous image as it was.
func TestBuildFailureKeepsPreviousImage(t *testing.T) {
	fx := newBuildFixture(t)
	_, err := Build(context.Background(), fx.opts)
	require.NoError(t, err)
	dir := filepath.Join(fx.opts.StoreDir, "test")
	before := snapshot(t, dir)

	check := func(t *testing.T) {
		t.Helper()
		assert.Equal(t, before, snapshot(t, dir))
		assert.Equal(t, []string{".lock~test", "test"}, dirNames(t, fx.opts.StoreDir), "no build leftovers")
		_, _, err := Load(fx.opts.StoreDir, "test")
		assert.NoError(t, err)
	}
	t.Run("unknown module", func(t *testing.T) {
		o := fx.opts
		o.Recipe.Modules = []string{"a", "nonesuch"}
		_, err := Build(context.Background(), o)
		assert.ErrorContains(t, err, "module nonesuch does not exist")
		check(t)
	})
	t.Run("agent for another arch", func(t *testing.T) {
		o := fx.opts
		o.AgentPath = filepath.Join(t.TempDir(), "agent")
		writeFile(t, o.AgentPath, makeAgent(elf.EM_AARCH64, ""))
		_, err := Build(context.Background(), o)
		assert.ErrorContains(t, err, "is for arm64, but the image is for amd64")
		check(t)
	})
	t.Run("not a kernel", func(t *testing.T) {
		o := fx.opts
		o.Recipe.Kernel.Path = fx.agent
		_, err := Build(context.Background(), o)
		assert.ErrorContains(t, err, "is not a Linux kernel image")
		check(t)
	})
	t.Run("failure after writing", func(t *testing.T) {
		o := fx.opts
		o.beforeSwap = func(tmp string) error {
			_, err := os.Stat(filepath.Join(tmp, manifestFile))
			require.NoError(t, err, "everything is written before the swap")
			return errors.New("disk on fire")
		}
		o.Recipe.Cmdline = "changed"
		_, err := Build(context.Background(), o)
		assert.ErrorContains(t, err, "disk on fire")
		check(t)
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Build(ctx, fx.opts)
		assert.ErrorIs(t, err, context.Canceled)
		check(t)
	})
	t.Run("a build that died mid-swap is recovered", func(t *testing.T) {
		// The previous image moved aside, the new one never renamed in.
		aside := filepath.Join(fx.opts.StoreDir, ".old~test~123")
		require.NoError(t, os.Rename(dir, aside))
		require.NoError(t, os.MkdirAll(filepath.Join(fx.opts.StoreDir, ".build~test~456"), 0o755))
		o := fx.opts
		o.beforeSwap = func(string) error { return errors.New("again") }
		_, err := Build(context.Background(), o)
		assert.ErrorContains(t, err, "again")
		check(t)
	})

	// A successful rebuild replaces it.
	o := fx.opts
	o.Recipe.Cmdline = "changed"
	_, err = Build(context.Background(), o)
	require.NoError(t, err)
	img, _, err := Load(fx.opts.StoreDir, "test")
	require.NoError(t, err)
	assert.Equal(t, "changed console=ttyS0", img.Cmdline)
	assert.Equal(t, []string{".lock~test", "test"}, dirNames(t, fx.opts.StoreDir))
}

func TestBuildOtherArchName(t *testing.T) {
	fx := newBuildFixture(t)
	arm := newFakeKernel(t, elf.EM_AARCH64)
	o := fx.opts
	o.Arch = "arm64"
	o.Recipe.Kernel = KernelSpec{Source: sourcePath, Path: arm.kernel, ModulesDir: arm.modules}
	_, err := Build(context.Background(), o)
	assert.ErrorContains(t, err, "agent "+fx.agent+" is for amd64, but the image is for arm64")
	o.AgentPath = filepath.Join(t.TempDir(), "agent")
	writeFile(t, o.AgentPath, makeAgent(elf.EM_AARCH64, ""))
	m, err := Build(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, "test-arm64", m.Name)
	assert.Equal(t, "quiet panic=-1", m.Cmdline)
	assert.Equal(t, formatArm64Image, m.Kernel.Info.Format)
	_, m2, err := Load(o.StoreDir, "test-arm64")
	require.NoError(t, err)
	assert.Equal(t, "qoslab image build linux --arch arm64", m2.RebuildCommand())
}

func TestCheckAgent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	writeFile(t, p, makeAgent(elf.EM_X86_64, ""))
	assert.NoError(t, checkAgent(p, "amd64"))
	assert.ErrorContains(t, checkAgent(p, "arm64"), "is for amd64, but the image is for arm64: use bin/linux-arm64/qoslab-agent")

	writeFile(t, p, makeAgent(elf.EM_X86_64, "/lib64/ld-linux-x86-64.so.2"))
	err := checkAgent(p, "amd64")
	assert.ErrorContains(t, err, "dynamically linked (interpreter /lib64/ld-linux-x86-64.so.2)")
	assert.ErrorContains(t, err, "CGO_ENABLED=0")

	writeFile(t, p, []byte("\xcf\xfa\xed\xfe mach-o"))
	assert.ErrorContains(t, checkAgent(p, "arm64"), "is not a Linux executable")
	assert.ErrorContains(t, checkAgent(filepath.Join(dir, "nonesuch"), "amd64"), "no such file")

	writeFile(t, p, makeModule(elf.EM_X86_64, "m", "6.1"))
	assert.ErrorContains(t, checkAgent(p, "amd64"), "not an executable")
}

func TestLoadErrors(t *testing.T) {
	fx := newBuildFixture(t)
	store := fx.opts.StoreDir

	_, _, err := Load(store, "test")
	assert.ErrorIs(t, err, errNoImage)
	assert.ErrorContains(t, err, "image test is not built")
	assert.ErrorContains(t, err, "qoslab image build linux")
	_, _, err = Load(store, "../etc")
	assert.ErrorContains(t, err, `image name "../etc"`)

	_, err = Build(context.Background(), fx.opts)
	require.NoError(t, err)
	dir := filepath.Join(store, "test")

	// A changed initramfs.
	p := filepath.Join(dir, initramfsFile)
	orig, err := os.ReadFile(p)
	require.NoError(t, err)
	bad := bytes.Clone(orig)
	bad[len(bad)/2] ^= 0xff
	require.NoError(t, os.WriteFile(p, bad, 0o644))
	_, _, err = Load(store, "test")
	assert.ErrorContains(t, err, "image test is corrupt: initramfs hash ")
	assert.ErrorContains(t, err, "rebuild it with `qoslab image build linux")
	require.NoError(t, os.WriteFile(p, orig, 0o644))

	// A missing vmlinuz.
	k := filepath.Join(dir, kernelFile)
	kb, err := os.ReadFile(k)
	require.NoError(t, err)
	require.NoError(t, os.Remove(k))
	_, _, err = Load(store, "test")
	assert.ErrorContains(t, err, "image test is corrupt")
	assert.ErrorContains(t, err, kernelFile)
	require.NoError(t, os.WriteFile(k, kb, 0o644))
	_, _, err = Load(store, "test")
	require.NoError(t, err)

	// A manifest from a future qoslab.
	mp := filepath.Join(dir, manifestFile)
	mb, err := os.ReadFile(mp)
	require.NoError(t, err)
	ours := []byte(`"schema_version": "` + SchemaVersion + `"`)
	require.True(t, bytes.Contains(mb, ours))
	require.NoError(t, os.WriteFile(mp, bytes.Replace(mb, ours, []byte(`"schema_version": "2.3"`), 1), 0o644))
	_, _, err = Load(store, "test")
	assert.ErrorContains(t, err, "manifest schema 2.3, this qoslab reads 1.x")
	list, err := List(store)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Nil(t, list[0].Manifest)
	assert.Contains(t, list[0].Err, "schema 2.3")

	// A minor above ours is read.
	require.NoError(t, os.WriteFile(mp, bytes.Replace(mb, ours, []byte(`"schema_version": "1.7"`), 1), 0o644))
	_, _, err = Load(store, "test")
	assert.NoError(t, err)

	require.NoError(t, os.WriteFile(mp, []byte("{"), 0o644))
	_, _, err = Load(store, "test")
	assert.ErrorContains(t, err, "is corrupt")

	require.NoError(t, os.Remove(mp))
	_, _, err = Load(store, "test")
	assert.ErrorContains(t, err, "image test is corrupt: "+dir+" has no manifest.json")
}

func TestListEmpty(t *testing.T) {
	list, err := List(filepath.Join(t.TempDir(), "nonesuch"))
	assert.NoError(t, err)
	assert.Empty(t, list)
}

func TestDefaultDirs(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	d, err := DefaultStoreDir(env(map[string]string{"XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"}))
	require.NoError(t, err)
	assert.Equal(t, "/x/cache/qoslab/images", d)
	d, err = DefaultKernelCacheDir(env(map[string]string{"HOME": "/home/u"}))
	require.NoError(t, err)
	assert.Equal(t, "/home/u/.cache/qoslab/kernels", d)
	d, err = DefaultStoreDir(env(map[string]string{"XDG_CACHE_HOME": "relative", "HOME": "/home/u"}))
	require.NoError(t, err)
	assert.Equal(t, "/home/u/.cache/qoslab/images", d, "a relative XDG_CACHE_HOME is ignored")
	_, err = DefaultStoreDir(env(nil))
	assert.ErrorContains(t, err, "neither XDG_CACHE_HOME nor HOME")
}

// A gzip stream that does not give back what was written is caught before
// the image is swapped in (klauspost/compress v1.18.1 wrote such streams at
// level 9).
func TestVerifyInitramfs(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	ents := withParents([]fileEntry{{name: "a/b", mode: 0o644, data: bytes.Repeat([]byte{0}, 200_000), size: 200_000}})
	sum, size, err := writeInitramfs(context.Background(), &buf, ents)
	require.NoError(t, err)
	p := filepath.Join(dir, "i.gz")
	writeFile(t, p, buf.Bytes())
	assert.NoError(t, verifyInitramfs(p, sum, size))
	assert.ErrorContains(t, verifyInitramfs(p, strings.Repeat("0", 64), size), "decompresses to other bytes")

	bad := bytes.Clone(buf.Bytes())
	bad[len(bad)/2] ^= 0x55
	writeFile(t, p, bad)
	assert.ErrorContains(t, verifyInitramfs(p, sum, size), "written initramfs")
}

func TestAgentVersion(t *testing.T) {
	assert.Equal(t, "", AgentVersion(filepath.Join(t.TempDir(), "nonesuch")))
	exe, err := os.Executable()
	require.NoError(t, err)
	_ = AgentVersion(exe) // a Go binary: whatever its build information says, no error
}

// A bzImage whose kernel has no PVH entry is the kernel to boot, and the
// build says why.
func TestBuildWithoutPVH(t *testing.T) {
	fx := newBuildFixture(t)
	noPVH := makeKernelELF(fx.ft.version)
	writeFile(t, fx.ft.kernel, makeBzImageWithPayload(fx.ft.version, withSize(xzStream(t, noPVH, true, 1), noPVH)))
	var progress bytes.Buffer
	fx.opts.Progress = &progress
	m, err := Build(context.Background(), fx.opts)
	require.NoError(t, err)
	dir := filepath.Join(fx.opts.StoreDir, "test")

	assert.Nil(t, m.Vmlinux)
	require.NotNil(t, m.BootKernel)
	assert.Equal(t, kernelFile, m.BootKernel.File)
	assert.Equal(t, compressionXZ, m.BootKernel.PayloadCompression)
	assert.Empty(t, m.BootKernel.PVHEntry)
	assert.Contains(t, m.BootKernel.Reason, "no vmlinux: no PVH entry note")
	assert.Contains(t, m.BootKernel.Reason, "the bzImage boots")
	assert.Contains(t, progress.String(), "boot kernel: vmlinuz: no vmlinux: no PVH entry note")
	assert.NoFileExists(t, filepath.Join(dir, vmlinuxFile))
	img, _, err := Load(fx.opts.StoreDir, "test")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, kernelFile), img.Kernel)

	// A rebuild from a kernel with a PVH entry gets a vmlinux, and the
	// image boots it.
	withPVH := makeKernelELF(fx.ft.version, pvhNote(0x1000000))
	writeFile(t, fx.ft.kernel, makeBzImageWithPayload(fx.ft.version, debtest.Gzip(t, withPVH)))
	m, err = Build(context.Background(), fx.opts)
	require.NoError(t, err)
	require.NotNil(t, m.Vmlinux)
	assert.Equal(t, compressionGzip, m.BootKernel.PayloadCompression)
	img, _, err = Load(fx.opts.StoreDir, "test")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, vmlinuxFile), img.Kernel)
}

// An arm64 image boots its vmlinuz: there is nothing to unpack.
func TestBuildArm64BootKernel(t *testing.T) {
	fx := newBuildFixture(t)
	arm := newFakeKernel(t, elf.EM_AARCH64)
	o := fx.opts
	o.Arch = "arm64"
	o.Recipe.Kernel = KernelSpec{Source: sourcePath, Path: arm.kernel, ModulesDir: arm.modules}
	o.AgentPath = filepath.Join(t.TempDir(), "agent")
	writeFile(t, o.AgentPath, makeAgent(elf.EM_AARCH64, ""))
	m, err := Build(context.Background(), o)
	require.NoError(t, err)
	assert.Nil(t, m.Vmlinux)
	require.NotNil(t, m.BootKernel)
	assert.Equal(t, kernelFile, m.BootKernel.File)
	assert.Equal(t, "an arm64 Image, booted as it is: there is no x86 decompressor to skip", m.BootKernel.Reason)
	img, _, err := Load(o.StoreDir, "test-arm64")
	require.NoError(t, err)
	assert.Equal(t, kernelFile, filepath.Base(img.Kernel))
	require.NotNil(t, m.Uncompressed)
	assert.Equal(t, img.Kernel, img.UncompressedKernel, "an uncompressed Image is what Virtualization.framework boots, as it is")
}

// A compressed arm64 kernel (Debian's arm64 vmlinuz is gzip'd or EFI
// zboot) is unpacked at build time for Virtualization.framework, which
// takes no compressed kernel; the image records it and Load checks it.
func TestBuildArm64UncompressedKernel(t *testing.T) {
	fx := newBuildFixture(t)
	arm := newFakeKernel(t, elf.EM_AARCH64)
	raw, err := os.ReadFile(arm.kernel)
	require.NoError(t, err)
	writeFile(t, arm.kernel, debtest.Gzip(t, raw))
	o := fx.opts
	o.Arch = "arm64"
	o.Recipe.Kernel = KernelSpec{Source: sourcePath, Path: arm.kernel, ModulesDir: arm.modules}
	o.AgentPath = filepath.Join(t.TempDir(), "agent")
	writeFile(t, o.AgentPath, makeAgent(elf.EM_AARCH64, ""))
	m, err := Build(context.Background(), o)
	require.NoError(t, err)
	require.NotNil(t, m.Uncompressed)
	assert.Equal(t, uncompressedFile, m.Uncompressed.File)
	img, _, err := Load(o.StoreDir, "test-arm64")
	require.NoError(t, err)
	assert.Equal(t, kernelFile, filepath.Base(img.Kernel), "QEMU boots vmlinuz")
	got, err := os.ReadFile(img.UncompressedKernel)
	require.NoError(t, err)
	assert.Equal(t, raw, got)

	require.NoError(t, os.WriteFile(img.UncompressedKernel, []byte("tampered"), 0o644))
	_, _, err = Load(o.StoreDir, "test-arm64")
	assert.ErrorContains(t, err, "uncompressed kernel hash")

	amd, err := Build(context.Background(), fx.opts)
	require.NoError(t, err)
	assert.Nil(t, amd.Uncompressed, "amd64 images never boot on Virtualization.framework")
}

// Load checks vmlinux like the other files, and a manifest that names a
// kernel to boot that it does not list is corrupt.
func TestLoadVmlinux(t *testing.T) {
	fx := newBuildFixture(t)
	store := fx.opts.StoreDir
	_, err := Build(context.Background(), fx.opts)
	require.NoError(t, err)
	dir := filepath.Join(store, "test")
	vp := filepath.Join(dir, vmlinuxFile)
	orig, err := os.ReadFile(vp)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(vp, append(bytes.Clone(orig), 0), 0o644))
	_, _, err = Load(store, "test")
	assert.ErrorContains(t, err, "image test is corrupt: vmlinux hash ")
	require.NoError(t, os.Remove(vp))
	_, _, err = Load(store, "test")
	assert.ErrorContains(t, err, "image test is corrupt")
	assert.ErrorContains(t, err, vmlinuxFile)
	require.NoError(t, os.WriteFile(vp, orig, 0o644))
	_, _, err = Load(store, "test")
	require.NoError(t, err)

	mp := filepath.Join(dir, manifestFile)
	mb, err := os.ReadFile(mp)
	require.NoError(t, err)
	edit := func(f func(m map[string]any)) {
		t.Helper()
		var raw map[string]any
		require.NoError(t, json.Unmarshal(mb, &raw))
		f(raw)
		b, err := json.Marshal(raw)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(mp, b, 0o644))
	}
	edit(func(m map[string]any) { delete(m, "vmlinux") })
	_, _, err = Load(store, "test")
	assert.ErrorContains(t, err, "its manifest boots vmlinux but lists no vmlinux")
	edit(func(m map[string]any) { m["boot_kernel"].(map[string]any)["file"] = "bzImage" })
	_, _, err = Load(store, "test")
	assert.ErrorContains(t, err, `its manifest boots "bzImage", which is neither vmlinuz nor vmlinux`)

	// A manifest from before vmlinux (schema 1.0) boots its vmlinuz.
	edit(func(m map[string]any) {
		m["schema_version"] = "1.0"
		delete(m, "vmlinux")
		delete(m, "boot_kernel")
	})
	require.NoError(t, os.Remove(vp))
	img, lm, err := Load(store, "test")
	require.NoError(t, err)
	assert.Nil(t, lm.Vmlinux)
	assert.Nil(t, lm.BootKernel)
	assert.Equal(t, filepath.Join(dir, kernelFile), img.Kernel)
}

func TestBuildSettingsDefaults(t *testing.T) {
	home := t.TempDir()
	env := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	agentPath := filepath.Join(t.TempDir(), "agent")
	writeFile(t, agentPath, []byte("x"))
	o, err := BuildSettings{GuestAgent: agentPath, Store: "/store"}.Options(env)
	require.NoError(t, err)
	assert.Equal(t, DefaultRecipe().Arch, o.Arch, "the recipe's arch")
	assert.Equal(t, filepath.Join(home, ".cache", "qoslab", "kernels"), o.KernelCacheDir)
	assert.Equal(t, o.KernelCacheDir, o.DefaultKernelCacheDir)
	assert.Equal(t, agentPath, o.AgentPath)
	assert.Equal(t, "/store", o.StoreDir)

	var bad *SettingError
	_, err = BuildSettings{Arch: "mips", GuestAgent: agentPath}.Options(env)
	require.ErrorAs(t, err, &bad, "an arch the user gave is theirs to fix")
	_, err = BuildSettings{RecipeFile: filepath.Join(home, "none.yaml"), GuestAgent: agentPath}.Options(env)
	require.ErrorAs(t, err, &bad)
}

// A Debian 13 kernel package's extract, as the kernel fetch leaves it: its
// modules under usr/lib/modules, each .ko.xz (other kernels ship .ko.zst or
// .ko.gz). The image holds them decompressed, at .ko paths, which is what
// init.json lists.
func TestBuildDebian13Extract(t *testing.T) {
	cache := t.TempDir()
	ft := newFakeKernel(t, elf.EM_AARCH64)
	ext := filepath.Join(cache, "linux-image-"+ft.version+"_6.12.1-1_arm64")
	require.NoError(t, os.MkdirAll(filepath.Join(ext, "usr"), 0o755))
	require.NoError(t, os.Rename(filepath.Join(ft.root, "boot"), filepath.Join(ext, "boot")))
	require.NoError(t, os.Rename(filepath.Join(ft.root, "lib"), filepath.Join(ext, "usr", "lib")))
	require.NoError(t, os.Symlink(filepath.Base(ext), filepath.Join(cache, debianLink("linux-image-arm64", "arm64"))))
	agent := filepath.Join(t.TempDir(), "qoslab-agent")
	writeFile(t, agent, makeAgent(elf.EM_AARCH64, ""))
	r := DefaultRecipe()
	r.Modules = []string{"gzm", "c"}
	store := t.TempDir()
	m, err := Build(context.Background(), BuildOptions{Recipe: r, Arch: "arm64", AgentPath: agent, AgentVersion: "test",
		StoreDir: store, KernelCacheDir: cache})
	require.NoError(t, err)
	modsDir := filepath.Join(ext, "usr", "lib", "modules", ft.version)
	assert.Equal(t, modsDir, m.Kernel.ModulesDir)

	lm := "/lib/modules/" + ft.version + "/kernel/drivers/"
	want := []string{lm + "a/a.ko", lm + "f/f.ko", lm + "zs/zs.ko", lm + "gzm/gzm.ko", lm + "b/b.ko", lm + "c/c.ko"}
	var got []string
	for _, mod := range m.Modules {
		got = append(got, mod.Path)
	}
	assert.Equal(t, want, got)
	files, _ := readInitramfs(t, filepath.Join(store, m.Name, initramfsFile))
	byName := map[string][]byte{}
	for _, f := range files {
		byName[f.hdr.Name] = f.data
	}
	for _, mod := range m.Modules {
		assert.Equal(t, makeModule(elf.EM_AARCH64, mod.Name, ft.version, mod.Depends...), byName[mod.Path[1:]], "%s is in the image decompressed", mod.Path)
	}
	cfgPath := filepath.Join(t.TempDir(), "init.json")
	require.NoError(t, os.WriteFile(cfgPath, byName["etc/qoslab/init.json"], 0o644))
	cfg, err := guestinit.ReadConfig(cfgPath)
	require.NoError(t, err)
	assert.Equal(t, want, cfg.Modules)
}
