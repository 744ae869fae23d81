// Package debkernel fetches a Debian kernel package for qoslab's guest
// image in Go, on any OS (a Mac has no apt): it reads a suite's InRelease
// (its OpenPGP signature verified against Debian's archive keys, which ship
// with qoslab), the Packages index it lists (checked against the SHA256
// there), resolves linux-image-<arch> to the kernel package it depends on,
// downloads that .deb (checked against the SHA256 in Packages; a stalled
// download resumes), and extracts it. The mirror is configuration: never
// written into the code.
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
	"time"

	"github.com/ulikunitz/xz"
	"golang.org/x/crypto/openpgp"           //nolint:staticcheck // the OpenPGP library the module already has: see verify.go
	"golang.org/x/crypto/openpgp/clearsign" //nolint:staticcheck // see above
	"pault.ag/go/debian/control"
	"pault.ag/go/debian/deb"
	"pault.ag/go/debian/version"

	"github.com/qoslab/qoslab/internal/httpfetch"
)

// Source is one suite of a Debian archive mirror: URI is the archive's root
// (the directory holding dists/ and pool/).
type Source struct {
	URI, Suite string
}

func (s Source) String() string { return strings.TrimRight(s.URI, "/") + " " + s.Suite }

// Fetcher fetches kernel packages over HTTP into a kernel cache.
type Fetcher struct {
	// Client defaults to one that bounds connecting and the wait for a
	// response's header (Timeouts); every request also has the idle bound.
	Client *http.Client
	// Timeouts bound each phase of a request; zero phases take
	// httpfetch.DefaultTimeouts.
	Timeouts httpfetch.Timeouts
	// Attempts is how many times a download that stalls or drops is tried,
	// each try resuming the .deb where the last stopped; 0 means 3.
	Attempts int
	// RetryDelay is the pause before another try; 0 means 2 s.
	RetryDelay time.Duration
	// Keyring verifies InRelease: an index with no good signature by a
	// valid key of it is refused, unless InsecureUnsignedIndex.
	Keyring openpgp.EntityList
	// InsecureUnsignedIndex takes an InRelease whose signature is missing
	// or cannot be verified, says so in the notes, and records it in the
	// fetch record: for a mirror the user trusts without a signature.
	InsecureUnsignedIndex bool
	// CacheDir is the kernel cache: each package is extracted into
	// CacheDir/<package>_<version>_<arch>/ and CacheDir/<asked>_<arch>
	// points at the newest.
	CacheDir string
	// Progress, when set, gets the bytes of the .deb downloaded so far
	// and its size.
	Progress func(done, total int64)
	// Note gets what the user should know (which key verified an index, an
	// index taken unverified, a suite that could not be read, a retry).
	Note func(string)
}

// ErrUnverifiedIndex is an InRelease refused because its signature is
// missing or cannot be verified.
var ErrUnverifiedIndex = errors.New("its signature cannot be verified")

// IndexCheck is what the signature check said of the InRelease a kernel
// was found through: the key that verified it, or why it was taken
// unverified.
type IndexCheck struct {
	URL        string  `json:"url"`
	SignedBy   *Signer `json:"signed_by,omitempty"`
	Unverified string  `json:"unverified,omitempty"`
}

