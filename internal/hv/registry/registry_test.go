package registry

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/vz"
)

func TestUnknownBackendIsNeverAFallback(t *testing.T) {
	assert.Equal(t, []string{QEMU, VZ}, Names())
	_, err := New("qemo", Options{})
	var unknown *UnknownError
	require.ErrorAs(t, err, &unknown)
	assert.EqualError(t, err, `unknown VM backend "qemo": allowed qemu, vz; did you mean qemu?`)
	assert.Error(t, Check("xen"))
	assert.NoError(t, Check(VZ))

	b, err := New("", Options{})
	require.NoError(t, err)
	assert.Equal(t, Default(), b.Name(), "empty is this machine's default")
	want := QEMU
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		want = VZ
	}
	assert.Equal(t, want, Default())
}

func TestNotApplicable(t *testing.T) {
	assert.Empty(t, NotApplicable(QEMU), "qemu runs anywhere")
	if runtime.GOOS != "darwin" || runtime.GOARCH != "arm64" {
		assert.Contains(t, NotApplicable(VZ), "runs on darwin/arm64 only")
	}
}

func TestAttachAsksTheBackendThatWroteTheState(t *testing.T) {
	_, err := Attach(context.Background(), Options{}, t.TempDir())
	assert.ErrorContains(t, err, "no VM was started there")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vm.json"), []byte(`{"info": {"backend": "xen"}}`), 0o644))
	_, err = Attach(context.Background(), Options{}, dir)
	assert.ErrorContains(t, err, `unknown VM backend "xen"`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "vm.json"), []byte(`{"version": 1, "info": {"backend": "qemu", "pid": 0}}`), 0o644))
	_, err = Attach(context.Background(), Options{}, dir)
	require.Error(t, err, "a qemu VM that is not running")
	assert.NotContains(t, err.Error(), "vz", "qemu's state is qemu's to read")
}

// A vz bundle is opened through the registry, as vz opens it; a directory
// that is no bundle is not an error here (it may be a built Linux image),
// and a bundle vz cannot read is vz's error.
func TestOpenBundle(t *testing.T) {
	_, ok, err := OpenBundle(t.TempDir())
	assert.False(t, ok, "an empty directory is no backend's bundle")
	require.NoError(t, err)

	dir := filepath.Join(t.TempDir(), "mac")
	_, err = vz.CreateBundle(context.Background(), dir, vz.NewBundle{
		Config:            vz.BundleConfig{Kind: vz.GuestMacOS, CPUs: 4, MemoryMiB: 8192, DiskBytes: 1 << 20, InstalledFrom: &vz.InstallSource{Build: "23E214", OSVersion: "14.4"}},
		HardwareModel:     []byte("hardware model"),
		MachineIdentifier: []byte("machine identifier"),
		Populate: func(_ context.Context, staged *vz.Bundle) error {
			return os.WriteFile(staged.Path(vz.AuxFile), []byte("nvram"), 0o600)
		},
	})
	require.NoError(t, err)
	img, ok, err := OpenBundle(dir)
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, hv.OSMacOS, img.OS)
	assert.Equal(t, "mac", img.Name)
	assert.Equal(t, "macOS 14.4 23E214", img.KernelVersion)

	broken := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(broken, vz.BundleConfigFile), []byte("{"), 0o600))
	_, ok, err = OpenBundle(broken)
	assert.True(t, ok, "a config.json makes it vz's bundle")
	assert.Error(t, err)
}

// The command tree runs every backend's helper commands: vz's host.
func TestHelpers(t *testing.T) {
	var names []string
	for _, h := range Helpers() {
		names = append(names, h.Name+" "+h.Arg)
		assert.NotNil(t, h.Main)
	}
	assert.Equal(t, []string{vz.HostCommand + " STATE_DIR"}, names)
}
