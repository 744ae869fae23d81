package registry

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/qemu"
	"github.com/qoslab/qoslab/internal/hv/vz"
)

// onlyShipped registers exactly the backends qoslab ships, qemu and vz,
// for the test's length: the tests that pin their names, accelerators,
// models and messages hold whatever other backend a build registers.
func onlyShipped(t *testing.T) {
	t.Helper()
	was := drivers
	drivers = nil
	Register(qemu.Driver())
	Register(vz.Driver(agent.ShutdownOver))
	t.Cleanup(func() { drivers = was })
}

func TestUnknownBackendIsNeverAFallback(t *testing.T) {
	onlyShipped(t)
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
	onlyShipped(t)
	var names []string
	for _, h := range Helpers() {
		names = append(names, h.Name+" "+h.Arg)
		assert.NotNil(t, h.Main)
	}
	assert.Equal(t, []string{vz.HostCommand + " STATE_DIR"}, names)
}

func TestCheckVMReadsWhatBackendsRegistered(t *testing.T) {
	onlyShipped(t)
	assert.Equal(t, []string{"kvm", "tcg", "hvf"}, Accels())
	assert.Equal(t, []string{QEMU}, AccelBackends())
	assert.Equal(t, []string{hv.ModelDefault, hv.ModelVZ}, Models())
	assert.Equal(t, QEMU, ModelBackend(hv.ModelVZ))
	assert.Empty(t, ModelBackend(hv.ModelDefault), "every backend's own")

	for _, tc := range []struct {
		name, backend string
		c             hv.VMConfig
		want          []string
	}{
		{"nothing asked", "", hv.VMConfig{CPUs: 2}, nil},
		{"qemu's own", QEMU, hv.VMConfig{Accel: "tcg", Model: hv.ModelVZ}, nil},
		{"backend decided later", "", hv.VMConfig{Accel: "kvm", Model: hv.ModelVZ}, nil},
		{"unknown backend: Check's", "xen", hv.VMConfig{Accel: "kvm"}, nil},
		{"unknown accel", "", hv.VMConfig{Accel: "whpx"}, []string{`vm.accel "whpx": allowed kvm, tcg, hvf, or leave it out to use KVM/hvf when they work`}},
		{"vz takes none", VZ, hv.VMConfig{Accel: "kvm"}, []string{`vm.accel "kvm": only the qemu backend takes an accelerator`}},
		{"unknown model", QEMU, hv.VMConfig{Model: "vmware"}, []string{`vm.model "vmware": allowed default, vz, or leave it out for the backend's own`}},
		{"qemu's model on vz", VZ, hv.VMConfig{Model: hv.ModelVZ}, []string{`vm.model "vz" with vm.backend vz: the vz model is the qemu backend's emulation of Virtualization.framework's devices; with vm.backend vz leave vm.model out (or use vm.backend qemu)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, CheckVM(tc.backend, tc.c))
		})
	}
}

func TestRegisterRefusesWhatWouldBeAmbiguous(t *testing.T) {
	newB := func(hv.DriverOptions) hv.Backend { return nil }
	for _, tc := range []struct {
		name string
		d    hv.Driver
		want string
	}{
		{"no name", hv.Driver{New: newB}, "without a name or New"},
		{"no New", hv.Driver{Name: "x"}, "without a name or New"},
		{"a name twice", hv.Driver{Name: QEMU, New: newB}, `backend "qemu" registered twice`},
		{"another's model", hv.Driver{Name: "x", New: newB, Models: []hv.Model{{Name: hv.ModelVZ}}}, `device model "vz", which is backend qemu's`},
		{"every backend's own model", hv.Driver{Name: "x", New: newB, Models: []hv.Model{{Name: hv.ModelDefault}}}, "which is every backend's own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := Names()
			var got any
			func() {
				defer func() { got = recover() }()
				Register(tc.d)
			}()
			require.NotNil(t, got, "registered")
			assert.Contains(t, got, tc.want)
			assert.Equal(t, before, Names())
		})
	}
}