// Candidate is a kernel package found in a suite.
type Candidate struct {
	Source  Source
	Asked   string // the package asked for: linux-image-arm64
	Package string // the kernel package: linux-image-6.1.0-56-arm64
	Version version.Version
	Entry   control.BinaryIndex
	Index   IndexCheck
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

// client is Client, made once from Timeouts when nil, so that the
// requests of a fetch share its connections.
func (f *Fetcher) client() *http.Client {
	if f.Client == nil {
		f.Client = httpfetch.NewClient(f.Timeouts)
	}
	return f.Client
}

func (f *Fetcher) attempts() int {
	if f.Attempts > 0 {
		return f.Attempts
	}
	return 3
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
	sums, check, err := f.releaseSums(rel, base+"InRelease")
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
	return Candidate{Source: src, Asked: pkg, Package: real.Package, Version: real.Version, Entry: real, Index: check}, nil
}

// isKernelPackage tells a versioned kernel package (linux-image-6.1.0-56-arm64)
// from a metapackage (linux-image-arm64).
func isKernelPackage(name string) bool {
	rest, ok := strings.CutPrefix(name, "linux-image-")
	return ok && rest != "" && rest[0] >= '0' && rest[0] <= '9'
}

// releaseSums verifies InRelease and returns the SHA256 and size of each
// file it lists, and what the check found. An index with no good signature
// by a valid key of the keyring is an error wrapping ErrUnverifiedIndex,
// unless InsecureUnsignedIndex, which takes its text and notes that.
func (f *Fetcher) releaseSums(b []byte, where string) (map[string]fileSum, IndexCheck, error) {
	check := IndexCheck{URL: where}
	text, signer, err := verifyClearsigned(b, f.Keyring, time.Now())
	switch {
	case err == nil:
		check.SignedBy = &signer
		f.note("%s: signed by %s", where, signer)
	case !f.InsecureUnsignedIndex:
		return nil, check, fmt.Errorf("%s: %w: %w", where, ErrUnverifiedIndex, err)
	default:
		check.Unverified = err.Error()
		f.note("%s: NOT VERIFIED (%v): taken anyway, as asked (insecure unsigned index); the files it lists are still checked against its SHA256 sums", where, err)
		text = b
		if block, _ := clearsign.Decode(b); block != nil {
			text = block.Plaintext
		}
	}
	// text is plain (the signature is checked above): no keyring here.
	pr, err := control.NewParagraphReader(bytes.NewReader(text), nil)
	if err != nil {
		return nil, check, fmt.Errorf("%s: %w", where, err)
	}
	p, err := pr.Next()
	if err != nil {
		return nil, check, fmt.Errorf("%s: %w", where, err)
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
		return nil, check, fmt.Errorf("%s lists no SHA256 sums", where)
	}
	return sums, check, nil
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

// retryable is a failure another try may not repeat: a stall, a dropped
// connection, a server error.
type retryable struct{ err error }

func (e *retryable) Error() string { return e.err.Error() }
func (e *retryable) Unwrap() error { return e.err }

// open GETs url, from byte offset on when offset > 0, and returns the
// response with its body under the idle bound. A status other than 200 or
// 206 is an error (retryable for a server error).
func (f *Fetcher) open(ctx context.Context, url string, offset int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "qoslab")
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	resp, err := httpfetch.Do(f.client(), req, f.Timeouts.WithDefaults().Idle)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &retryable{err}
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		resp.Body.Close()
		err := fmt.Errorf("%s: %s", url, resp.Status)
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests {
			return nil, &retryable{err}
		}
		return nil, err
	}
	return resp, nil
}

