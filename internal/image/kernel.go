package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/qoslab/qoslab/internal/image/debkernel"
	"github.com/qoslab/qoslab/internal/shquote"
)

// Kernel formats InspectKernel recognizes.
const (
	formatBzImage     = "bzImage"        // x86 boot protocol
	formatArm64Image  = "Image"          // arm64 uncompressed Image
	formatArm64Gzip   = "Image.gz"       // arm64 Image, gzip'd (Debian's arm64 vmlinuz)
	formatArm64ZBoot  = "EFI zboot"      // arm64 EFI zboot: a PE wrapper around a compressed Image
	maxKernelBytes    = 512 << 20        // refuse to decompress more than this
	linuxVersionMagic = "Linux version " // the banner in every kernel's .rodata
)

// KernelInfo is what a kernel image says about itself.
type KernelInfo struct {
	Arch    string `json:"arch"`              // amd64, arm64
	Format  string `json:"format"`            // bzImage, Image, Image.gz, EFI zboot
	Version string `json:"version,omitempty"` // uname -r of the kernel, "" when it does not say
}

// inspectKernel checks that path is a bootable Linux kernel image and says
// for which arch: an x86 bzImage ("HdrS" at 0x202) or an arm64 Image ("ARM\x64"
// at 0x38), also gzip'd or in an EFI zboot wrapper.
func inspectKernel(path string) (KernelInfo, error) {
	f, err := os.Open(path) //nolint:gosec // G304: the kernel the recipe or the kernel cache names
	if err != nil {
		return KernelInfo{}, fmt.Errorf("kernel: %w", err)
	}
	defer f.Close()
	head := make([]byte, 0x1000)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return KernelInfo{}, fmt.Errorf("kernel %s: %w", path, err)
	}
	head = head[:n]
	switch {
	case isBzImage(head):
		info := KernelInfo{Arch: "amd64", Format: formatBzImage}
		info.Version = bzImageVersion(f, head)
		return info, nil
	case isArm64Image(head):
		return arm64Info(path, formatArm64Image, f)
	case isGzip(head):
		img, err := readAllLimited(gzipReader(f))
		if err != nil {
			return KernelInfo{}, fmt.Errorf("kernel %s: gzip: %w", path, err)
		}
		if !isArm64Image(img) {
			return KernelInfo{}, fmt.Errorf("kernel %s is gzip'd but holds %s, not an arm64 Image (\"ARM\\x64\" at 0x38)", path, describe(img))
		}
		return arm64Info(path, formatArm64Gzip, bytes.NewReader(img))
	case isZBoot(head):
		img, err := zbootPayload(f, head)
		if err != nil {
			return KernelInfo{}, fmt.Errorf("kernel %s (EFI zboot): %w", path, err)
		}
		if !isArm64Image(img) {
			return KernelInfo{}, fmt.Errorf("kernel %s is an EFI zboot image holding %s, not an arm64 Image", path, describe(img))
		}
		return arm64Info(path, formatArm64ZBoot, bytes.NewReader(img))
	}
	return KernelInfo{}, fmt.Errorf("kernel %s is not a Linux kernel image: it is %s, with no x86 boot header (\"HdrS\" at 0x202) nor arm64 Image magic (\"ARM\\x64\" at 0x38)", path, describe(head))
}

// checkKernelArch checks that path is a kernel image for arch.
func checkKernelArch(path, arch string) (KernelInfo, error) {
	info, err := inspectKernel(path)
	if err != nil {
		return info, err
	}
	if info.Arch != arch {
		return info, fmt.Errorf("kernel %s is an %s %s, but the image is for %s", path, info.Arch, info.Format, arch)
	}
	return info, nil
}

func isBzImage(b []byte) bool {
	return len(b) >= 0x210 && b[0x1fe] == 0x55 && b[0x1ff] == 0xaa && string(b[0x202:0x206]) == "HdrS"
}

func isArm64Image(b []byte) bool {
	return len(b) >= 0x40 && string(b[0x38:0x3c]) == "ARM\x64"
}

func isGzip(b []byte) bool { return len(b) >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8 }

