package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/atomicfile"
	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/guestinit"
	"github.com/qoslab/qoslab/internal/version"
)

// The files of a built image, in <store>/<name>/.
const (
	kernelFile = "vmlinuz" // the kernel image as the kernel source has it
	// vmlinuxFile is an amd64 image's kernel unpacked from vmlinuz: an ELF
	// that QEMU boots through its PVH entry without the guest decompressing
	// anything (see extractVmlinux).
	vmlinuxFile = "vmlinux"
	// uncompressedFile is an arm64 image's kernel uncompressed from a
	// gzip'd or EFI zboot vmlinuz: Virtualization.framework's Linux boot
	// loader takes no compressed kernel.
	uncompressedFile = "Image"
	initramfsFile    = "initramfs.cpio.gz"
	manifestFile     = "manifest.json"
)

// BuildOptions says what to build and where.
type BuildOptions struct {
	Recipe Recipe
	// Arch overrides the recipe's arch ("" keeps it). An image for another
	// arch than the recipe's is named <name>-<arch>.
	Arch string
	// AgentPath is the linux/<arch> agent to install as /init (e.g.
	// bin/linux-amd64/qoslab-agent); it must be a static ELF for the arch.
	AgentPath string
	// AgentVersion is the agent's version for the manifest and hv.Image;
	// "" reads what the binary's Go build information says (AgentVersion).
	AgentVersion string
	// StoreDir is the image store (BuildSettings.Options: the user's,
	// DefaultStoreDir).
	StoreDir string
	// KernelCacheDir is where the kernel fetch extracts Debian
	// kernels; "" for DefaultKernelCacheDir.
	KernelCacheDir string
	// DefaultKernelCacheDir is the user's kernel cache (DefaultKernelCacheDir),
	// so that the hint to fetch a kernel names --dir only when
	// KernelCacheDir is another; "" when the user has none.
	DefaultKernelCacheDir string
	// Mirror is the Debian mirror the environment names
	// (config.DebianMirrorEnv), for a recipe that names none.
	Mirror config.Value
	// Progress gets one line per step; nil discards them.
	Progress io.Writer
	// InsecureUnsignedIndex lets a kernel fetch take a Debian index whose
	// signature is missing or cannot be verified (recorded and printed).
	InsecureUnsignedIndex bool

	// beforeSwap, when set, runs once the new image is written in tmp,
	// before it replaces the old one; an error from it fails the build
	// there. Tests set it, to fail a build whose files are all written.
	beforeSwap func(tmp string) error
}

// Build builds the recipe's image into the store, atomically: everything is
// written into a directory beside the image, then swapped in; a build that
// fails leaves the previous image as it was. Everything that can be checked
// (the recipe, the kernel, the modules, the agent) is checked before anything
// is written.
func Build(ctx context.Context, o BuildOptions) (Manifest, error) {
	p := o.Progress
	if p == nil {
		p = io.Discard
	}
	o, arch, err := o.resolve()
	if err != nil {
		return Manifest{}, err
	}
	r := o.Recipe
	ks, err := locateOrFetchKernel(ctx, o, arch, p)
	if err != nil {
		return Manifest{}, err
	}
	mods, err := resolveModules(ks, arch, r.Modules, p)
	if err != nil {
		return Manifest{}, err
	}
	if err := checkAgent(o.AgentPath, arch); err != nil {
		return Manifest{}, err
	}
	boot, vmlinuxELF, err := chooseBootKernel(ctx, ks)
	if err != nil {
		return Manifest{}, err
	}
	if vmlinuxELF != nil {
		fmt.Fprintf(p, "boot kernel: %s (%.1f MiB, PVH entry %s): %s\n", boot.File, float64(len(vmlinuxELF))/(1<<20), boot.PVHEntry, boot.Reason)
	} else {
		fmt.Fprintf(p, "boot kernel: %s: %s\n", boot.File, boot.Reason)
	}
	m, cfg := newManifest(r, arch, ks, mods, boot)
	ents, err := initEntries(o.AgentPath, mods, cfg)
	if err != nil {
		return Manifest{}, fmt.Errorf("initramfs: %w", err)
	}
	return o.install(ctx, m, imageContent{kernel: ks, vmlinuxELF: vmlinuxELF, initramfs: ents}, p)
}