// retry runs try up to Attempts times while it fails in a way another try
// may not repeat, pausing RetryDelay between tries.
func (f *Fetcher) retry(ctx context.Context, what string, try func() error) error {
	delay := f.RetryDelay
	if delay <= 0 {
		delay = 2 * time.Second
	}
	for n := 1; ; n++ {
		err := try()
		var re *retryable
		if err == nil || ctx.Err() != nil || !errors.As(err, &re) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if n >= f.attempts() {
			return fmt.Errorf("%w (tried %d times)", err, n)
		}
		f.note("%v; trying %s again in %s (%d of %d)", err, what, delay, n+1, f.attempts())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// get reads url whole, up to limit bytes, trying again from the start if
// it stalls or drops (the indexes are small).
func (f *Fetcher) get(ctx context.Context, url string, limit int64) ([]byte, error) {
	var b []byte
	err := f.retry(ctx, path.Base(url), func() error {
		resp, err := f.open(ctx, url, 0)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
		var stall *httpfetch.StallError
		switch {
		case errors.As(err, &stall):
			return &retryable{err} // it names the URL and the bytes received
		case err != nil:
			return &retryable{fmt.Errorf("%s: after %d bytes: %w", url, len(b), err)}
		}
		if int64(len(b)) > limit {
			return fmt.Errorf("%s: over %d bytes", url, limit)
		}
		return nil
	})
	return b, err
}

// Fetch resolves pkg for arch (see Resolve), and unless the cache holds
// that version already, downloads the .deb (a .part file until its size
// and SHA256 match Packages), extracts it beside its final place with a
// record of where it came from (RecordFile), renames it in and points
// CacheDir/<pkg>_<arch> at it. It returns the extract's directory. A
// partial download or extract never counts as fetched; a download that
// stalled or dropped every time keeps its .part, which the next Fetch
// resumes.
func (f *Fetcher) Fetch(ctx context.Context, sources []Source, arch, pkg string) (string, error) {
	c, err := f.Resolve(ctx, sources, arch, pkg)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(f.CacheDir, 0o755); err != nil { //nolint:gosec // G301: the kernel cache is readable by others, as the kernels in it
		return "", err
	}
	name := c.Name(arch)
	dest := filepath.Join(f.CacheDir, name)
	if _, err := os.Stat(dest); err == nil {
		return dest, f.point(pkg, arch, name)
	}
	url := strings.TrimRight(c.Source.URI, "/") + "/" + strings.TrimLeft(path.Clean("/"+c.Entry.Filename), "/")
	part := filepath.Join(f.CacheDir, "."+filepath.Base(c.Entry.Filename)+".part")
	if err := f.download(ctx, url, part, int64(c.Entry.Size), c.Entry.SHA256); err != nil {
		var re *retryable
		if !errors.As(err, &re) && ctx.Err() == nil {
			os.Remove(part)
		}
		return "", err
	}
	defer os.Remove(part)
	tmp, err := os.MkdirTemp(f.CacheDir, ".extract-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := extract(part, filepath.Join(tmp, "x")); err != nil {
		return "", fmt.Errorf("extract %s: %w", filepath.Base(c.Entry.Filename), err)
	}
	rec := Record{Source: c.Source.String(), Package: c.Package, Version: c.Version.String(), Arch: arch,
		URL: url, SHA256: c.Entry.SHA256, Size: int64(c.Entry.Size), Index: c.Index, FetchedAt: time.Now().UTC().Truncate(time.Second)}
	if err := writeRecord(filepath.Join(tmp, "x"), rec); err != nil {
		return "", err
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

// download fetches url into part until it holds size bytes, resuming from
// what part holds (from an earlier try, or an earlier Fetch), and then
// checks the whole file's SHA256: pool files never change under a name, so
// a resumed file that does not match is damaged, and is removed.
func (f *Fetcher) download(ctx context.Context, url, part string, size int64, sum string) error {
	err := f.retry(ctx, "the download", func() error { return f.downloadOnce(ctx, url, part, size) })
	if err != nil {
		var re *retryable
		if errors.As(err, &re) {
			if fi, serr := os.Stat(part); serr == nil && fi.Size() > 0 {
				return fmt.Errorf("%w; the %d bytes received are kept in %s, and the next fetch resumes from them", err, fi.Size(), part)
			}
		}
		return err
	}
	got, err := fileSHA256(part)
	if err != nil {
		return err
	}
	if got != sum {
		os.Remove(part)
		return fmt.Errorf("%s: SHA256 %s, Packages lists %s: a damaged or tampered download", url, got, sum)
	}
	return nil
}

// downloadOnce makes one request for what part lacks and appends it.
func (f *Fetcher) downloadOnce(ctx context.Context, url, part string, size int64) error {
	var offset int64
	if fi, err := os.Stat(part); err == nil {
		offset = fi.Size()
	}
	if offset > size {
		offset = 0 // longer than the file: not a part of it
	}
	if offset == size && size > 0 {
		return nil
	}
	resp, err := f.open(ctx, url, offset)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusPartialContent {
		start, err := contentRangeStart(resp.Header.Get("Content-Range"))
		if err != nil || start != offset {
			os.Remove(part)
			return &retryable{fmt.Errorf("%s: asked for bytes from %d, the server sent %q: starting over", url, offset, resp.Header.Get("Content-Range"))}
		}
	} else {
		offset = 0 // the server sent the whole file
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if offset == 0 {
		flags |= os.O_TRUNC
	}
	out, err := os.OpenFile(part, flags, 0o644) //nolint:gosec // G304: the download's part file in the kernel cache
	if err != nil {
		return err
	}
	done := offset
	buf := make([]byte, 256<<10)
	if f.Progress != nil {
		f.Progress(done, size)
	}
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if done+int64(n) > size {
				out.Close()
				return fmt.Errorf("%s: longer than the %d bytes Packages lists", url, size)
			}
			if _, err := out.Write(buf[:n]); err != nil {
				out.Close()
				return err
			}
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
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var stall *httpfetch.StallError
			if errors.As(rerr, &stall) {
				return &retryable{fmt.Errorf("%s: no data for %s after %d of its %d bytes: the mirror stalled", url, stall.Idle, done, size)}
			}
			return &retryable{fmt.Errorf("%s: %d of %d bytes received: %w", url, done, size, rerr)}
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	if done != size {
		return &retryable{fmt.Errorf("%s: the body ended after %d bytes, Packages lists %d", url, done, size)}
	}
	return nil
}

// contentRangeStart reads the first byte of "bytes START-END/SIZE".
func contentRangeStart(s string) (int64, error) {
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, fmt.Errorf("content-range %q: not bytes", s)
	}
	first, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, fmt.Errorf("content-range %q: no range", s)
	}
	return strconv.ParseInt(first, 10, 64)
}

func fileSHA256(p string) (string, error) {
	in, err := os.Open(p) //nolint:gosec // G304: a download in the kernel cache
	if err != nil {
		return "", err
	}
	defer in.Close()
	h := sha256.New()
	if _, err := io.Copy(h, in); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// extract writes the data of the .deb at debPath into dir (its directories
// and regular files), through an os.Root on it so no entry ("../", an
// absolute path) can write outside.
func extract(debPath, dir string) error {
	d, closer, err := deb.LoadFile(debPath)
	if err != nil {
		return err
	}
	// The .deb was only read: closing it loses nothing.
	defer func() { _ = closer() }()
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: the kernel cache is readable by others, as the kernels in it
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
