package macos

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"howett.net/plist"
)

// fakeManifest is the part of a BuildManifest.plist the tests vary.
func fakeManifest(version, build string, types ...string) map[string]any {
	ids := []any{}
	for _, c := range []string{"vma2macosap", "j274ap"} {
		ids = append(ids, map[string]any{"Info": map[string]any{"DeviceClass": c, "Variant": "macOS Customer"}})
	}
	return map[string]any{
		"ProductVersion":        version,
		"ProductBuildVersion":   build,
		"SupportedProductTypes": types,
		"BuildIdentities":       ids,
		"ManifestVersion":       0,
	}
}

// writeZip writes members (name -> content) as a zip at dir/name.
func writeZip(t *testing.T, dir, name string, members map[string][]byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for n, b := range members {
		w, err := zw.Create(n)
		require.NoError(t, err)
		_, err = w.Write(b)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	return p
}

func plistXML(t *testing.T, v any) []byte {
	t.Helper()
	b, err := plist.MarshalIndent(v, plist.XMLFormat, "\t")
	require.NoError(t, err)
	return b
}

// writeFakeIPSW is a restore image small enough for a test: the manifests
// and a stand-in for the firmware.
func writeFakeIPSW(t *testing.T, dir string) string {
	t.Helper()
	return writeZip(t, dir, "UniversalMac_14.4.1_23E224_Restore.ipsw", map[string][]byte{
		"BuildManifest.plist": plistXML(t, fakeManifest("14.4.1", "23E224", "Mac14,2", "VirtualMac2,1")),
		"Restore.plist": plistXML(t, map[string]any{
			"ProductVersion": "14.4.1", "ProductBuildVersion": "23E224",
			"SupportedProductTypes": []string{"VirtualMac2,1"},
			"DeviceMap":             []any{map[string]any{"BoardConfig": "vma2macosap", "Platform": "vresearch101"}},
		}),
		"Firmware/dummy.im4p": []byte("not really firmware"),
	})
}

func TestInspectIPSW(t *testing.T) {
	dir := t.TempDir()
	img, err := inspectIPSW(writeFakeIPSW(t, dir))
	require.NoError(t, err)
	assert.Equal(t, "14.4.1", img.Version)
	assert.Equal(t, "23E224", img.Build)
	assert.Equal(t, []string{"Mac14,2", "VirtualMac2,1"}, img.ProductTypes)
	assert.Equal(t, []string{"vma2macosap", "j274ap"}, img.DeviceClasses)
	assert.Equal(t, "macOS 14.4.1 (23E224)", img.String())

	// Restore.plist alone is enough (older images).
	p := writeZip(t, dir, "old.ipsw", map[string][]byte{
		"Restore.plist": plistXML(t, map[string]any{
			"ProductVersion": "12.3", "ProductBuildVersion": "21E230", "SupportedProductTypes": []string{"VirtualMac2,1"},
		}),
	})
	img, err = inspectIPSW(p)
	require.NoError(t, err)
	assert.Equal(t, "12.3", img.Version)

	// Binary property lists are read too.
	bin, err := plist.Marshal(fakeManifest("15.0", "24A335", "VirtualMac2,1"), plist.BinaryFormat)
	require.NoError(t, err)
	img, err = inspectIPSW(writeZip(t, dir, "bin.ipsw", map[string][]byte{"BuildManifest.plist": bin}))
	require.NoError(t, err)
	assert.Equal(t, "24A335", img.Build)
}

func TestInspectIPSWRejects(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("hello"), 0o644))
	truncated := filepath.Join(dir, "half.ipsw")
	whole, err := os.ReadFile(writeFakeIPSW(t, t.TempDir()))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(truncated, whole[:len(whole)/2], 0o644))

	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"text file", text, []string{"notes.txt", "not a zip archive", "BuildManifest.plist"}},
		{"interrupted download", truncated, []string{"not a zip archive", "image fetch macos"}},
		{"plain zip", writeZip(t, dir, "a.zip", map[string][]byte{"readme": []byte("x")}),
			[]string{"a.zip", "without BuildManifest.plist or Restore.plist"}},
		{"iPhone image", writeZip(t, dir, "iPhone.ipsw", map[string][]byte{
			"BuildManifest.plist": plistXML(t, fakeManifest("17.4", "21E219", "iPhone14,2", "iPhone14,3", "iPhone14,4", "iPhone14,5", "iPhone14,6")),
		}), []string{"for a virtual Mac", "iPhone14,2, iPhone14,3, iPhone14,4, iPhone14,5 and 1 more"}},
		{"manifest not a plist", writeZip(t, dir, "garbled.ipsw", map[string][]byte{"BuildManifest.plist": []byte("\x00\x01garbage")}),
			[]string{"BuildManifest.plist is not a property list"}},
		{"no version", writeZip(t, dir, "nover.ipsw", map[string][]byte{
			"BuildManifest.plist": plistXML(t, fakeManifest("", "", "VirtualMac2,1")),
		}), []string{"no ProductVersion", "download it again"}},
		{"directory", dir, []string{"is not a file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := inspectIPSW(tc.path)
			require.Error(t, err)
			assert.True(t, errors.Is(err, errNotRestoreImage), "%v", err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}

	_, err = inspectIPSW(filepath.Join(dir, "missing.ipsw"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist))
}
