package image

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/image/debkernel/debtest"
)

func loadNames(set ModuleSet) []string {
	out := make([]string, len(set.Load))
	for i, m := range set.Load {
		out[i] = m.Name
	}
	return out
}

func TestModinfoFixture(t *testing.T) {
	ft := newFakeKernel(t, elf.EM_X86_64)
	info, err := readModinfo(filepath.Join(ft.modules, "kernel/drivers/c/c.ko"), "amd64")
	require.NoError(t, err)
	assert.Equal(t, "a,b", info["depends"])
	assert.Equal(t, "c", info["name"])
	assert.Equal(t, ft.version+" SMP preempt mod_unload modversions ", info["vermagic"])
}

// Without modules.dep (a Debian package's extract) the order comes from .modinfo.
func TestResolveModulesFromModinfo(t *testing.T) {
	ft := newFakeKernel(t, elf.EM_X86_64)
	set, err := resolveModuleSet(ft.modules, ft.version, "amd64", []string{"c", "d-dash", "a", "e", "g", "c"})
	require.NoError(t, err)
	assert.Equal(t, depsFromModinfo, set.DepsFrom)
	assert.Equal(t, []string{"a", "b", "c", "d_dash", "g"}, loadNames(set), "dependencies first, each once, in the asked order otherwise")
	assert.Equal(t, []string{"e"}, set.Builtin, "e is built in: asked for and depended on, recorded once")
	assert.Equal(t, "kernel/net/d-dash.ko", set.Load[3].File, "'-' and '_' are the same in module names")
	assert.Equal(t, []string{"a", "b"}, set.Load[2].Depends)

	set, err = resolveModuleSet(ft.modules, ft.version, "amd64", []string{"d_dash"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "d_dash"}, loadNames(set))

	set, err = resolveModuleSet(ft.modules, ft.version, "amd64", nil)
	require.NoError(t, err)
	assert.Empty(t, set.Load)
}

// Compressed modules (.ko.xz as Debian 13 ships them, .ko.zst, .ko.gz) are
// read decompressed: their .modinfo gives the order, and the image holds
// each as a plain .ko.
func TestResolveCompressedModules(t *testing.T) {
	ft := newFakeKernel(t, elf.EM_AARCH64)
	set, err := resolveModuleSet(ft.modules, ft.version, "arm64", []string{"gzm"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "f", "zs", "gzm"}, loadNames(set))
	want := []struct{ file, compression, guest string }{
		{"kernel/drivers/a/a.ko", "", "kernel/drivers/a/a.ko"},
		{"kernel/drivers/f/f.ko.xz", "xz", "kernel/drivers/f/f.ko"},
		{"kernel/drivers/zs/zs.ko.zst", "zst", "kernel/drivers/zs/zs.ko"},
		{"kernel/drivers/gzm/gzm.ko.gz", "gz", "kernel/drivers/gzm/gzm.ko"},
	}
	for i, w := range want {
		m := set.Load[i]
		assert.Equal(t, w.file, m.File)
		assert.Equal(t, w.compression, m.Compression)
		assert.Equal(t, w.guest, m.GuestFile())
		b, err := readModule(filepath.Join(ft.modules, m.File))
		require.NoError(t, err)
		assert.Equal(t, makeModule(elf.EM_AARCH64, m.Name, ft.version, m.Depends...), b, "%s decompressed", m.File)
	}

	// The vermagic and arch checks see through the compression.
	writeFile(t, filepath.Join(ft.modules, "kernel/old.ko.xz"), xzStream(t, makeModule(elf.EM_AARCH64, "old", "5.10.0-1-arm64"), false, 1))
	_, err = resolveModuleSet(ft.modules, ft.version, "arm64", []string{"old"})
	assert.ErrorContains(t, err, "is built for kernel 5.10.0-1-arm64, not "+ft.version)
	writeFile(t, filepath.Join(ft.modules, "kernel/x86.ko.zst"), debtest.Zstd(t, makeModule(elf.EM_X86_64, "x86", ft.version)))
	_, err = resolveModuleSet(ft.modules, ft.version, "arm64", []string{"x86"})
	assert.ErrorContains(t, err, "is a module for amd64, but the image is for arm64")
}