// isZBoot: an EFI zboot image is a PE file ("MZ") with "zimg" at offset 4.
func isZBoot(b []byte) bool {
	return len(b) >= 0x20 && string(b[0:2]) == "MZ" && string(b[4:8]) == "zimg"
}

// describe names what b looks like, for errors.
func describe(b []byte) string {
	switch {
	case len(b) == 0:
		return "empty"
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		return "an ELF file (an unbootable vmlinux? use the bzImage / Image)"
	case isBzImage(b):
		return "an x86 bzImage"
	case isGzip(b):
		return "gzip data"
	case bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd data"
	case bytes.HasPrefix(b, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return "xz data"
	case bytes.HasPrefix(b, []byte("MZ")):
		return "a PE/EFI file"
	case bytes.HasPrefix(b, []byte("!<arch>")):
		return "an ar archive (a .deb? fetch it with qoslab image fetch-kernel, which extracts it)"
	case bytes.HasPrefix(b, []byte("070701")):
		return "a cpio archive (an initramfs?)"
	}
	return "something else"
}

// bzImageVersion reads the version string the x86 boot header points to:
// kernel_version at 0x20E, an offset from 0x200.
func bzImageVersion(r io.ReaderAt, head []byte) string {
	off := int64(binary.LittleEndian.Uint16(head[0x20e:]))
	if off == 0 {
		return ""
	}
	buf := make([]byte, 256)
	n, _ := r.ReadAt(buf, off+0x200)
	return firstWord(buf[:n])
}

func firstWord(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// arm64Info finds the version in an uncompressed arm64 Image's banner.
func arm64Info(path, format string, r io.Reader) (KernelInfo, error) {
	info := KernelInfo{Arch: "arm64", Format: format}
	img, err := readAllLimited(r)
	if err != nil {
		return info, fmt.Errorf("kernel %s: %w", path, err)
	}
	info.Version = bannerVersion(img)
	return info, nil
}

// bannerVersion finds "Linux version X " in an uncompressed kernel.
func bannerVersion(img []byte) string {
	for off := 0; ; {
		i := bytes.Index(img[off:], []byte(linuxVersionMagic))
		if i < 0 {
			return ""
		}
		off += i + len(linuxVersionMagic)
		end := min(off+128, len(img))
		v := firstWord(img[off:end])
		// The banner is "Linux version 6.1.0-56-arm64 (builder@host) ..."; skip
		// look-alikes such as format strings.
		if v != "" && v[0] >= '0' && v[0] <= '9' && !strings.Contains(v, "%") {
			return v
		}
	}
}

func readAllLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxKernelBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxKernelBytes {
		return nil, fmt.Errorf("more than %d MiB uncompressed", maxKernelBytes>>20)
	}
	return b, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func gzipReader(r io.ReadSeeker) io.Reader {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return errReader{err}
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return errReader{err}
	}
	// Debian's Image.gz is one member; trailing padding is not an error.
	zr.Multistream(false)
	return zr
}

// zbootPayload decompresses an EFI zboot image's payload: its offset and size
// are little-endian u32 at 0x08 and 0x0C, the compression's name at 0x18.
func zbootPayload(f io.ReaderAt, head []byte) ([]byte, error) {
	off := int64(binary.LittleEndian.Uint32(head[0x08:]))
	size := int64(binary.LittleEndian.Uint32(head[0x0c:]))
	comp := firstWord(head[0x18:0x20])
	payload := io.NewSectionReader(f, off, size)
	switch comp {
	case "gzip":
		zr, err := gzip.NewReader(payload)
		if err != nil {
			return nil, err
		}
		zr.Multistream(false)
		return readAllLimited(zr)
	case "zstd", "zstd22":
		zr, err := zstd.NewReader(payload)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		return readAllLimited(zr)
	}
	return nil, fmt.Errorf("payload compressed with %q: only gzip and zstd are supported", comp)
}

// Uncompressed returns the uncompressed kernel image in kernel: an arm64
// Image.gz or EFI zboot image is decompressed (Virtualization.framework boots
// only an uncompressed arm64 Image); anything else comes back as it is.
func Uncompressed(kernel []byte) ([]byte, error) {
	switch {
	case isGzip(kernel):
		zr, err := gzip.NewReader(bytes.NewReader(kernel))
		if err != nil {
			return nil, fmt.Errorf("kernel: gzip: %w", err)
		}
		zr.Multistream(false)
		img, err := readAllLimited(zr)
		if err != nil {
			return nil, fmt.Errorf("kernel: gzip: %w", err)
		}
		if !isArm64Image(img) {
			return nil, fmt.Errorf("kernel: gzip'd %s, not an arm64 Image", describe(img))
		}
		return img, nil
	case isZBoot(kernel):
		img, err := zbootPayload(bytes.NewReader(kernel), kernel)
		if err != nil {
			return nil, fmt.Errorf("kernel (EFI zboot): %w", err)
		}
		if !isArm64Image(img) {
			return nil, fmt.Errorf("kernel: EFI zboot holding %s, not an arm64 Image", describe(img))
		}
		return img, nil
	}
	return kernel, nil
}

// KernelSource is a located kernel: its image and its modules.
type KernelSource struct {
	Source     string     `json:"source"`                // host, path, debian
	Origin     string     `json:"origin"`                // where it came from: a file, or the Debian extract's directory
	Package    string     `json:"package,omitempty"`     // debian: the package the extract holds, e.g. linux-image-6.1.0-56-amd64_6.1.192-2_amd64
	Image      string     `json:"image"`                 // the kernel image on the host
	ModulesDir string     `json:"modules_dir,omitempty"` // lib/modules/<version> on the host; "" when no modules are needed
	Version    string     `json:"version"`               // uname -r
	Info       KernelInfo `json:"info"`
	// Fetch is debian's record of where the package came from and how its
	// index was verified; nil for other sources, and for an extract made
	// before qoslab kept records.
	Fetch *debkernel.Record `json:"fetch,omitempty"`
}

// FetchLine says how a fetched kernel's index was checked; "" when there
// is no record.
func (ks KernelSource) FetchLine() string {
	r := ks.Fetch
	switch {
	case r == nil:
		return ""
	case r.Verified():
		return fmt.Sprintf("%s %s from %s, its index verified: signed by %s", r.Package, r.Version, r.Source, r.Index.SignedBy)
	}
	return fmt.Sprintf("WARNING: %s %s from %s came through an UNVERIFIED index (%s, taken with %s): delete %s and fetch it again without that flag to check it",
		r.Package, r.Version, r.Source, r.Index.Unverified, InsecureUnsignedIndexFlag, ks.Origin)
}

// LocateOptions says where to look for kernels.
type LocateOptions struct {
	Arch           string // the arch to build for (the recipe's when "")
	KernelCacheDir string // where Debian kernels are extracted (qoslab image fetch-kernel)
	// DefaultKernelCacheDir is the cache the fetch script uses without --dir;
	// when KernelCacheDir differs, the hint names it. "" to always name it.
	DefaultKernelCacheDir string
	// Release and Root are the running kernel's release and the root its
	// /boot and /lib/modules are under, for source host; "" for the real ones
	// (uname -r and /).
	Release string
	Root    string
}

// LocateKernel finds the recipe's kernel and its modules directory and checks
// that the kernel is a kernel for the arch, before anything is built.
func LocateKernel(r Recipe, o LocateOptions) (KernelSource, error) {
	arch := o.Arch
	if arch == "" {
		arch = r.Arch
	}
	if err := checkArch(arch); err != nil {
		return KernelSource{}, err
	}
	var ks KernelSource
	switch r.Kernel.Source {
	case sourceHost:
		var err error
		if ks, err = locateHost(o); err != nil {
			return ks, err
		}
	case sourcePath:
		ks = KernelSource{Source: sourcePath, Image: r.resolve(r.Kernel.Path), ModulesDir: r.resolve(r.Kernel.ModulesDir)}
		ks.Origin = ks.Image
		if _, err := os.Stat(ks.Image); err != nil {
			return ks, fmt.Errorf("kernel.path: %w", err)
		}
	case sourceDebian:
		var err error
		if ks, err = locateDebian(r.PackageFor(arch), arch, r.Kernel.Package != "", o); err != nil {
			return ks, err
		}
	default:
		return ks, fmt.Errorf("kernel.source %q: allowed: %s", r.Kernel.Source, strings.Join(sourceNames, ", "))
	}
	info, err := checkKernelArch(ks.Image, arch)
	if err != nil {
		return ks, err
	}
	ks.Info = info
	if err := ks.settleVersion(len(r.Modules) > 0); err != nil {
		return ks, err
	}
	return ks, nil
}

// settleVersion reconciles the version the kernel image states with its
// modules directory's name.
func (ks *KernelSource) settleVersion(needModules bool) error {
	if ks.ModulesDir != "" {
		fi, err := os.Stat(ks.ModulesDir)
		if err != nil {
			return fmt.Errorf("kernel modules: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("kernel modules: %s is not a directory (want the kernel's lib/modules/<version>)", ks.ModulesDir)
		}
		// A lib/modules directory: take the kernel's version under it.
		if ks.Info.Version != "" && !looksLikeModulesDir(ks.ModulesDir) {
			if sub := filepath.Join(ks.ModulesDir, ks.Info.Version); looksLikeModulesDir(sub) {
				ks.ModulesDir = sub
			}
		}
		if !looksLikeModulesDir(ks.ModulesDir) {
			return fmt.Errorf("kernel modules: %s has neither kernel/ nor modules.* files: want the kernel's lib/modules/<version>", ks.ModulesDir)
		}
	}
	dirVersion := ""
	if ks.ModulesDir != "" {
		dirVersion = filepath.Base(ks.ModulesDir)
	}
	switch {
	case ks.Info.Version != "" && dirVersion != "" && ks.Info.Version != dirVersion:
		return fmt.Errorf("kernel %s is version %s, but its modules directory %s is for %s", ks.Image, ks.Info.Version, ks.ModulesDir, dirVersion)
	case ks.Version != "" && ks.Info.Version != "" && ks.Version != ks.Info.Version:
		return fmt.Errorf("kernel %s is version %s, expected %s", ks.Image, ks.Info.Version, ks.Version)
	case ks.Version != "":
	case ks.Info.Version != "":
		ks.Version = ks.Info.Version
	case dirVersion != "":
		ks.Version = dirVersion
	default:
		ks.Version = "unknown"
	}
	if needModules && ks.ModulesDir == "" {
		return fmt.Errorf("kernel %s: no modules directory to take the recipe's modules from", ks.Image)
	}
	return nil
}

func looksLikeModulesDir(dir string) bool {
	for _, f := range []string{"kernel", "modules.dep", "modules.builtin", "modules.order"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

func locateHost(o LocateOptions) (KernelSource, error) {
	rel := o.Release
	if rel == "" && runtime.GOOS != "linux" {
		return KernelSource{}, fmt.Errorf("kernel.source host: the running kernel is %s's, not Linux; use kernel.source: path (or debian, on a Debian machine)", runtime.GOOS)
	}
	if rel == "" {
		var err error
		if rel, err = unameRelease(); err != nil {
			return KernelSource{}, fmt.Errorf("kernel.source host: %w", err)
		}
	}
	root := o.Root
	if root == "" {
		root = "/"
	}
	images := []string{
		filepath.Join(root, "boot", "vmlinuz-"+rel),
		filepath.Join(root, "lib", "modules", rel, "vmlinuz"), // Fedora, Arch
		filepath.Join(root, "usr", "lib", "modules", rel, "vmlinuz"),
	}
	moddirs := []string{
		filepath.Join(root, "lib", "modules", rel),
		filepath.Join(root, "usr", "lib", "modules", rel),
	}
	ks := KernelSource{Source: sourceHost, Version: rel}
	var unreadable error
	for _, p := range images {
		f, err := os.Open(p) //nolint:gosec // G304: the running kernel's image under /boot
		if err == nil {
			f.Close()
			ks.Image = p
			break
		}
		if errors.Is(err, fs.ErrPermission) && unreadable == nil {
			unreadable = err
		}
	}
	for _, d := range moddirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			ks.ModulesDir = d
			break
		}
	}
	fix := "use kernel.source: debian (qoslab image fetch-kernel) or path"
	switch {
	case ks.Image == "" && unreadable != nil:
		return ks, fmt.Errorf("kernel.source host: the running kernel's image is not readable (%w); make it readable (sudo chmod 0644 %s) or %s", unreadable, images[0], fix)
	case ks.Image == "":
		return ks, fmt.Errorf("kernel.source host: the running kernel (%s) has no image in %s; %s", rel, strings.Join(images, ", "), fix)
	case ks.ModulesDir == "":
		return ks, fmt.Errorf("kernel.source host: the running kernel (%s) has no modules directory (looked in %s); %s", rel, strings.Join(moddirs, ", "), fix)
	}
	ks.Origin = ks.Image
	return ks, nil
}

// fetchCommand is the command that puts a Debian kernel where LocateKernel looks.
func fetchCommand(arch string, explicitPkg bool, cacheDir, defaultCacheDir string) string {
	cmd := "qoslab image fetch-kernel --arch " + arch
	if explicitPkg {
		cmd += " --recipe RECIPE"
	}
	if cacheDir != "" && cacheDir != defaultCacheDir {
		cmd += " --kernel-cache " + shquote.Quote(cacheDir)
	}
	return cmd
}

// errNoDebianKernel is a kernel cache without the package asked for: Build
// fetches it.
var errNoDebianKernel = errors.New("not fetched yet")

// debianLink is the name the kernel fetch gives, in the kernel cache,
// to the link to the latest extract of pkg for arch.
func debianLink(pkg, arch string) string { return pkg + "_" + arch }

// locateDebian finds the extract the kernel fetch made: the link
// <cache>/<package>_<arch> points at <cache>/<real package>_<version>_<arch>/,
// which holds boot/vmlinuz-<kver> and (usr/)lib/modules/<kver>/.
func locateDebian(pkg, arch string, explicitPkg bool, o LocateOptions) (KernelSource, error) {
	ks := KernelSource{Source: sourceDebian}
	fix := "fetch it with `" + fetchCommand(arch, explicitPkg, o.KernelCacheDir, o.DefaultKernelCacheDir) + "`"
	if o.KernelCacheDir == "" {
		return ks, errors.New("kernel.source debian: no kernel cache directory")
	}
	link := filepath.Join(o.KernelCacheDir, debianLink(pkg, arch))
	dir, err := filepath.EvalSymlinks(link)
	if err != nil {
		return ks, fmt.Errorf("kernel.source debian: no %s kernel from package %s in %s; %s: %w", arch, pkg, o.KernelCacheDir, fix, errNoDebianKernel)
	}
	ks.Origin = dir
	ks.Package = filepath.Base(dir)
	rec, err := debkernel.ReadRecord(dir)
	if err != nil {
		return ks, fmt.Errorf("kernel.source debian: %w; remove %s and %s", err, dir, fix)
	}
	ks.Fetch = rec
	var vers []string
	var moddir string
	for _, lib := range []string{"lib/modules", "usr/lib/modules"} {
		ents, err := os.ReadDir(filepath.Join(dir, lib))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.IsDir() {
				vers = append(vers, e.Name())
				moddir = filepath.Join(dir, lib, e.Name())
			}
		}
	}
	sort.Strings(vers)
	switch len(vers) {
	case 0:
		return ks, fmt.Errorf("kernel.source debian: %s has no lib/modules/<version>: not a kernel package extract? remove it and %s", dir, fix)
	case 1:
	default:
		return ks, fmt.Errorf("kernel.source debian: %s holds more than one kernel (%s); remove it and %s", dir, strings.Join(vers, ", "), fix)
	}
	ks.Version = vers[0]
	ks.ModulesDir = moddir
	for _, p := range []string{
		filepath.Join(dir, "boot", "vmlinuz-"+ks.Version),
		filepath.Join(moddir, "vmlinuz"),
	} {
		if _, err := os.Stat(p); err == nil {
			ks.Image = p
			return ks, nil
		}
	}
	return ks, fmt.Errorf("kernel.source debian: %s has no boot/vmlinuz-%s; remove it and %s", dir, ks.Version, fix)
}
