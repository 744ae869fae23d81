package image

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/shquote"
)

// SchemaVersion is the manifest format this build writes. A manifest with
// another major is refused; minors only add fields. 1.1 added vmlinux and
// boot_kernel (a 1.0 image boots its vmlinuz); 1.2 added
// uncompressed_kernel (a 1.1 arm64 image cannot boot on vz: rebuild it).
const (
	SchemaVersion = "1.2"
	schemaMajor   = 1
)

// errNoImage is wrapped by Load's error when the image was never built.
var errNoImage = errors.New("image not built")

// Manifest describes a built image: <store>/<name>/manifest.json.
type Manifest struct {
	SchemaVersion string `json:"schema_version"`
	Name          string `json:"name"`
	Arch          string `json:"arch"`
	Recipe        Recipe `json:"recipe"` // as parsed
	KernelVersion string `json:"kernel_version"`
	KernelSource  string `json:"kernel_source"` // host, path, debian
	// Kernel is where the kernel came from and what it is.
	Kernel  KernelSource `json:"kernel"`
	Cmdline string       `json:"cmdline"`
	// Modules are loaded in this order at boot.
	Modules        []ManifestModule `json:"modules"`
	BuiltinModules []string         `json:"builtin_modules,omitempty"` // asked for, but built into the kernel
	ModuleDepsFrom string           `json:"module_deps_from"`          // modules.dep or .modinfo
	Agent          FileDigest       `json:"agent"`                     // installed as /init
	Vmlinuz        FileDigest       `json:"vmlinuz"`
	// Vmlinux is the uncompressed kernel unpacked from an amd64 vmlinuz,
	// when QEMU can boot it (it has a PVH entry); nil otherwise.
	Vmlinux *FileDigest `json:"vmlinux,omitempty"`
	// Uncompressed is an arm64 image's kernel uncompressed, as
	// Virtualization.framework boots it: UncompressedFile, or vmlinuz when
	// that is not compressed; nil for amd64 (and before schema 1.2).
	Uncompressed *FileDigest `json:"uncompressed_kernel,omitempty"`
	// BootKernel says which kernel file to boot; nil (manifests before
	// schema 1.1) means vmlinuz.
	BootKernel *BootKernel `json:"boot_kernel,omitempty"`
	Initramfs  FileDigest  `json:"initramfs"`
	BuiltAt    time.Time   `json:"built_at"`
	BuiltBy    string      `json:"built_by"` // the qoslab version that built it
}

// ManifestModule is a module in the initramfs.
type ManifestModule struct {
	Name    string   `json:"name"`
	Path    string   `json:"path"` // in the guest
	Depends []string `json:"depends,omitempty"`
}

// FileDigest is a file's hash and size.
type FileDigest struct {
	File    string `json:"file"`
	SHA256  string `json:"sha256"`
	Size    int64  `json:"size"`
	Version string `json:"version,omitempty"` // the agent's
	Source  string `json:"source,omitempty"`  // the agent's path on the host at build time
}

// BootKernel is the kernel file hypervisors boot, and why that one.
type BootKernel struct {
	File   string `json:"file"` // vmlinux or vmlinuz
	Reason string `json:"reason"`
	// PayloadCompression is how vmlinuz's kernel is compressed (amd64):
	// what the guest decompresses when it boots vmlinuz.
	PayloadCompression string `json:"payload_compression,omitempty"`
	// PVHEntry is where QEMU starts vmlinux (hexadecimal, from its
	// XEN_ELFNOTE_PHYS32_ENTRY note).
	PVHEntry string `json:"pvh_entry,omitempty"`
}

// bootFile is the file name of the kernel to boot.
func (m Manifest) bootFile() string {
	if m.BootKernel != nil && m.BootKernel.File == vmlinuxFile {
		return vmlinuxFile
	}
	return kernelFile
}

