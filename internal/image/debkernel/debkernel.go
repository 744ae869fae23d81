// Package debkernel fetches a Debian kernel package for qoslab's guest
// image in Go, on any OS (a Mac has no apt): it reads a suite's InRelease
// (checking its OpenPGP signature when Debian's archive keyring is at hand),
// the Packages index it lists (checked against the SHA256 there), resolves
// linux-image-<arch> to the kernel package it depends on, downloads that
// .deb (checked against the SHA256 in Packages), and extracts it. The
// mirror is configuration: never written into the code.
package debkernel

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ulikunitz/xz"
	"golang.org/x/crypto/openpgp" //nolint:staticcheck // pault.ag/go/debian's clearsign check takes this keyring type
	"pault.ag/go/debian/control"
	"pault.ag/go/debian/deb"
	"pault.ag/go/debian/version"
)

// Source is one suite of a Debian archive mirror: URI is the archive's root
// (the directory holding dists/ and pool/).
type Source struct {
	URI, Suite string
}

func (s Source) String() string { return strings.TrimRight(s.URI, "/") + " " + s.Suite }

// Fetcher fetches kernel packages over HTTP into a kernel cache.
type Fetcher struct {
	Client *http.Client
	// Keyring verifies InRelease; nil leaves it unverified, and Fetch says
	// so in its notes.
	Keyring openpgp.EntityList
	// CacheDir is the kernel cache: each package is extracted into
	// CacheDir/<package>_<version>_<arch>/ and CacheDir/<asked>_<arch>
	// points at the newest.
	CacheDir string
	// Progress, when set, gets the bytes of the .deb downloaded so far
	// and its size.
	Progress func(done, total int64)
	// Note gets what the user should know (an unverified Release, a suite
	// that could not be read).
	Note func(string)
}

// Candidate is a kernel package found in a suite.
type Candidate struct {
	Source  Source
	Asked   string // the package asked for: linux-image-arm64
	Package string // the kernel package: linux-image-6.1.0-56-arm64
	Version version.Version
	Entry   control.BinaryIndex
}

// Name is the extract's directory name in the cache, as
// the image build looks for it: <package>_<version>_<arch>, with ":"
// written %3a.
func (c Candidate) Name(arch string) string {
	return c.Package + "_" + strings.ReplaceAll(c.Version.String(), ":", "%3a") + "_" + arch
}

func (f *Fetcher) note(format string, a ...any) {
	if f.Note != nil {
		f.Note(fmt.Sprintf(format, a...))
	}
}

func (f *Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return http.DefaultClient
}

// Resolve finds pkg for arch in every source and returns the newest kernel
// package it leads to: pkg itself when it is a kernel package
// (linux-image-6.1.0-56-amd64), else the linux-image-<version> it depends
// on. Every suite is read, since the newest kernel may sit in the security
// suite; a suite that cannot be read is noted, and is an error only when
// none can.
func (f *Fetcher) Resolve(ctx context.Context, sources []Source, arch, pkg string) (Candidate, error) {
	var best *Candidate
	var errs []error
	for _, src := range sources {
		c, err := f.resolveIn(ctx, src, arch, pkg)
		if err != nil {
			errs = append(errs, err)
			f.note("%s: %v", src, err)
			continue
		}
		if best == nil || version.Compare(c.Version, best.Version) > 0 {
			best = &c
		}
	}
	if best == nil {
		if len(errs) == 0 {
			return Candidate{}, errors.New("no Debian mirror to fetch the kernel from: set kernel.mirror in the recipe or QOSLAB_DEBIAN_MIRROR")
		}
		return Candidate{}, fmt.Errorf("no suite has %s for %s: %w", pkg, arch, errors.Join(errs...))
	}
	return *best, nil
}