// resolve checks the recipe and the arch and fills in the defaults: the
// options a build goes on with, and the arch it builds for.
func (o BuildOptions) resolve() (BuildOptions, string, error) {
	r := o.Recipe
	if err := r.Check(); err != nil {
		return o, "", fmt.Errorf("recipe: %w", err)
	}
	arch := r.Arch
	if o.Arch != "" {
		if err := checkArch(o.Arch); err != nil {
			return o, "", err
		}
		arch = o.Arch
	}
	if o.StoreDir == "" {
		return o, "", errors.New("image build: no image store given (BuildOptions.StoreDir; BuildSettings.Options gives the user's)")
	}
	if o.KernelCacheDir == "" {
		o.KernelCacheDir = o.DefaultKernelCacheDir
	}
	if o.AgentPath == "" {
		return o, "", fmt.Errorf("image build: no agent (want a linux/%s qoslab-agent, e.g. bin/linux-%s/qoslab-agent)", arch, arch)
	}
	return o, arch, nil
}

// locateOrFetchKernel finds the recipe's kernel, fetching it from a Debian
// mirror when the cache lacks it, and says which it is.
func locateOrFetchKernel(ctx context.Context, o BuildOptions, arch string, p io.Writer) (KernelSource, error) {
	r := o.Recipe
	lo := LocateOptions{Arch: arch, KernelCacheDir: o.KernelCacheDir, DefaultKernelCacheDir: o.DefaultKernelCacheDir}
	ks, err := LocateKernel(r, lo)
	if errors.Is(err, errNoDebianKernel) {
		// The cache lacks it: fetch it, in Go, from a Debian mirror.
		if ferr := fetchDebianKernel(ctx, r, arch, o, p); ferr != nil {
			return ks, fmt.Errorf("kernel.source debian: %w", ferr)
		}
		ks, err = LocateKernel(r, lo)
	}
	if err != nil {
		return ks, err
	}
	fmt.Fprintf(p, "kernel: %s %s (%s, %s %s)\n", ks.Source, ks.Origin, ks.Version, arch, ks.Info.Format)
	if line := ks.FetchLine(); line != "" {
		fmt.Fprintf(p, "kernel: %s\n", line)
	}
	return ks, nil
}

// resolveModules finds the modules the recipe names, and what they depend
// on, in the kernel's modules, and says which they are.
func resolveModules(ks KernelSource, arch string, names []string, p io.Writer) (ModuleSet, error) {
	mods, err := resolveModuleSet(ks.ModulesDir, ks.Version, arch, names)
	if err != nil || len(names) == 0 {
		return mods, err
	}
	loaded := make([]string, len(mods.Load))
	for i, m := range mods.Load {
		loaded[i] = m.Name
	}
	line := fmt.Sprintf("modules: %s (dependencies from %s)", strings.Join(loaded, ", "), mods.DepsFrom)
	if len(mods.Builtin) > 0 {
		line += "; built in: " + strings.Join(mods.Builtin, ", ")
	}
	fmt.Fprintln(p, line)
	return mods, nil
}

// newManifest is the manifest of the image as far as it is known before
// anything is written, and the guest init's configuration.
func newManifest(r Recipe, arch string, ks KernelSource, mods ModuleSet, boot BootKernel) (Manifest, guestinit.Config) {
	cfg := guestinit.Config{
		Listen:        append([]string(nil), guestListen...),
		ScratchDevice: guestchan.ScratchDisk,
		ScratchDir:    guestScratchDir,
		KernelVersion: ks.Version,
	}
	m := Manifest{
		SchemaVersion:  SchemaVersion,
		Name:           r.ImageName(arch),
		Arch:           arch,
		Recipe:         r,
		KernelVersion:  ks.Version,
		KernelSource:   ks.Source,
		Kernel:         ks,
		Cmdline:        r.CmdlineFor(arch),
		ModuleDepsFrom: mods.DepsFrom,
		BuiltinModules: mods.Builtin,
		BuiltBy:        version.String(),
		Modules:        []ManifestModule{},
		BootKernel:     &boot,
	}
	for _, mod := range mods.Load {
		gp := guestModulePath(ks.Version, mod)
		cfg.Modules = append(cfg.Modules, gp)
		m.Modules = append(m.Modules, ManifestModule{Name: mod.Name, Path: gp, Depends: mod.Depends})
	}
	return m, cfg
}