// Image is the hv.Image of the manifest's image in dir. Its Kernel is the
// file to boot: vmlinux when the image has one, else vmlinuz.
func (m Manifest) Image(dir string) hv.Image {
	var uncompressed string
	if m.Uncompressed != nil {
		uncompressed = filepath.Join(dir, m.Uncompressed.File)
	}
	return hv.Image{
		UncompressedKernel: uncompressed,
		Name:               m.Name,
		Dir:                dir,
		Kernel:             filepath.Join(dir, m.bootFile()),
		Initramfs:          filepath.Join(dir, initramfsFile),
		Cmdline:            m.Cmdline,
		Arch:               m.Arch,
		KernelVersion:      m.KernelVersion,
		AgentVersion:       m.Agent.Version,
	}
}

// RebuildCommand is the command that builds the image again.
func (m Manifest) RebuildCommand() string {
	cmd := "qoslab image build linux"
	if m.Recipe.File != "" {
		cmd += " --recipe " + shquote.Quote(m.Recipe.File)
	}
	if m.Recipe.Arch != "" && m.Arch != "" && m.Arch != m.Recipe.Arch {
		cmd += " --arch " + m.Arch
	}
	return cmd
}

// ImageDir is where the image name lives in the store.
func ImageDir(storeDir, name string) string { return filepath.Join(storeDir, name) }

func checkName(name string) error {
	if !nameRE.MatchString(name) || len(name) > 80 {
		return fmt.Errorf("image name %q: use letters, digits, '.', '_' and '-'", name)
	}
	return nil
}