func (f *Fetcher) resolveIn(ctx context.Context, src Source, arch, pkg string) (Candidate, error) {
	base := strings.TrimRight(src.URI, "/") + "/dists/" + src.Suite + "/"
	rel, err := f.get(ctx, base+"InRelease", 16<<20)
	if err != nil {
		return Candidate{}, err
	}
	sums, err := f.releaseSums(rel, base+"InRelease")
	if err != nil {
		return Candidate{}, err
	}
	var index []byte
	for _, name := range []string{"main/binary-" + arch + "/Packages.xz", "main/binary-" + arch + "/Packages.gz"} {
		want, ok := sums[name]
		if !ok {
			continue
		}
		b, err := f.get(ctx, base+name, 1<<30)
		if err != nil {
			return Candidate{}, err
		}
		if err := checkSum(b, want, base+name); err != nil {
			return Candidate{}, err
		}
		if index, err = decompress(name, b); err != nil {
			return Candidate{}, fmt.Errorf("%s: %w", base+name, err)
		}
		break
	}
	if index == nil {
		return Candidate{}, fmt.Errorf("%sInRelease lists no main/binary-%s/Packages.xz or .gz: the suite has no %s", base, arch, arch)
	}
	entries, err := control.ParseBinaryIndex(bufio.NewReader(bytes.NewReader(index)))
	if err != nil {
		return Candidate{}, fmt.Errorf("%s main %s Packages: %w", src, arch, err)
	}
	newest := func(name string) (control.BinaryIndex, bool) {
		var got control.BinaryIndex
		found := false
		for _, e := range entries {
			if e.Package == name && (!found || version.Compare(e.Version, got.Version) > 0) {
				got, found = e, true
			}
		}
		return got, found
	}
	meta, ok := newest(pkg)
	if !ok {
		return Candidate{}, fmt.Errorf("no package %s", pkg)
	}
	real := meta
	if !isKernelPackage(pkg) {
		dep := meta.GetDepends()
		name := ""
		for _, p := range dep.GetAllPossibilities() {
			if isKernelPackage(p.Name) {
				name = p.Name
				break
			}
		}
		if name == "" {
			return Candidate{}, fmt.Errorf("%s depends on no linux-image-<version> package: name the kernel package (kernel.package)", pkg)
		}
		if real, ok = newest(name); !ok {
			return Candidate{}, fmt.Errorf("%s depends on %s, which the suite lacks", pkg, name)
		}
	}
	return Candidate{Source: src, Asked: pkg, Package: real.Package, Version: real.Version, Entry: real}, nil
}

// isKernelPackage tells a versioned kernel package (linux-image-6.1.0-56-arm64)
// from a metapackage (linux-image-arm64).
func isKernelPackage(name string) bool {
	rest, ok := strings.CutPrefix(name, "linux-image-")
	return ok && rest != "" && rest[0] >= '0' && rest[0] <= '9'
}

// releaseSums reads InRelease (verifying its signature when there is a
// keyring) and returns the SHA256 and size of each file it lists.
func (f *Fetcher) releaseSums(b []byte, where string) (map[string]fileSum, error) {
	var keyring *openpgp.EntityList
	if len(f.Keyring) > 0 {
		keyring = &f.Keyring
	} else {
		f.note("%s: signature not checked (no Debian archive keyring here); the files it lists are still checked against its SHA256 sums", where)
	}
	pr, err := control.NewParagraphReader(bytes.NewReader(b), keyring)
	if err != nil {
		return nil, fmt.Errorf("%s: signature: %w", where, err)
	}
	p, err := pr.Next()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	sums := map[string]fileSum{}
	for _, line := range strings.Split(p.Values["SHA256"], "\n") {
		fields := strings.Fields(line)
		if len(fields) != 3 {
			continue
		}
		size, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		sums[fields[2]] = fileSum{sha256: fields[0], size: size}
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("%s lists no SHA256 sums", where)
	}
	return sums, nil
}

type fileSum struct {
	sha256 string
	size   int64
}

func checkSum(b []byte, want fileSum, what string) error {
	if int64(len(b)) != want.size {
		return fmt.Errorf("%s: %d bytes, the Release file says %d", what, len(b), want.size)
	}
	got := sha256.Sum256(b)
	if hex.EncodeToString(got[:]) != want.sha256 {
		return fmt.Errorf("%s: SHA256 %x, the Release file says %s: a damaged or tampered download", what, got, want.sha256)
	}
	return nil
}

func decompress(name string, b []byte) ([]byte, error) {
	var r io.Reader
	switch {
	case strings.HasSuffix(name, ".xz"):
		x, err := xz.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		r = x
	case strings.HasSuffix(name, ".gz"):
		g, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		r = g
	default:
		return b, nil
	}
	return io.ReadAll(io.LimitReader(r, 4<<30))
}

// open GETs url and returns its body, refusing any status but 200.
func (f *Fetcher) open(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return resp.Body, nil
}

// get reads url whole, up to limit bytes.
func (f *Fetcher) get(ctx context.Context, url string, limit int64) ([]byte, error) {
	body, err := f.open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: over %d bytes", url, limit)
	}
	return b, nil
}