// imageContent is what goes into an image's directory besides its manifest.
type imageContent struct {
	kernel     KernelSource
	vmlinuxELF []byte // the kernel unpacked to boot, or nil
	initramfs  []fileEntry
}

// install writes the image into a directory beside the one in the store,
// under the image's lock, and swaps it in.
func (o BuildOptions) install(ctx context.Context, m Manifest, c imageContent, p io.Writer) (Manifest, error) {
	name := m.Name
	if err := os.MkdirAll(o.StoreDir, 0o755); err != nil { //nolint:gosec // G301: the image store is readable by others, as the images in it (0644)
		return Manifest{}, fmt.Errorf("image store: %w", err)
	}
	unlock, err := lockImage(o.StoreDir, name)
	if err != nil {
		return Manifest{}, err
	}
	defer unlock()
	final := filepath.Join(o.StoreDir, name)
	recoverInterrupted(o.StoreDir, name, final)
	tmp, err := os.MkdirTemp(o.StoreDir, ".build~"+name+"~")
	if err != nil {
		return Manifest{}, fmt.Errorf("image store: %w", err)
	}
	swapped := false
	defer func() {
		if !swapped {
			_ = os.RemoveAll(tmp) // a leftover is removed by the next build (recoverInterrupted)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil { //nolint:gosec // G302: a directory, readable by others as the image store is
		return Manifest{}, err
	}
	if m, err = o.writeImage(ctx, tmp, m, c, p); err != nil {
		return Manifest{}, err
	}
	// A build whose files may not be on disk is not swapped in.
	if err := atomicfile.SyncDir(tmp); err != nil {
		return Manifest{}, fmt.Errorf("image store: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return Manifest{}, err
	}
	if o.beforeSwap != nil {
		if err := o.beforeSwap(tmp); err != nil {
			return Manifest{}, err
		}
	}
	if err := swapIn(tmp, final, name); err != nil {
		return Manifest{}, err
	}
	swapped = true
	if err := atomicfile.SyncDir(o.StoreDir); err != nil {
		// The new image is in place and whole; only the rename may not
		// survive a crash, which would leave the previous image.
		fmt.Fprintf(p, "image %s: %v (a crash now could bring back the previous image)\n", name, err)
	}
	fmt.Fprintf(p, "image %s: %s\n", name, final)
	return m, nil
}

// writeImage writes the image's files into dir, the manifest last, and
// returns the manifest with what was written.
func (o BuildOptions) writeImage(ctx context.Context, dir string, m Manifest, c imageContent, p io.Writer) (Manifest, error) {
	var err error
	m.Agent, err = hashFile(o.AgentPath)
	if err != nil {
		return Manifest{}, fmt.Errorf("agent: %w", err)
	}
	m.Agent.Version = o.AgentVersion
	m.Agent.Source, _ = filepath.Abs(o.AgentPath) // "" only when the working directory is gone
	if m.Agent.Version == "" {
		m.Agent.Version = AgentVersion(o.AgentPath)
	}
	m.Agent.File = "/init"

	ks := c.kernel
	m.Vmlinuz, err = writeHashed(filepath.Join(dir, kernelFile), func(w io.Writer) error {
		return copyFileTo(ctx, w, ks.Image, fileSize(ks.Image))
	})
	if err != nil {
		return Manifest{}, fmt.Errorf("kernel: %w", err)
	}
	if m.Uncompressed, err = writeUncompressed(dir, ks, m.Vmlinuz); err != nil {
		return Manifest{}, fmt.Errorf("kernel: %w", err)
	}
	if c.vmlinuxELF != nil {
		d, err := writeHashed(filepath.Join(dir, vmlinuxFile), func(w io.Writer) error {
			_, err := w.Write(c.vmlinuxELF)
			return err
		})
		if err != nil {
			return Manifest{}, fmt.Errorf("vmlinux: %w", err)
		}
		m.Vmlinux = &d
	}
	var rawSum string
	var rawSize int64
	m.Initramfs, err = writeHashed(filepath.Join(dir, initramfsFile), func(w io.Writer) error {
		rawSum, rawSize, err = writeInitramfs(ctx, w, c.initramfs)
		return err
	})
	if err != nil {
		return Manifest{}, fmt.Errorf("initramfs: %w", err)
	}
	if err := verifyInitramfs(filepath.Join(dir, initramfsFile), rawSum, rawSize); err != nil {
		return Manifest{}, fmt.Errorf("initramfs: %w", err)
	}
	fmt.Fprintf(p, "initramfs: %d entries, %.1f MiB (agent %.1f MiB)\n", len(c.initramfs), float64(m.Initramfs.Size)/(1<<20), float64(m.Agent.Size)/(1<<20))
	m.BuiltAt = time.Now().UTC().Truncate(time.Second)
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	if _, err := writeHashed(filepath.Join(dir, manifestFile), func(w io.Writer) error {
		_, err := w.Write(append(mb, '\n'))
		return err
	}); err != nil {
		return Manifest{}, fmt.Errorf("manifest: %w", err)
	}
	return m, nil
}

// writeUncompressed gives an arm64 image its kernel uncompressed, for
// Virtualization.framework (which boots arm64 guests only): vmlinuz itself
// when it is not compressed, else an Image file unpacked from it here, once,
// so that a Mac's VM start reads it rather than unpacking it. amd64 images
// have none.
func writeUncompressed(dir string, ks KernelSource, vmlinuz FileDigest) (*FileDigest, error) {
	if ks.Info.Arch != "arm64" {
		return nil, nil
	}
	b, err := os.ReadFile(ks.Image)
	if err != nil {
		return nil, err
	}
	if !isGzip(b) && !isZBoot(b) {
		d := vmlinuz
		d.File = kernelFile
		return &d, nil
	}
	u, err := Uncompressed(b)
	if err != nil {
		return nil, err
	}
	d, err := writeHashed(filepath.Join(dir, uncompressedFile), func(w io.Writer) error {
		_, err := w.Write(u)
		return err
	})
	if err != nil {
		return nil, err
	}
	d.File = uncompressedFile
	return &d, nil
}

// chooseBootKernel decides which kernel file the image boots. An amd64
// bzImage's kernel is unpacked here, once, and booted as an ELF through its
// PVH entry, so that the guest does not run the bzImage's decompressor,
// which under TCG takes longer than the rest of the boot. What prevents that
// (a compression qoslab cannot read, no PVH entry) is no error: the bzImage
// boots, and the reason is in the manifest and the build's progress.
// vmlinuxELF is the unpacked kernel when it is the one to boot.
func chooseBootKernel(ctx context.Context, ks KernelSource) (boot BootKernel, vmlinuxELF []byte, err error) {
	if ks.Info.Format != formatBzImage {
		return BootKernel{File: kernelFile, Reason: fmt.Sprintf("an %s %s, booted as it is: there is no x86 decompressor to skip", ks.Info.Arch, ks.Info.Format)}, nil, nil
	}
	bz, err := os.ReadFile(ks.Image)
	if err != nil {
		return BootKernel{}, nil, fmt.Errorf("kernel: %w", err)
	}
	v, err := extractVmlinux(ctx, bz)
	if cerr := ctx.Err(); cerr != nil {
		return BootKernel{}, nil, cerr
	}
	if err != nil {
		return BootKernel{File: kernelFile, PayloadCompression: v.Compression,
			Reason: fmt.Sprintf("no vmlinux: %v; so the bzImage boots, and decompresses itself in the guest (seconds under TCG)", err)}, nil, nil
	}
	return BootKernel{File: vmlinuxFile, PayloadCompression: v.Compression, PVHEntry: fmt.Sprintf("%#x", v.PVHEntry),
		Reason: fmt.Sprintf("the kernel unpacked from the bzImage's %s payload, with a PVH entry: QEMU boots it directly, so the guest does not decompress the kernel (seconds under TCG)", v.Compression)}, v.ELF, nil
}

// swapIn replaces final by tmp: the old image is renamed aside, the new one
// renamed in, the old one removed. If renaming in fails the old one is put back.
func swapIn(tmp, final, name string) error {
	old := ""
	if _, err := os.Lstat(final); err == nil {
		old = filepath.Join(filepath.Dir(final), ".old~"+name+"~"+strings.TrimPrefix(filepath.Base(tmp), ".build~"+name+"~"))
		if err := os.Rename(final, old); err != nil {
			return fmt.Errorf("image store: moving the previous image aside: %w", err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		if old != "" {
			if rerr := os.Rename(old, final); rerr != nil {
				return fmt.Errorf("image store: %w (and putting the previous image back failed: %w; it is in %s)", err, rerr, old)
			}
		}
		return fmt.Errorf("image store: %w", err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}

// recoverInterrupted cleans up after a build that died: partial builds are
// removed; a previous image moved aside but never replaced is put back.
func recoverInterrupted(store, name, final string) {
	builds, _ := filepath.Glob(filepath.Join(store, ".build~"+name+"~*"))
	for _, b := range builds {
		os.RemoveAll(b)
	}
	olds, _ := filepath.Glob(filepath.Join(store, ".old~"+name+"~*"))
	for _, o := range olds {
		if _, err := os.Lstat(final); os.IsNotExist(err) {
			if os.Rename(o, final) == nil {
				continue
			}
		}
		os.RemoveAll(o)
	}
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// writeHashed creates path, fills it with fill, syncs it and returns its hash and size.
func writeHashed(path string, fill func(io.Writer) error) (FileDigest, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) //nolint:gosec // G304: a file of the image being built, in the store the user names
	if err != nil {
		return FileDigest{}, err
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	if err := fill(cw); err != nil {
		f.Close()
		return FileDigest{}, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return FileDigest{}, err
	}
	if err := f.Close(); err != nil {
		return FileDigest{}, err
	}
	return FileDigest{File: filepath.Base(path), SHA256: hexSum(h), Size: cw.n}, nil
}

func hashFile(path string) (FileDigest, error) {
	f, err := os.Open(path) //nolint:gosec // G304: the agent the build was given, or a file of an image in the store
	if err != nil {
		return FileDigest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return FileDigest{}, err
	}
	return FileDigest{File: filepath.Base(path), SHA256: hexSum(h), Size: n}, nil
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// BuildSettings are what a user asks of `qoslab image build linux`; an
// empty field takes its default: the built-in recipe, the recipe's arch,
// the kernel cache in the user's cache directory, and the linux agent that
// `make build` puts beside qoslab.
type BuildSettings struct {
	RecipeFile, Arch, KernelCache, GuestAgent, Store string
	// InsecureUnsignedIndex and Mirror: see BuildOptions.
	InsecureUnsignedIndex bool
	Mirror                config.Value
}

// SettingError is a recipe or arch the user gave that cannot be built.
type SettingError struct{ Err error }

func (e *SettingError) Error() string { return e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// Options resolves the settings into a build's options, reading the user's
// directories through env.
func (s BuildSettings) Options(env func(string) string) (BuildOptions, error) {
	o, err := s.KernelOptions(env)
	if err != nil {
		return o, err
	}
	o.AgentPath, err = agent.FindGuestAgent(s.GuestAgent, "linux", o.Arch)
	return o, err
}

// KernelOptions resolves what fetching the kernel needs (the recipe, the
// arch, the kernel cache): Options without the guest agent.
func (s BuildSettings) KernelOptions(env func(string) string) (BuildOptions, error) {
	o := BuildOptions{Recipe: DefaultRecipe(), Arch: s.Arch, StoreDir: s.Store, AgentVersion: version.String(), InsecureUnsignedIndex: s.InsecureUnsignedIndex, Mirror: s.Mirror}
	var err error
	if s.RecipeFile != "" {
		if o.Recipe, err = loadRecipe(s.RecipeFile); err != nil {
			return o, &SettingError{err}
		}
	}
	if o.Arch == "" {
		o.Arch = o.Recipe.Arch
	}
	if err := checkArch(o.Arch); err != nil {
		return o, &SettingError{err}
	}
	if o.DefaultKernelCacheDir, err = DefaultKernelCacheDir(env); err != nil {
		return o, err
	}
	o.KernelCacheDir = s.KernelCache
	if o.KernelCacheDir == "" {
		o.KernelCacheDir = o.DefaultKernelCacheDir
	}
	return o, nil
}
