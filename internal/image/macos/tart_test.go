package macos

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/hv/vz"
)

func tartFixture(name string) string {
	return filepath.Join("..", "..", "..", "testdata", "macos", name)
}

// copyTart copies a fixture tart VM to a temporary directory.
func copyTart(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.CopyFS(dir, os.DirFS(tartFixture(name))))
	return dir
}

// editTartConfig rewrites dir's config.json through edit.
func editTartConfig(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, json.Unmarshal(b, &c))
	edit(c)
	b, err = json.Marshal(c)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

// snapshot is every file of dir with its content hash, size and time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		fi, err := d.Info()
		require.NoError(t, err)
		sum := ""
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			sum = string(sha256.New().Sum(b))
		}
		out[p] = fi.Mode().String() + fi.ModTime().String() + sum
		return nil
	}))
	return out
}

func TestInspectTart(t *testing.T) {
	vm, err := inspectTart(tartFixture("tart-sonoma"))
	require.NoError(t, err)
	assert.Equal(t, 4, vm.CPUs)
	assert.Equal(t, 4, vm.MinCPUs)
	assert.Equal(t, uint64(8<<30), vm.MemoryBytes)
	assert.Equal(t, uint64(8<<30), vm.MinMemoryBytes)
	assert.Equal(t, "7e:20:8d:4a:c1:5b", vm.MACAddress)
	assert.Equal(t, int64(1<<20), vm.DiskBytes)
	assert.Equal(t, "bplist00", string(vm.HardwareModel[:8]))
	assert.Equal(t, "bplist00", string(vm.MachineIdentifier[:8]))
}