// Fetch resolves pkg for arch (see Resolve), and unless the cache holds
// that version already, downloads the .deb (a .part file until its size
// and SHA256 match Packages), extracts it beside its final place, renames
// it in and points CacheDir/<pkg>_<arch> at it. It returns the extract's
// directory. A partial download or extract never counts as fetched.
func (f *Fetcher) Fetch(ctx context.Context, sources []Source, arch, pkg string) (string, error) {
	c, err := f.Resolve(ctx, sources, arch, pkg)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(f.CacheDir, 0o755); err != nil {
		return "", err
	}
	name := c.Name(arch)
	dest := filepath.Join(f.CacheDir, name)
	if _, err := os.Stat(dest); err == nil {
		return dest, f.point(pkg, arch, name)
	}
	url := strings.TrimRight(c.Source.URI, "/") + "/" + strings.TrimLeft(path.Clean("/"+c.Entry.Filename), "/")
	part := filepath.Join(f.CacheDir, "."+filepath.Base(c.Entry.Filename)+".part")
	defer os.Remove(part)
	if err := f.download(ctx, url, part, int64(c.Entry.Size), c.Entry.SHA256); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(f.CacheDir, ".extract-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := extract(part, filepath.Join(tmp, "x")); err != nil {
		return "", fmt.Errorf("extract %s: %w", filepath.Base(c.Entry.Filename), err)
	}
	if err := os.Rename(filepath.Join(tmp, "x"), dest); err != nil {
		return "", err
	}
	return dest, f.point(pkg, arch, name)
}

// point makes CacheDir/<pkg>_<arch> a link to name, atomically.
func (f *Fetcher) point(pkg, arch, name string) error {
	link := filepath.Join(f.CacheDir, pkg+"_"+arch)
	if got, err := os.Readlink(link); err == nil && got == name {
		return nil
	}
	tmp := link + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(name, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

func (f *Fetcher) download(ctx context.Context, url, part string, size int64, sum string) error {
	body, err := f.open(ctx, url)
	if err != nil {
		return err
	}
	defer body.Close()
	out, err := os.Create(part)
	if err != nil {
		return err
	}
	h := sha256.New()
	var done int64
	buf := make([]byte, 256<<10)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			if done+int64(n) > size {
				out.Close()
				return fmt.Errorf("%s: longer than the %d bytes Packages lists", url, size)
			}
			if _, err := out.Write(buf[:n]); err != nil {
				out.Close()
				return err
			}
			h.Write(buf[:n])
			done += int64(n)
			if f.Progress != nil {
				f.Progress(done, size)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Close()
			return fmt.Errorf("%s: %w", url, rerr)
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	if done != size {
		return fmt.Errorf("%s: %d bytes, Packages lists %d", url, done, size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return fmt.Errorf("%s: SHA256 %s, Packages lists %s: a damaged or tampered download", url, got, sum)
	}
	return nil
}

// extract writes the data of the .deb at debPath into dir (its directories
// and regular files), through an os.Root on it so no entry ("../", an
// absolute path) can write outside.
func extract(debPath, dir string) error {
	d, closer, err := deb.LoadFile(debPath)
	if err != nil {
		return err
	}
	defer closer()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	kernel := false
	for {
		h, err := d.Data.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if name == "" {
			continue
		}
		switch h.Typeflag {
		case '5': // directory
			if err := mkdirAll(root, name); err != nil {
				return err
			}
		case '0', 0: // regular file
			if err := mkdirAll(root, path.Dir(name)); err != nil {
				return err
			}
			out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o600)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, io.LimitReader(d.Data, h.Size)); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
			if strings.HasPrefix(name, "boot/vmlinuz-") || (strings.Contains(name, "lib/modules/") && strings.HasSuffix(name, "/vmlinuz")) {
				kernel = true
			}
		}
		// Symlinks (documentation links, a modules build link) are left
		// out: the image needs the kernel and its modules, and a link could
		// point a later entry outside the extract.
	}
	if !kernel {
		return errors.New("it holds no kernel image (boot/vmlinuz-*): is it a kernel package?")
	}
	return nil
}

// mkdirAll makes dir and its parents inside root.
func mkdirAll(root *os.Root, dir string) error {
	if dir == "." || dir == "" {
		return nil
	}
	if fi, err := root.Stat(dir); err == nil {
		if fi.IsDir() {
			return nil
		}
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := mkdirAll(root, path.Dir(dir)); err != nil {
		return err
	}
	if err := root.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}
