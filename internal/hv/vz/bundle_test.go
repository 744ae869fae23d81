package vz

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testNewBundle is a valid bundle request whose Populate writes aux.img as
// the framework would.
func testNewBundle() NewBundle {
	return NewBundle{
		Config: BundleConfig{
			Kind: GuestMacOS, CPUs: 4, MemoryMiB: 8192, DiskBytes: 3<<20 + 5,
			MinCPUs: 2, MinMemoryMiB: 4096,
			CreatedAt:     time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC),
			InstalledFrom: &InstallSource{IPSW: "/ipsw/UniversalMac_14.4_23E214_Restore.ipsw", Build: "23E214", OSVersion: "14.4"},
		},
		HardwareModel:     []byte("hardware model data"),
		MachineIdentifier: []byte("machine identifier data"),
		Populate: func(ctx context.Context, staged *Bundle) error {
			return os.WriteFile(staged.Path(AuxFile), []byte("nvram"), 0o600)
		},
	}
}

func makeTestBundle(t *testing.T) Bundle {
	t.Helper()
	b, err := CreateBundle(context.Background(), filepath.Join(t.TempDir(), "mac"), testNewBundle())
	require.NoError(t, err)
	return b
}

// snapshot is every file under dir with its content's hash, mode and
// modification time: what "nothing changed" compares.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(path)
		if err != nil {
			return err
		}
		sum := "dir"
		if st.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = hex.EncodeToString(h[:])
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = sum + " " + st.Mode().String() + " " + st.ModTime().String()
		return nil
	})
	require.NoError(t, err)
	return files
}

func TestCreateBundleThenOpen(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "mac")
	created, err := CreateBundle(context.Background(), dir, testNewBundle())
	require.NoError(t, err)

	b, err := OpenBundle(dir)
	require.NoError(t, err)
	assert.Equal(t, created, b)
	assert.Equal(t, dir, b.Dir)
	assert.Equal(t, bundleSchema, b.Config.SchemaVersion)
	assert.Equal(t, hardwareModelFile, b.Config.HardwareModel)
	assert.Equal(t, machineIdentifierFile, b.Config.MachineIdentifier)
	assert.True(t, strings.HasPrefix(b.Config.CreatedBy, "qoslab "), b.Config.CreatedBy)
	assert.Equal(t, []byte("hardware model data"), b.HardwareModel)
	assert.Equal(t, []byte("machine identifier data"), b.MachineIdentifier)

	st, err := os.Stat(b.Path(DiskFile))
	require.NoError(t, err)
	assert.Equal(t, int64(4<<20), st.Size(), "disk.img is rounded up to whole MiB")

	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no staging directory is left behind")
	assert.Equal(t, "mac", entries[0].Name())

	img := b.Image()
	assert.Equal(t, dir, img.Dir)
	assert.Empty(t, img.Kernel, "a bundle's image has no kernel")
	assert.Equal(t, "arm64", img.Arch)
	assert.Equal(t, "macOS 14.4 23E214", img.KernelVersion)
}

func TestBundleConfigRoundTrip(t *testing.T) {
	b := makeTestBundle(t)
	raw, err := os.ReadFile(b.Path(BundleConfigFile))
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(raw, &fields))
	for _, k := range []string{"schema_version", "kind", "cpus", "memory_mib", "disk_bytes", "hardware_model", "machine_identifier", "mac_address", "created_by", "created_at", "installed_from"} {
		assert.Contains(t, fields, k)
	}

	want := b.Config
	want.CPUs, want.MemoryMiB = 6, 12288
	require.NoError(t, writeBundleConfig(b.Dir, want))
	got, err := OpenBundle(b.Dir)
	require.NoError(t, err)
	assert.Equal(t, want, got.Config)
}

func TestOpenBundleReadsNewerMinor(t *testing.T) {
	b := makeTestBundle(t)
	raw, err := os.ReadFile(b.Path(BundleConfigFile))
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(raw, &fields))
	fields["schema_version"] = "1.7"
	fields["display"] = map[string]any{"width": 1024}
	raw, err = json.Marshal(fields)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(b.Path(BundleConfigFile), raw, 0o600))

	got, err := OpenBundle(b.Dir)
	require.NoError(t, err)
	assert.Equal(t, "1.7", got.Config.SchemaVersion)
}

func TestOpenBundleMissingFile(t *testing.T) {
	for _, file := range []string{BundleConfigFile, DiskFile, AuxFile, hardwareModelFile, machineIdentifierFile} {
		t.Run(file, func(t *testing.T) {
			b := makeTestBundle(t)
			require.NoError(t, os.Remove(b.Path(file)))
			before := snapshot(t, b.Dir)

			_, err := OpenBundle(b.Dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), file, "the error names the missing file")
			assert.Contains(t, err.Error(), bundleCreateCommand, "the error says how to make the bundle again")
			assert.Equal(t, before, snapshot(t, b.Dir), "opening changed nothing")
		})
	}
}

