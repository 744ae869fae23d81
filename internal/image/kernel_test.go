package image

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/image/debkernel/debtest"
)

// makeZBoot wraps payload (gzip'd) the way an arm64 EFI zboot image does.
func makeZBoot(t *testing.T, img []byte) []byte {
	payload := debtest.Gzip(t, img)
	b := make([]byte, 0x200)
	copy(b, "MZ")
	copy(b[4:], "zimg")
	binary.LittleEndian.PutUint32(b[8:], uint32(len(b)))
	binary.LittleEndian.PutUint32(b[12:], uint32(len(payload)))
	copy(b[0x18:], "gzip")
	return append(b, payload...)
}

func TestInspectKernel(t *testing.T) {
	dir := t.TempDir()
	arm := makeArm64Image("6.1.0-9-arm64")
	cases := []struct {
		name    string
		data    []byte
		arch    string
		format  string
		version string
	}{
		{"bzImage", makeBzImage("6.1.0-56-amd64"), "amd64", formatBzImage, "6.1.0-56-amd64"},
		{"Image", arm, "arm64", formatArm64Image, "6.1.0-9-arm64"},
		{"Image.gz", debtest.Gzip(t, arm), "arm64", formatArm64Gzip, "6.1.0-9-arm64"},
		{"zboot", makeZBoot(t, arm), "arm64", formatArm64ZBoot, "6.1.0-9-arm64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			writeFile(t, p, c.data)
			info, err := inspectKernel(p)
			require.NoError(t, err)
			assert.Equal(t, KernelInfo{Arch: c.arch, Format: c.format, Version: c.version}, info)
			_, err = checkKernelArch(p, c.arch)
			assert.NoError(t, err)
			other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[c.arch]
			_, err = checkKernelArch(p, other)
			assert.ErrorContains(t, err, "is an "+c.arch+" "+c.format+", but the image is for "+other)

			u, err := Uncompressed(c.data)
			require.NoError(t, err)
			if c.arch == "arm64" {
				assert.Equal(t, arm, u, "Uncompressed gives the plain Image")
			} else {
				assert.Equal(t, c.data, u, "a bzImage stays as it is")
			}
		})
	}
}

func TestInspectKernelNotAKernel(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "it is empty"},
		{"text", []byte("#!/bin/sh\necho hello\n"), `no x86 boot header ("HdrS" at 0x202) nor arm64 Image magic`},
		{"vmlinux", makeAgent(elf.EM_X86_64, ""), "an ELF file (an unbootable vmlinux?"},
		{"deb", append([]byte("!<arch>\n"), make([]byte, 100)...), "an ar archive"},
		{"gzip of text", debtest.Gzip(t, []byte("hello")), "is gzip'd but holds something else, not an arm64 Image"},
		{"gzip of bzImage", debtest.Gzip(t, makeBzImage("6.1")), "is gzip'd but holds an x86 bzImage"},
		{"broken gzip", []byte{0x1f, 0x8b, 8, 0, 1, 2, 3}, "gzip"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			writeFile(t, p, c.data)
			_, err := inspectKernel(p)
			require.Error(t, err)
			assert.ErrorContains(t, err, p)
			assert.ErrorContains(t, err, c.want)
		})
	}
	_, err := inspectKernel(filepath.Join(dir, "nonesuch"))
	assert.ErrorContains(t, err, "no such file")
}

func TestLocateKernelHost(t *testing.T) {
	ft := newFakeKernel(t, elf.EM_X86_64)
	r := Recipe{Name: "h", Arch: "amd64", Kernel: KernelSpec{Source: sourceHost}, Modules: []string{"c"}}
	ks, err := LocateKernel(r, LocateOptions{Release: ft.version, Root: ft.root})
	require.NoError(t, err)
	assert.Equal(t, ft.kernel, ks.Image)
	assert.Equal(t, ft.modules, ks.ModulesDir)
	assert.Equal(t, ft.version, ks.Version)

	empty := t.TempDir()
	_, err = LocateKernel(r, LocateOptions{Release: "6.9.9-nonesuch", Root: empty})
	require.Error(t, err)
	assert.ErrorContains(t, err, filepath.Join(empty, "boot", "vmlinuz-6.9.9-nonesuch"))
	assert.ErrorContains(t, err, "use kernel.source: debian (qoslab image fetch-kernel) or path")

	// The image, but no modules.
	writeFile(t, filepath.Join(empty, "boot", "vmlinuz-6.9.9-nonesuch"), makeBzImage("6.9.9-nonesuch"))
	_, err = LocateKernel(r, LocateOptions{Release: "6.9.9-nonesuch", Root: empty})
	assert.ErrorContains(t, err, "no modules directory (looked in "+filepath.Join(empty, "lib", "modules", "6.9.9-nonesuch"))

	// A kernel that says another version than uname -r.
	other := newFakeKernel(t, elf.EM_X86_64)
	writeFile(t, other.kernel, makeBzImage("6.2.0-other"))
	_, err = LocateKernel(r, LocateOptions{Release: other.version, Root: other.root})
	assert.ErrorContains(t, err, "is version 6.2.0-other")
}