// With modules.dep its dependencies win (they are what depmod computed).
func TestResolveModulesFromModulesDep(t *testing.T) {
	ft := newFakeKernel(t, elf.EM_X86_64)
	// modules.dep lists every dependency, transitively; here it also says d
	// needs c, which .modinfo does not.
	writeFile(t, filepath.Join(ft.modules, "modules.dep"), []byte(
		"kernel/drivers/a/a.ko:\n"+
			"kernel/drivers/b/b.ko: kernel/drivers/a/a.ko\n"+
			"kernel/drivers/c/c.ko: kernel/drivers/b/b.ko kernel/drivers/a/a.ko\n"+
			"kernel/net/d-dash.ko: kernel/drivers/c/c.ko kernel/drivers/b/b.ko kernel/drivers/a/a.ko\n"))
	set, err := resolveModuleSet(ft.modules, ft.version, "amd64", []string{"d_dash"})
	require.NoError(t, err)
	assert.Equal(t, depsFromModulesDep, set.DepsFrom)
	assert.Equal(t, []string{"a", "b", "c", "d_dash"}, loadNames(set))
}

func TestResolveModulesErrors(t *testing.T) {
	ft := newFakeKernel(t, elf.EM_X86_64)
	resolve := func(names ...string) error {
		_, err := resolveModuleSet(ft.modules, ft.version, "amd64", names)
		return err
	}

	err := resolve("nonesuch")
	assert.ErrorContains(t, err, "module nonesuch does not exist for kernel "+ft.version+": no nonesuch.ko in "+ft.modules+" and it is not in modules.builtin")
	err = resolve("d_dahs")
	assert.ErrorContains(t, err, "did you mean d_dash?")

	// A damaged compressed module: its file and what is wrong.
	for _, c := range []struct{ name, file, says string }{
		{"badxz", "kernel/bad/badxz.ko.xz", "xz: no xz stream header"},
		{"badzst", "kernel/bad/badzst.ko.zst", "zstd"},
		{"badgz", "kernel/bad/badgz.ko.gz", "gzip"},
	} {
		writeFile(t, filepath.Join(ft.modules, c.file), []byte{0xfd, '7', 'z', 'X', 'Z', 0})
		err = resolve(c.name)
		assert.ErrorContains(t, err, "module "+c.name+": "+filepath.Join(ft.modules, c.file))
		assert.ErrorContains(t, err, c.says)
	}

	// A dependency that is not there.
	writeFile(t, filepath.Join(ft.modules, "kernel/h.ko"), makeModule(elf.EM_X86_64, "h", ft.version, "missing_dep"))
	err = resolve("h")
	assert.ErrorContains(t, err, "module missing_dep (needed by h) does not exist")

	// A cycle.
	writeFile(t, filepath.Join(ft.modules, "kernel/x.ko"), makeModule(elf.EM_X86_64, "x", ft.version, "y"))
	writeFile(t, filepath.Join(ft.modules, "kernel/y.ko"), makeModule(elf.EM_X86_64, "y", ft.version, "z"))
	writeFile(t, filepath.Join(ft.modules, "kernel/z.ko"), makeModule(elf.EM_X86_64, "z", ft.version, "x"))
	err = resolve("a", "x")
	assert.ErrorContains(t, err, "dependency cycle x -> y -> z -> x")

	// A module of another kernel version.
	writeFile(t, filepath.Join(ft.modules, "kernel/old.ko"), makeModule(elf.EM_X86_64, "old", "5.10.0-1-amd64"))
	err = resolve("old")
	assert.ErrorContains(t, err, "is built for kernel 5.10.0-1-amd64, not "+ft.version)

	// A module for another arch.
	writeFile(t, filepath.Join(ft.modules, "kernel/arm.ko"), makeModule(elf.EM_AARCH64, "arm", ft.version))
	err = resolve("arm")
	assert.ErrorContains(t, err, "is a module for arm64, but the image is for amd64")

	// Not a module at all.
	writeFile(t, filepath.Join(ft.modules, "kernel/junk.ko"), []byte("not an ELF"))
	err = resolve("junk")
	assert.ErrorContains(t, err, "is not a kernel module")
	writeFile(t, filepath.Join(ft.modules, "kernel/exe.ko"), makeAgent(elf.EM_X86_64, ""))
	err = resolve("exe")
	assert.ErrorContains(t, err, "not a relocatable object")

	// Without modules.builtin the error says built-ins are unknown.
	require.NoError(t, os.Remove(filepath.Join(ft.modules, "modules.builtin")))
	err = resolve("e")
	assert.ErrorContains(t, err, "has no modules.builtin")

	_, err = resolveModuleSet(filepath.Join(ft.root, "nonesuch"), ft.version, "amd64", []string{"a"})
	assert.ErrorContains(t, err, "nonesuch")
}