// Load reads image name from the store and checks it: the manifest's schema,
// and that the kernel files (vmlinuz, and vmlinux when the manifest lists
// one) and the initramfs are there with the hashes the manifest recorded.
func Load(storeDir, name string) (hv.Image, Manifest, error) {
	if err := checkName(name); err != nil {
		return hv.Image{}, Manifest{}, err
	}
	if abs, err := filepath.Abs(storeDir); err == nil {
		storeDir = abs
	}
	dir := ImageDir(storeDir, name)
	m, err := readManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if _, derr := os.Stat(dir); derr != nil {
			return hv.Image{}, m, fmt.Errorf("image %s is not built (no %s): build it with `qoslab image build linux`: %w", name, dir, errNoImage)
		}
		return hv.Image{}, m, fmt.Errorf("image %s is corrupt: %s has no %s; rebuild it with `qoslab image build linux`", name, dir, manifestFile)
	}
	if err != nil {
		return hv.Image{}, m, fmt.Errorf("image %s: %w", name, err)
	}
	if m.Name != name {
		return hv.Image{}, m, fmt.Errorf("image %s is corrupt: its manifest names it %q; rebuild it with `%s`", name, m.Name, m.RebuildCommand())
	}
	type hashed struct {
		what string
		d    FileDigest
		file string
	}
	files := []hashed{{"vmlinuz", m.Vmlinuz, kernelFile}, {"initramfs", m.Initramfs, initramfsFile}}
	if m.Vmlinux != nil {
		files = append(files, hashed{"vmlinux", *m.Vmlinux, vmlinuxFile})
	}
	if u := m.Uncompressed; u != nil {
		if u.File != kernelFile && u.File != uncompressedFile {
			return hv.Image{}, m, fmt.Errorf("image %s is corrupt: its uncompressed kernel is %q, which is neither %s nor %s; rebuild it with `%s`", name, u.File, kernelFile, uncompressedFile, m.RebuildCommand())
		}
		files = append(files, hashed{"uncompressed kernel", *u, u.File})
	}
	if bk := m.BootKernel; bk != nil {
		if bk.File != kernelFile && bk.File != vmlinuxFile {
			return hv.Image{}, m, fmt.Errorf("image %s is corrupt: its manifest boots %q, which is neither %s nor %s; rebuild it with `%s`", name, bk.File, kernelFile, vmlinuxFile, m.RebuildCommand())
		}
		if bk.File == vmlinuxFile && m.Vmlinux == nil {
			return hv.Image{}, m, fmt.Errorf("image %s is corrupt: its manifest boots %s but lists no %s; rebuild it with `%s`", name, vmlinuxFile, vmlinuxFile, m.RebuildCommand())
		}
	}
	for _, f := range files {
		got, err := hashFile(filepath.Join(dir, f.file))
		if err != nil {
			// Not wrapped: a file missing here makes the image corrupt, and
			// no caller may take it for a missing image (fs.ErrNotExist).
			return hv.Image{}, m, fmt.Errorf("image %s is corrupt: %v; rebuild it with `%s`", name, err, m.RebuildCommand()) //nolint:errorlint // see above
		}
		if got.SHA256 != f.d.SHA256 || got.Size != f.d.Size {
			return hv.Image{}, m, fmt.Errorf("image %s is corrupt: %s hash %s (%d bytes), manifest says %s (%d bytes); rebuild it with `%s`",
				name, f.what, short(got.SHA256), got.Size, short(f.d.SHA256), f.d.Size, m.RebuildCommand())
		}
	}
	return m.Image(dir), m, nil
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// readManifest reads and checks dir/manifest.json (not the files' hashes).
func readManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, manifestFile)) //nolint:gosec // G304: the manifest in the image store the user names
	if err != nil {
		return m, err
	}
	// The schema first, so that a future format is refused for what it is.
	var head struct {
		SchemaVersion string `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return m, fmt.Errorf("%s is corrupt (%w); rebuild it with `qoslab image build linux`", filepath.Join(dir, manifestFile), err)
	}
	major, err := strconv.Atoi(strings.SplitN(head.SchemaVersion, ".", 2)[0])
	if err != nil {
		return m, fmt.Errorf("%s has no valid schema_version (%q); rebuild it with `qoslab image build linux`", filepath.Join(dir, manifestFile), head.SchemaVersion)
	}
	if major != schemaMajor {
		newer := "an older"
		if major > schemaMajor {
			newer = "a newer"
		}
		return m, fmt.Errorf("%s has manifest schema %s, this qoslab reads %d.x (it was built by %s qoslab); rebuild it with `qoslab image build linux`", filepath.Join(dir, manifestFile), head.SchemaVersion, schemaMajor, newer)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s is corrupt (%w); rebuild it with `qoslab image build linux`", filepath.Join(dir, manifestFile), err)
	}
	return m, nil
}

// Entry is an image in the store, as List finds it.
type Entry struct {
	Name     string    `json:"name"`
	Dir      string    `json:"dir"`
	Manifest *Manifest `json:"manifest,omitempty"`
	Err      string    `json:"error,omitempty"` // why the manifest could not be read
}

// List returns the images in the store, by name. It reads the manifests but
// does not check the hashes (Load does). A missing store is empty.
func List(storeDir string) ([]Entry, error) {
	ents, err := os.ReadDir(storeDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("image store: %w", err)
	}
	var out []Entry
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(storeDir, e.Name())
		le := Entry{Name: e.Name(), Dir: dir}
		m, err := readManifest(dir)
		if err != nil {
			le.Err = err.Error()
		} else {
			le.Manifest = &m
		}
		out = append(out, le)
	}
	return out, nil
}

// Names lists the images in the store, for completion; none when it
// cannot be read.
func Names(storeDir string) []string {
	entries, _ := List(storeDir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// DefaultStoreDir is $XDG_CACHE_HOME/qoslab/images, else ~/.cache/qoslab/images.
func DefaultStoreDir(env func(string) string) (string, error) {
	return cacheDir(env, "images")
}

// DefaultKernelCacheDir is $XDG_CACHE_HOME/qoslab/kernels, else
// ~/.cache/qoslab/kernels: where qoslab image fetch-kernel extracts kernels.
func DefaultKernelCacheDir(env func(string) string) (string, error) {
	return cacheDir(env, "kernels")
}

func cacheDir(env func(string) string, sub string) (string, error) {
	// The XDG spec says to ignore a relative XDG_CACHE_HOME.
	if x := env(config.CacheHomeEnv); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "qoslab", sub), nil
	}
	if h := env(config.HomeEnv); h != "" {
		return filepath.Join(h, ".cache", "qoslab", sub), nil
	}
	return "", fmt.Errorf("no cache directory for %s: neither XDG_CACHE_HOME nor HOME is set", sub)
}
