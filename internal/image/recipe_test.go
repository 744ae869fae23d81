package image

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The embedded recipe is a copy of vmimages/linux-microvm.yaml: go:embed
// cannot reach outside the package directory.
func TestDefaultRecipeIsVmimagesCopy(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "vmimages", defaultRecipeName))
	require.NoError(t, err)
	if string(want) != string(defaultRecipeBytes()) {
		t.Fatalf("internal/image/%[1]s differs from vmimages/%[1]s: copy vmimages/%[1]s over it (cp vmimages/%[1]s internal/image/)", defaultRecipeName)
	}
}

func TestDefaultRecipe(t *testing.T) {
	r := DefaultRecipe()
	assert.Equal(t, "linux", r.Name)
	assert.Equal(t, "amd64", r.Arch)
	assert.Equal(t, sourceDebian, r.Kernel.Source)
	assert.Equal(t, "linux-image-amd64", r.PackageFor("amd64"))
	assert.Equal(t, "linux-image-arm64", r.PackageFor("arm64"))
	assert.Equal(t, []string{"virtio_pci", "virtio_console", "virtio_blk", "vmw_vsock_virtio_transport", "evdev", "button", "gpio_keys"}, r.Modules)
	assert.Contains(t, r.CmdlineFor("amd64"), "console=ttyS0")
	assert.Contains(t, r.CmdlineFor("arm64"), "console=ttyAMA0")
	assert.NotContains(t, r.CmdlineFor("arm64"), "ttyS0")
	assert.Equal(t, "linux", r.ImageName("amd64"))
	assert.Equal(t, "linux-arm64", r.ImageName("arm64"))
}

func TestParseRecipe(t *testing.T) {
	r, err := parseRecipe([]byte(`
name: mine
arch: arm64
kernel:
  source: path
  path: k/Image.gz
  modules_dir: k/lib/modules/6.1.0
modules: [virtio-pci, virtio_blk]
cmdline: "  quiet   panic=-1 "
arch_cmdline:
  arm64: console=hvc0
`), "")
	require.NoError(t, err)
	assert.Equal(t, "mine", r.Name)
	assert.Equal(t, "k/Image.gz", r.Kernel.Path)
	assert.Equal(t, "quiet panic=-1 console=hvc0", r.CmdlineFor("arm64"))
	assert.Equal(t, "quiet panic=-1", r.CmdlineFor("amd64"))
}

func TestLoadRecipeResolvesRelativeToFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.yaml")
	require.NoError(t, os.WriteFile(p, []byte("name: x\narch: amd64\nkernel: {source: path, path: vmlinuz}\n"), 0o644))
	r, err := loadRecipe(p)
	require.NoError(t, err)
	assert.Equal(t, p, r.File)
	assert.Equal(t, filepath.Join(dir, "vmlinuz"), r.resolve(r.Kernel.Path))
	assert.Equal(t, "/abs/k", r.resolve("/abs/k"))

	_, err = loadRecipe(filepath.Join(dir, "missing.yaml"))
	assert.ErrorContains(t, err, "missing.yaml")
}

func TestParseRecipeErrors(t *testing.T) {
	base := "name: x\narch: amd64\nkernel:\n  source: debian\n"
	cases := []struct {
		name, in string
		want     []string
	}{
		{"unknown top key", base + "kernal: {}\n", []string{`line 5: unknown key "kernal"`, `did you mean "kernel"?`, "allowed at the top level: name, arch, kernel, modules, cmdline, arch_cmdline"}},
		{"unknown nested key", base + "  pakage: linux-image-amd64\n", []string{`unknown key "kernel.pakage"`, `did you mean "package"?`, "allowed under kernel: source, path, modules_dir, package"}},
		{"unknown far key", base + "colour: blue\n", []string{`unknown key "colour"`, "allowed at the top level"}},
		{"bad arch", "name: x\narch: x86_64\nkernel: {source: debian}\n", []string{`arch "x86_64"`, "allowed: amd64, arm64"}},
		{"no arch", "name: x\nkernel: {source: debian}\n", []string{"arch is missing", "amd64, arm64"}},
		{"bad source", "name: x\narch: amd64\nkernel: {source: ubuntu}\n", []string{`kernel.source "ubuntu"`, "allowed: host, path, debian"}},
		{"no source", "name: x\narch: amd64\nkernel: {}\n", []string{"kernel.source is missing", "host, path, debian"}},
		{"path without path", "name: x\narch: amd64\nkernel: {source: path}\n", []string{"needs kernel.path"}},
		{"path with modules, no dir", "name: x\narch: amd64\nkernel: {source: path, path: k}\nmodules: [virtio_pci]\n", []string{"needs kernel.modules_dir"}},
		{"path on debian", base + "  path: /boot/vmlinuz\n", []string{"kernel.path and kernel.modules_dir are for kernel.source: path"}},
		{"package on path", "name: x\narch: amd64\nkernel: {source: path, path: k, package: linux-image-amd64}\n", []string{"kernel.package is for kernel.source: debian"}},
		{"bad arch_cmdline key", base + "arch_cmdline: {riscv64: x}\n", []string{`unknown key "riscv64" under arch_cmdline`, "allowed: amd64, arm64"}},
		{"module with path", base + "modules: [kernel/virtio.ko]\n", []string{`module "kernel/virtio.ko"`}},
		{"no name", "arch: amd64\nkernel: {source: debian}\n", []string{"name is missing"}},
		{"bad name", "name: ../x\narch: amd64\nkernel: {source: debian}\n", []string{`name "../x"`}},
		{"wrong type", base + "modules: virtio_pci\n", []string{"line 5", "cannot unmarshal"}},
		{"not a mapping", "- a\n- b\n", []string{"want a mapping of keys", "a list"}},
		{"empty", "", []string{"empty"}},
		{"duplicate key", base + "name: y\n", []string{`"name" already defined`}},
		{"two documents", base + "---\nname: y\n", []string{"more than one YAML document"}},
		{"bad yaml", "name: [x\n", []string{"recipe"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseRecipe([]byte(c.in), "")
			require.Error(t, err)
			for _, w := range c.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// A recipe "file" that is a device or a 50 MB file is refused at once,
// before any parsing.
func TestLoadRecipeRefusesDevicesAndHugeFiles(t *testing.T) {
	_, err := loadRecipe("/dev/zero")
	assert.EqualError(t, err, "recipe /dev/zero: not a regular file (a character device); give a YAML recipe")
	big := filepath.Join(t.TempDir(), "big.yaml")
	require.NoError(t, os.WriteFile(big, make([]byte, 50<<20), 0o644))
	_, err = loadRecipe(big)
	assert.EqualError(t, err, "recipe "+big+": 50MiB is over the 4MiB limit for a YAML recipe")
}
