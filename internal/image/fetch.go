package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/crypto/openpgp" //nolint:staticcheck // the keyring type debkernel verifies with
	"golang.org/x/term"

	"github.com/qoslab/qoslab/internal/config"
	"github.com/qoslab/qoslab/internal/image/debkernel"
)

// defaultSuite is the suite a mirror from the recipe or the environment's
// (config.DebianMirrorEnv) is read
// in when the recipe names none: Debian's current release, whichever it is
// when the kernel is fetched (Debian 13, trixie, since August 2025). A Mac
// always gets it: it has no apt sources, so the environment's mirror is how it finds a
// mirror, and a suite that follows Debian's releases gives its guest a
// kernel Debian still supports without a change to qoslab (a codename
// would age), verified by the archive keys that ship with qoslab
// (debkernel/keys/README.md says why they still verify after the next
// release). A Linux machine without it reads its own apt suites
// instead, so its guest runs its own release's kernel. The kernel's version
// is in the image's manifest and in every run's guest Info, so results from
// before and after a release are told apart.
const defaultSuite = "stable"

// kernelSources are the suites a Debian kernel is fetched from: the recipe's
// kernel.mirror, else the environment's mirror (in kernel.suite, default
// stable), else every suite of this machine's apt sources.
func kernelSources(r Recipe, mirror config.Value, aptDir string) ([]debkernel.Source, string, error) {
	suite := r.Kernel.Suite
	if suite == "" {
		suite = defaultSuite
	}
	if r.Kernel.Mirror != "" {
		return []debkernel.Source{{URI: r.Kernel.Mirror, Suite: suite}}, "kernel.mirror", nil
	}
	if mirror.Value != "" {
		return []debkernel.Source{{URI: mirror.Value, Suite: suite}}, mirror.Source, nil
	}
	s, err := debkernel.AptSources(aptDir)
	if err != nil {
		return nil, "", err
	}
	if len(s) == 0 {
		return nil, "", fmt.Errorf("no Debian mirror to fetch the kernel from (%s has no deb sources with main): set kernel.mirror in the recipe, or %s to a Debian archive's root URL", aptDir, config.DebianMirrorEnv)
	}
	return s, "the apt sources in " + aptDir, nil
}

// FetchKernel puts the recipe's Debian kernel for o.Arch into the kernel
// cache unless it is there already, and returns its directory.
func FetchKernel(ctx context.Context, o BuildOptions) (string, error) {
	r := o.Recipe
	if r.Kernel.Source != sourceDebian {
		return "", fmt.Errorf("kernel.source %s: only a debian kernel is fetched", r.Kernel.Source)
	}
	if o.KernelCacheDir == "" {
		return "", errors.New("fetch kernel: no kernel cache given (BuildOptions.KernelCacheDir; BuildSettings.KernelOptions gives the user's)")
	}
	p := o.Progress
	if p == nil {
		p = io.Discard
	}
	lo := LocateOptions{Arch: o.Arch, KernelCacheDir: o.KernelCacheDir, DefaultKernelCacheDir: o.KernelCacheDir}
	if ks, err := LocateKernel(r, lo); err == nil {
		fmt.Fprintf(p, "kernel: %s (%s) is in %s already\n", r.PackageFor(o.Arch), ks.Version, ks.Origin)
		return ks.Origin, nil
	}
	if err := fetchDebianKernel(ctx, r, o.Arch, o, p); err != nil {
		return "", err
	}
	ks, err := LocateKernel(r, lo)
	if err != nil {
		return "", err
	}
	return ks.Origin, nil
}

// InsecureUnsignedIndexFlag is the flag that takes an index whose
// signature cannot be verified; InsecureUnsignedIndexKey and
// insecureUnsignedIndexEnv are the same setting in the config file and the
// environment.
const (
	InsecureUnsignedIndexFlag = "--insecure-unsigned-index"
	insecureUnsignedIndexKey  = "image.insecure-unsigned-index"
	insecureUnsignedIndexEnv  = "QOSLAB_IMAGE_INSECURE_UNSIGNED_INDEX"
)

// debianKeys are the keys an InRelease is verified against: Debian's
// archive keys that ship with qoslab, and, where the machine has Debian's
// keyring (keyringPath; "" for none), its keys too (a key Debian added
// since is there).
func debianKeys(keyringPath string) (openpgp.EntityList, error) {
	keys, err := debkernel.ArchiveKeys()
	if err != nil {
		return nil, err
	}
	if keyringPath == "" {
		return keys, nil
	}
	local, err := debkernel.LoadKeyring(keyringPath)
	if err != nil {
		return nil, err
	}
	return append(keys, local...), nil
}

// fetchDebianKernel puts the recipe's Debian kernel for arch into the
// kernel cache, saying on p what it does.
func fetchDebianKernel(ctx context.Context, r Recipe, arch string, o BuildOptions, p io.Writer) error {
	sources, from, err := kernelSources(r, o.Mirror, "/etc/apt")
	if err != nil {
		return err
	}
	keyring, err := debianKeys(debkernel.DebianKeyring)
	if err != nil {
		return err
	}
	pkg := r.PackageFor(arch)
	fmt.Fprintf(p, "kernel: %s for %s is not in %s: fetching it from %s (%d suites)\n", pkg, arch, o.KernelCacheDir, from, len(sources))
	if o.InsecureUnsignedIndex {
		fmt.Fprintf(p, "kernel: WARNING: %s: an index whose signature is missing or cannot be verified is taken anyway; the kernel's record and the image's manifest will say so\n", InsecureUnsignedIndexFlag)
	}
	f := &debkernel.Fetcher{CacheDir: o.KernelCacheDir, Keyring: keyring, InsecureUnsignedIndex: o.InsecureUnsignedIndex,
		Note:     func(n string) { fmt.Fprintf(p, "kernel: %s\n", n) },
		Progress: downloadProgress(p)}
	dir, err := f.Fetch(ctx, sources, arch, pkg)
	if errors.Is(err, debkernel.ErrUnverifiedIndex) {
		return fmt.Errorf("%w\n(every InRelease must carry a good signature by one of Debian's archive keys, which ship with qoslab: a mirror or proxy that strips or alters it could hand the guest any kernel; if you trust this mirror and the network to it, %s (%s in the config file, %s=1) takes the index unverified, and records that)",
			err, InsecureUnsignedIndexFlag, insecureUnsignedIndexKey, insecureUnsignedIndexEnv)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(p, "kernel: fetched into %s\n", dir)
	return nil
}

// downloadProgress reports a download on p: a bar redrawn in place on a
// terminal, a line at each quarter elsewhere (a CI log).
func downloadProgress(p io.Writer) func(done, total int64) {
	f, ok := p.(*os.File)
	tty := ok && term.IsTerminal(int(f.Fd()))
	last := -1
	return func(done, total int64) {
		pct := int(100 * done / max(total, 1))
		mib := float64(total) / (1 << 20)
		switch {
		case tty && pct != last:
			const width = 30
			n := pct * width / 100
			fmt.Fprintf(p, "\rkernel: [%s%s] %3d%% of %.1f MiB", strings.Repeat("#", n), strings.Repeat(" ", width-n), pct, mib)
			if done >= total {
				fmt.Fprintln(p)
			}
		case !tty && pct/25 != last/25:
			fmt.Fprintf(p, "kernel: downloaded %d%% of %.1f MiB\n", pct, mib)
		}
		last = pct
	}
}