func TestLocateKernelPath(t *testing.T) {
	ft := newFakeKernel(t, elf.EM_X86_64)
	r := Recipe{Name: "p", Arch: "amd64", Kernel: KernelSpec{Source: sourcePath, Path: ft.kernel, ModulesDir: filepath.Dir(ft.modules)}, Modules: []string{"a"}}
	ks, err := LocateKernel(r, LocateOptions{})
	require.NoError(t, err)
	assert.Equal(t, ft.modules, ks.ModulesDir, "lib/modules is taken down to the kernel's version")
	assert.Equal(t, ft.version, ks.Version)

	// The arch is checked before anything is built.
	_, err = LocateKernel(r, LocateOptions{Arch: "arm64"})
	assert.ErrorContains(t, err, "is an amd64 bzImage, but the image is for arm64")

	// Modules of another kernel.
	r2 := r
	r2.Kernel.ModulesDir = filepath.Join(t.TempDir(), "lib", "modules", "5.10.0-1-amd64")
	writeFile(t, filepath.Join(r2.Kernel.ModulesDir, "modules.builtin"), nil)
	_, err = LocateKernel(r2, LocateOptions{})
	assert.ErrorContains(t, err, "is version "+ft.version+", but its modules directory")

	// Not a kernel.
	r3 := r
	r3.Kernel.Path = filepath.Join(ft.modules, "kernel/drivers/a/a.ko")
	_, err = LocateKernel(r3, LocateOptions{})
	assert.ErrorContains(t, err, "is not a Linux kernel image")

	r4 := r
	r4.Kernel.Path = filepath.Join(ft.root, "nonesuch")
	_, err = LocateKernel(r4, LocateOptions{})
	assert.ErrorContains(t, err, "kernel.path")
}

func TestLocateKernelDebian(t *testing.T) {
	cache := t.TempDir()
	r := DefaultRecipe()
	_, err := LocateKernel(r, LocateOptions{KernelCacheDir: cache, DefaultKernelCacheDir: cache})
	require.Error(t, err)
	assert.ErrorContains(t, err, "no amd64 kernel from package linux-image-amd64 in "+cache)
	assert.ErrorContains(t, err, "fetch it with `qoslab image fetch-kernel --arch amd64`")

	_, err = LocateKernel(r, LocateOptions{Arch: "arm64", KernelCacheDir: cache, DefaultKernelCacheDir: "/elsewhere"})
	assert.ErrorContains(t, err, "`qoslab image fetch-kernel --arch arm64 --kernel-cache "+cache+"`")

	r.Kernel.Package = "linux-image-6.1.0-9-amd64"
	_, err = LocateKernel(r, LocateOptions{KernelCacheDir: cache, DefaultKernelCacheDir: cache})
	assert.ErrorContains(t, err, "`qoslab image fetch-kernel --arch amd64 --recipe RECIPE`")

	// What the fetch script leaves: an extract and a link to it.
	r = DefaultRecipe()
	ext := filepath.Join(cache, "linux-image-6.1.0-test-amd64_6.1.1-1_amd64")
	ft := newFakeKernel(t, elf.EM_X86_64)
	require.NoError(t, os.Rename(ft.root, ext))
	require.NoError(t, os.Symlink(filepath.Base(ext), filepath.Join(cache, debianLink("linux-image-amd64", "amd64"))))
	ks, err := LocateKernel(r, LocateOptions{KernelCacheDir: cache})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(ext, "boot", "vmlinuz-"+ft.version), ks.Image)
	assert.Equal(t, filepath.Join(ext, "lib", "modules", ft.version), ks.ModulesDir)
	assert.Equal(t, ft.version, ks.Version)
	assert.Equal(t, filepath.Base(ext), ks.Package)
}