func TestOpenBundleNoDirectory(t *testing.T) {
	_, err := OpenBundle(filepath.Join(t.TempDir(), "absent"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no VM bundle at")
	assert.Contains(t, err.Error(), bundleCreateCommand)

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	_, err = OpenBundle(file)
	assert.ErrorContains(t, err, "is not a directory")
}

// editConfig rewrites one field of config.json (or deletes it when v is nil).
func editConfig(key string, v any) func(t *testing.T, b Bundle) {
	return func(t *testing.T, b Bundle) {
		raw, err := os.ReadFile(b.Path(BundleConfigFile))
		require.NoError(t, err)
		var fields map[string]any
		require.NoError(t, json.Unmarshal(raw, &fields))
		if v == nil {
			delete(fields, key)
		} else {
			fields[key] = v
		}
		raw, err = json.Marshal(fields)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(b.Path(BundleConfigFile), raw, 0o600))
	}
}

func writeFile(name, content string) func(t *testing.T, b Bundle) {
	return func(t *testing.T, b Bundle) {
		require.NoError(t, os.WriteFile(b.Path(name), []byte(content), 0o600))
	}
}

func TestOpenBundleCorrupt(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(t *testing.T, b Bundle)
		want   []string
	}{
		{"empty config", writeFile(BundleConfigFile, ""), []string{"corrupt", BundleConfigFile, "is empty"}},
		{"config not JSON", writeFile(BundleConfigFile, "{cpus: 4"), []string{"corrupt", "not valid JSON"}},
		{"config of wrong types", editConfig("cpus", "four"), []string{"corrupt", "does not match schema 1.1"}},
		{"no schema", editConfig("schema_version", nil), []string{"corrupt", "has no schema_version"}},
		{"bad schema", editConfig("schema_version", "one"), []string{"corrupt", `"one", not MAJOR.MINOR`}},
		{"newer major", editConfig("schema_version", "2.0"), []string{"config schema 2.0; this qoslab reads 1.x", "a newer qoslab"}},
		{"older major", editConfig("schema_version", "0.9"), []string{"config schema 0.9", "an older qoslab"}},
		{"linux kind", editConfig("kind", "linux"), []string{"Linux guest", "qoslab image build linux"}},
		{"unknown kind", editConfig("kind", "windows"), []string{`kind "windows": want "macos"`}},
		{"no cpus", editConfig("cpus", 0), []string{"cpus 0: want 1 or more"}},
		{"no memory", editConfig("memory_mib", -5), []string{"memory_mib -5"}},
		{"no disk size", editConfig("disk_bytes", 0), []string{"disk_bytes 0"}},
		{"negative minimum", editConfig("min_cpus", -1), []string{"min_cpus -1"}},
		{"hardware model outside", editConfig("hardware_model", "../hw.bin"), []string{`hardware_model "../hw.bin": want a file name in the bundle`}},
		{"hardware model is the disk", editConfig("hardware_model", DiskFile), []string{"another file of the bundle"}},
		{"one file for both", editConfig("machine_identifier", hardwareModelFile), []string{"for both"}},
		{"MAC not a MAC", editConfig("mac_address", "5a:94:ef"), []string{`mac_address "5a:94:ef": want six hexadecimal bytes joined by colons`}},
		{"MAC with dashes", editConfig("mac_address", "5a-94-ef-e4-0c-dd"), []string{"joined by colons"}},
		{"MAC multicast", editConfig("mac_address", "01:00:5e:00:00:fb"), []string{"multicast"}},
		{"empty disk", writeFile(DiskFile, ""), []string{"corrupt", DiskFile, "is empty"}},
		{"empty aux", writeFile(AuxFile, ""), []string{"corrupt", AuxFile, "is empty"}},
		{"empty hardware model", writeFile(hardwareModelFile, ""), []string{"corrupt", hardwareModelFile, "is empty"}},
		{"empty machine identifier", writeFile(machineIdentifierFile, ""), []string{"corrupt", machineIdentifierFile, "is empty"}},
		{"huge hardware model", writeFile(hardwareModelFile, strings.Repeat("x", maxPlatformData+1)), []string{"too large for platform data"}},
		{"disk is a directory", func(t *testing.T, b Bundle) {
			require.NoError(t, os.Remove(b.Path(DiskFile)))
			require.NoError(t, os.Mkdir(b.Path(DiskFile), 0o700))
		}, []string{"corrupt", DiskFile, "not a regular file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := makeTestBundle(t)
			c.break_(t, b)
			before := snapshot(t, b.Dir)
			_, err := OpenBundle(b.Dir)
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, before, snapshot(t, b.Dir), "opening changed nothing")
		})
	}
}

func TestOpenBundleUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	for _, file := range []string{hardwareModelFile, AuxFile} {
		t.Run(file, func(t *testing.T) {
			b := makeTestBundle(t)
			require.NoError(t, os.Chmod(b.Path(file), 0o200))
			_, err := OpenBundle(b.Dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), file)
			assert.Contains(t, err.Error(), "cannot be read")
		})
	}
	b := makeTestBundle(t)
	require.NoError(t, os.Chmod(b.Path(DiskFile), 0o400))
	_, err := OpenBundle(b.Dir)
	assert.ErrorContains(t, err, "is not writable by this user")
}

func TestCreateBundleNeverTouchesAnExistingOne(t *testing.T) {
	b := makeTestBundle(t)
	before := snapshot(t, b.Dir)
	_, err := CreateBundle(context.Background(), b.Dir, testNewBundle())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a bundle is already there")
	assert.Equal(t, before, snapshot(t, b.Dir))
	assertNoStaging(t, filepath.Dir(b.Dir))

	other := filepath.Join(t.TempDir(), "other")
	require.NoError(t, os.Mkdir(other, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o600))
	before = snapshot(t, other)
	_, err = CreateBundle(context.Background(), other, testNewBundle())
	assert.ErrorContains(t, err, "the directory is not empty (notes.txt")
	assert.Equal(t, before, snapshot(t, other))
}

func TestCreateBundleInEmptyDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.Mkdir(dir, 0o700))
	_, err := CreateBundle(context.Background(), dir, testNewBundle())
	require.NoError(t, err)
	_, err = OpenBundle(dir)
	assert.NoError(t, err)
}

func TestCreateBundleFailureLeavesNothing(t *testing.T) {
	cases := []struct {
		name string
		edit func(nb *NewBundle)
		want string
	}{
		{"populate fails", func(nb *NewBundle) {
			nb.Populate = func(ctx context.Context, staged *Bundle) error { return errors.New("installer failed") }
		}, "installer failed"},
		{"populate makes no aux.img", func(nb *NewBundle) {
			nb.Populate = func(ctx context.Context, staged *Bundle) error { return nil }
		}, "the new bundle does not check"},
		{"populate breaks the config", func(nb *NewBundle) {
			populate := nb.Populate
			nb.Populate = func(ctx context.Context, staged *Bundle) error {
				staged.Config.CPUs = 0
				return populate(ctx, staged)
			}
		}, "cpus 0"},
		{"no hardware model", func(nb *NewBundle) { nb.HardwareModel = nil }, "the hardware model is 0 bytes"},
		{"no cpus", func(nb *NewBundle) { nb.Config.CPUs = 0 }, "cpus 0"},
		{"linux", func(nb *NewBundle) { nb.Config.Kind = guestLinux }, "Linux guest"},
		{"other schema", func(nb *NewBundle) { nb.Config.SchemaVersion = "2.0" }, `schema_version "2.0"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			nb := testNewBundle()
			c.edit(&nb)
			_, err := CreateBundle(context.Background(), filepath.Join(parent, "mac"), nb)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			entries, err := os.ReadDir(parent)
			require.NoError(t, err)
			assert.Empty(t, entries, "neither the bundle nor its staging directory is left")
		})
	}
}

func assertNoStaging(t *testing.T, parent string) {
	t.Helper()
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".creating-")
	}
}

func TestNewMACAddress(t *testing.T) {
	seen := map[string]bool{}
	for range 64 {
		s, err := newMACAddress()
		require.NoError(t, err)
		require.NoError(t, checkMAC(s))
		mac, err := net.ParseMAC(s)
		require.NoError(t, err)
		assert.Zero(t, mac[0]&0x01, "%s is unicast", s)
		assert.NotZero(t, mac[0]&0x02, "%s is locally administered", s)
		seen[s] = true
	}
	assert.Greater(t, len(seen), 60, "random")
}

func TestCreateBundleMakesOneMAC(t *testing.T) {
	a, b := makeTestBundle(t), makeTestBundle(t)
	require.NoError(t, checkMAC(a.Config.MACAddress))
	assert.NotEqual(t, a.Config.MACAddress, b.Config.MACAddress)
	again, err := OpenBundle(a.Dir)
	require.NoError(t, err)
	assert.Equal(t, a.Config.MACAddress, again.Config.MACAddress)

	nb := testNewBundle()
	nb.Config.MACAddress = "7e:20:8d:4a:c1:5b"
	c, err := CreateBundle(context.Background(), filepath.Join(t.TempDir(), "given"), nb)
	require.NoError(t, err)
	assert.Equal(t, "7e:20:8d:4a:c1:5b", c.Config.MACAddress)
}