func TestInspectTartRejects(t *testing.T) {
	notPlist := base64.StdEncoding.EncodeToString([]byte("just bytes"))
	for _, tc := range []struct {
		name    string
		fixture string
		edit    func(map[string]any)
		files   func(dir string)
		want    string
	}{
		{name: "a Linux VM", fixture: "tart-linux", want: `os "linux": qoslab imports macOS VMs`},
		{name: "ecid not base64", fixture: "tart-bad-ecid", want: "ecid is not base64"},
		{name: "no nvram", fixture: "tart-no-nvram", want: "no nvram.bin"},
		{name: "newer version", edit: func(c map[string]any) { c["version"] = 2 }, want: "config version 2: qoslab reads tart's version 1"},
		{name: "no version", edit: func(c map[string]any) { delete(c, "version") }, want: "config version none"},
		{name: "Intel", edit: func(c map[string]any) { c["arch"] = "amd64" }, want: `arch "amd64"`},
		{name: "no cpuCount", edit: func(c map[string]any) { delete(c, "cpuCount") }, want: `no "cpuCount"`},
		{name: "no ecid", edit: func(c map[string]any) { delete(c, "ecid") }, want: `no "ecid"`},
		{name: "fewer CPUs than the minimum", edit: func(c map[string]any) { c["cpuCount"] = 2 }, want: "cpuCount 2 with cpuCountMin 4"},
		{name: "memory below the minimum", edit: func(c map[string]any) { c["memorySize"] = 4 << 30 }, want: "memorySize 4294967296 with memorySizeMin 8589934592"},
		{name: "memory not whole MiB", edit: func(c map[string]any) { c["memorySize"] = 8<<30 + 1 }, want: "not a whole number of MiB"},
		{name: "bad MAC", edit: func(c map[string]any) { c["macAddress"] = "7e:20:8d" }, want: "macAddress"},
		{name: "multicast MAC", edit: func(c map[string]any) { c["macAddress"] = "01:00:5e:00:00:01" }, want: "multicast"},
		{name: "ASIF disk", edit: func(c map[string]any) { c["diskFormat"] = "asif" }, want: `diskFormat "asif"`},
		{name: "hardware model not a plist", edit: func(c map[string]any) { c["hardwareModel"] = notPlist }, want: "hardwareModel does not hold"},
		{name: "config not JSON", files: func(dir string) { must(os.WriteFile(filepath.Join(dir, "config.json"), []byte("{"), 0o644)) }, want: "config.json is not tart's config"},
		{name: "no config", files: func(dir string) { os.Remove(filepath.Join(dir, "config.json")) }, want: "not a tart VM directory"},
		{name: "empty disk", files: func(dir string) { must(os.Truncate(filepath.Join(dir, "disk.img"), 0)) }, want: "disk.img is empty"},
		{name: "suspended", files: func(dir string) { must(os.WriteFile(filepath.Join(dir, "state.vzvmsave"), []byte("s"), 0o644)) }, want: "suspended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fixture := tc.fixture
			if fixture == "" {
				fixture = "tart-sonoma"
			}
			dir := copyTart(t, fixture)
			if tc.edit != nil {
				editTartConfig(t, dir, tc.edit)
			}
			if tc.files != nil {
				tc.files(dir)
			}
			_, err := inspectTart(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), dir, "the error names the VM")
		})
	}

	_, err := inspectTart(filepath.Join(t.TempDir(), "none"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestImportTart(t *testing.T) {
	src := copyTart(t, "tart-sonoma")
	before := snapshot(t, src)
	bundle := filepath.Join(t.TempDir(), "store", "sonoma")
	when := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

	b, err := ImportTart(context.Background(), ImportTartOptions{Dir: src, Bundle: bundle, FreeSpace: plenty, Now: func() time.Time { return when }})
	require.NoError(t, err)
	assert.Equal(t, before, snapshot(t, src), "the tart VM is untouched")

	loaded, err := vz.OpenBundle(bundle)
	require.NoError(t, err)
	assert.Equal(t, b.Config, loaded.Config)
	c := loaded.Config
	assert.Equal(t, vz.GuestMacOS, c.Kind)
	assert.Equal(t, 4, c.CPUs)
	assert.Equal(t, 4, c.MinCPUs)
	assert.Equal(t, 8192, c.MemoryMiB)
	assert.Equal(t, 8192, c.MinMemoryMiB)
	assert.Equal(t, int64(1<<20), c.DiskBytes)
	assert.Equal(t, when, c.CreatedAt)
	assert.NotEmpty(t, c.MACAddress)
	assert.NotEqual(t, "7e:20:8d:4a:c1:5b", c.MACAddress, "a MAC of its own: the tart VM may run beside it, as a tart clone does")

	vm, err := inspectTart(src)
	require.NoError(t, err)
	assert.Equal(t, vm.HardwareModel, loaded.HardwareModel)
	assert.Equal(t, vm.MachineIdentifier, loaded.MachineIdentifier)
	for from, to := range map[string]string{"disk.img": vz.DiskFile, "nvram.bin": vz.AuxFile} {
		want, err := os.ReadFile(filepath.Join(src, from))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(bundle, to))
		require.NoError(t, err)
		assert.Equal(t, want, got, to)
	}

	// Writing the bundle's disk, as the guest will, leaves tart's alone.
	require.NoError(t, os.WriteFile(filepath.Join(bundle, vz.DiskFile), []byte("guest wrote"), 0o600))
	assert.Equal(t, before, snapshot(t, src))

	_, err = ImportTart(context.Background(), ImportTartOptions{Dir: src, Bundle: bundle, FreeSpace: plenty})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already exists")
	got, err := os.ReadFile(filepath.Join(bundle, vz.DiskFile))
	require.NoError(t, err)
	assert.Equal(t, "guest wrote", string(got), "an existing bundle is never touched")
}

// cloneWorksIn reports whether dir's file system clones files.
func cloneWorksIn(t *testing.T, dir string) bool {
	a := filepath.Join(dir, "clone-probe-a")
	require.NoError(t, os.WriteFile(a, []byte("x"), 0o600))
	defer os.Remove(a)
	err := cloneFile(a, filepath.Join(dir, "clone-probe-b"))
	os.Remove(filepath.Join(dir, "clone-probe-b"))
	return err == nil
}

func TestImportTartChecksRoomForACopy(t *testing.T) {
	src := copyTart(t, "tart-sonoma")
	store := t.TempDir()
	if cloneWorksIn(t, store) {
		t.Skip("this file system clones, so no copy needs room")
	}
	bundle := filepath.Join(store, "sonoma")
	_, err := ImportTart(context.Background(), ImportTartOptions{Dir: src, Bundle: bundle,
		FreeSpace: func(string) (uint64, error) { return 0, nil }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot clone it")
	assert.Contains(t, err.Error(), "only 0 B is free")
	assert.NoDirExists(t, bundle)
	left, err := os.ReadDir(store)
	require.NoError(t, err)
	assert.Empty(t, left, "no staged bundle is left")
}

func TestCopySparse(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(tartFixture("tart-sonoma"), "disk.img")
	dst := filepath.Join(dir, "disk.img")
	var last Progress
	bar := newProgressBar(nil, "copy", unitBytes, func(p Progress) { last = p })
	require.NoError(t, copySparse(context.Background(), src, dst, bar))
	want, err := os.ReadFile(src)
	require.NoError(t, err)
	got, err := os.ReadFile(dst)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, int64(len(want)), last.Done)
	n, err := allocatedSize(dst)
	require.NoError(t, err)
	assert.Less(t, n, int64(len(want)), "the zeros in the middle became a hole")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = copySparse(ctx, src, filepath.Join(dir, "other.img"), newProgressBar(nil, "", unitBytes, nil))
	assert.True(t, errors.Is(err, context.Canceled))
}
