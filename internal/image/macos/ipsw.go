package macos

import (
	"archive/zip"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"howett.net/plist"
)

// errNotRestoreImage is wrapped by inspectIPSW's error when the file is not
// a macOS restore image for a virtual Mac.
var errNotRestoreImage = errors.New("not a macOS restore image")

// RestoreImage is what an IPSW's manifests say about it.
type RestoreImage struct {
	Path         string
	Version      string // ProductVersion, e.g. 14.4.1
	Build        string // ProductBuildVersion, e.g. 23E224
	ProductTypes []string
	// DeviceClasses are the board configurations of its build identities
	// (vma2macosap is the virtual Mac).
	DeviceClasses []string
}

// String is "macOS 14.4.1 (23E224)".
func (r RestoreImage) String() string {
	return fmt.Sprintf("macOS %s (%s)", r.Version, r.Build)
}

// virtualMacPrefix starts the product type of Virtualization.framework's Mac
// (VirtualMac2,1); a restore image without one cannot install a VM.
const virtualMacPrefix = "VirtualMac"

// maxManifest bounds what is read of a manifest; real ones are a few MB.
const maxManifest = 64 << 20

// buildManifest holds the fields of BuildManifest.plist qoslab reads.
type buildManifest struct {
	ProductVersion        string   `plist:"ProductVersion"`
	ProductBuildVersion   string   `plist:"ProductBuildVersion"`
	SupportedProductTypes []string `plist:"SupportedProductTypes"`
	BuildIdentities       []struct {
		Info struct {
			DeviceClass string `plist:"DeviceClass"`
		} `plist:"Info"`
	} `plist:"BuildIdentities"`
}

// restorePlist holds the fields of Restore.plist qoslab reads.
type restorePlist struct {
	ProductVersion        string   `plist:"ProductVersion"`
	ProductBuildVersion   string   `plist:"ProductBuildVersion"`
	SupportedProductTypes []string `plist:"SupportedProductTypes"`
	DeviceMap             []struct {
		BoardConfig string `plist:"BoardConfig"`
	} `plist:"DeviceMap"`
}

// inspectIPSW reads path's manifests without unpacking the image: an IPSW
// is a zip whose central directory says where BuildManifest.plist and
// Restore.plist are. It checks only what a file can tell; whether this host
// can run the image is Framework.Requirements' question.
func inspectIPSW(path string) (RestoreImage, error) {
	img := RestoreImage{Path: path}
	fi, err := os.Stat(path)
	if err != nil {
		return img, fmt.Errorf("restore image: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return img, fmt.Errorf("restore image %s is not a file: %w; pass the .ipsw file", path, errNotRestoreImage)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		return img, fmt.Errorf("%s: %w: it is not a zip archive (%v); an .ipsw is a zip holding BuildManifest.plist. "+
			"If it is an interrupted download, run `qoslab image fetch macos` again", path, errNotRestoreImage, err)
	}
	defer zr.Close()

	var bm buildManifest
	var rp restorePlist
	foundBM, err := readPlistMember(&zr.Reader, "BuildManifest.plist", &bm)
	if err != nil {
		return img, fmt.Errorf("%s: %w: %w", path, errNotRestoreImage, err)
	}
	foundRP, err := readPlistMember(&zr.Reader, "Restore.plist", &rp)
	if err != nil {
		return img, fmt.Errorf("%s: %w: %w", path, errNotRestoreImage, err)
	}
	if !foundBM && !foundRP {
		return img, fmt.Errorf("%s: %w: a zip without BuildManifest.plist or Restore.plist; pass a macOS .ipsw "+
			"(UniversalMac_<version>_<build>_Restore.ipsw)", path, errNotRestoreImage)
	}

	img.Version = cmp.Or(bm.ProductVersion, rp.ProductVersion)
	img.Build = cmp.Or(bm.ProductBuildVersion, rp.ProductBuildVersion)
	img.ProductTypes = mergeUnique(bm.SupportedProductTypes, rp.SupportedProductTypes)
	for _, id := range bm.BuildIdentities {
		img.DeviceClasses = mergeUnique(img.DeviceClasses, []string{id.Info.DeviceClass})
	}
	for _, d := range rp.DeviceMap {
		img.DeviceClasses = mergeUnique(img.DeviceClasses, []string{d.BoardConfig})
	}
	if img.Version == "" || img.Build == "" {
		return img, fmt.Errorf("%s: %w: its manifest names no ProductVersion or ProductBuildVersion; the file is damaged, download it again",
			path, errNotRestoreImage)
	}
	if !slices.ContainsFunc(img.ProductTypes, func(t string) bool { return strings.HasPrefix(t, virtualMacPrefix) }) {
		return img, fmt.Errorf("%s: %w for a virtual Mac: %s is for %s, none a %s; pass a macOS restore image for Apple silicon "+
			"(UniversalMac_..._Restore.ipsw)", path, errNotRestoreImage, img, summarize(img.ProductTypes, 4), virtualMacPrefix)
	}
	return img, nil
}

// readPlistMember decodes the root-level zip member name into v; found is
// false when there is none.
func readPlistMember(zr *zip.Reader, name string, v any) (found bool, err error) {
	f, err := zr.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return true, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxManifest {
		return true, fmt.Errorf("%s is over %s", name, formatBytes(maxManifest))
	}
	if _, err := plist.Unmarshal(b, v); err != nil {
		return true, fmt.Errorf("%s is not a property list: %w", name, err)
	}
	return true, nil
}

// mergeUnique appends b's non-empty values not already in a.
func mergeUnique(a, b []string) []string {
	for _, s := range b {
		if s != "" && !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// summarize lists at most n values: "iPhone14,2, iPhone14,3 and 5 more".
func summarize(vals []string, n int) string {
	if len(vals) == 0 {
		return "no device"
	}
	if len(vals) <= n {
		return strings.Join(vals, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(vals[:n], ", "), len(vals)-n)
}
