package debkernel

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulikunitz/xz"
)

// tarOf builds a tar of files (name -> content; a name ending in "/" is a
// directory, "->target" a symlink).
func tarOf(t *testing.T, files [][2]string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f[0], Mode: 0o644, ModTime: time.Unix(0, 0)}
		switch {
		case strings.HasSuffix(f[0], "/"):
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case strings.HasPrefix(f[1], "->"):
			h.Typeflag, h.Linkname = tar.TypeSymlink, strings.TrimPrefix(f[1], "->")
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f[1]))
		}
		require.NoError(t, tw.WriteHeader(h))
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write([]byte(f[1]))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func xzOf(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w, err := xz.NewWriter(&buf)
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// debOf builds a .deb: an ar archive of debian-binary, control.tar.gz and
// data.tar.xz, as dpkg-deb writes one.
func debOf(t *testing.T, pkg, ver string, data [][2]string) []byte {
	var buf bytes.Buffer
	buf.WriteString("!<arch>\n")
	member := func(name string, b []byte) {
		fmt.Fprintf(&buf, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", name, 0, 0, 0, "100644", len(b))
		buf.Write(b)
		if len(b)%2 == 1 {
			buf.WriteByte('\n')
		}
	}
	member("debian-binary", []byte("2.0\n"))
	control := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: arm64\nMaintainer: t <t@example.invalid>\nDescription: test\n", pkg, ver)
	member("control.tar.gz", gz(t, tarOf(t, [][2]string{{"./control", control}})))
	member("data.tar.xz", xzOf(t, tarOf(t, data)))
	return buf.Bytes()
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// archive serves a Debian archive with suites, each a list of packages.
type archive struct {
	files map[string][]byte
	hits  map[string]int
}

func newArchive() *archive { return &archive{files: map[string][]byte{}, hits: map[string]int{}} }

type pkgEntry struct {
	name, version, depends string
	deb                    []byte
}

func (a *archive) suite(t *testing.T, suite, arch string, pkgs []pkgEntry) {
	var idx strings.Builder
	for _, p := range pkgs {
		file := fmt.Sprintf("pool/main/l/%s_%s_%s.deb", p.name, p.version, arch)
		if p.deb != nil {
			a.files[file] = p.deb
		}
		fmt.Fprintf(&idx, "Package: %s\nVersion: %s\nArchitecture: %s\n", p.name, p.version, arch)
		if p.depends != "" {
			fmt.Fprintf(&idx, "Depends: %s\n", p.depends)
		}
		fmt.Fprintf(&idx, "Filename: %s\nSize: %d\nSHA256: %s\nDescription: x\n\n", file, len(p.deb), sum(p.deb))
	}
	packages := xzOf(t, []byte(idx.String()))
	name := "main/binary-" + arch + "/Packages.xz"
	a.files["dists/"+suite+"/"+name] = packages
	a.files["dists/"+suite+"/InRelease"] = []byte(fmt.Sprintf("Origin: Debian\nSuite: %s\nSHA256:\n %s %d %s\n", suite, sum(packages), len(packages), name))
}

func (a *archive) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.Path, "/debian/")
	a.hits[p]++
	b, ok := a.files[p]
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(b)
}

var kernelFiles = [][2]string{
	{"./boot/", ""}, {"./boot/vmlinuz-6.1.0-9-arm64", "KERNEL"},
	{"./lib/modules/6.1.0-9-arm64/kernel/", ""}, {"./lib/modules/6.1.0-9-arm64/kernel/virtio.ko", "MOD"},
}

// The metapackage resolves to the kernel package it depends on, the newest
// over every suite (the security suite's here), whose .deb is checked and
// extracted where the image build looks; a second fetch downloads nothing.
func TestFetchResolvesTheNewestKernelAcrossSuites(t *testing.T) {
	a := newArchive()
	old := debOf(t, "linux-image-6.1.0-8-arm64", "6.1.100-1", kernelFiles)
	cur := debOf(t, "linux-image-6.1.0-9-arm64", "6.1.110-1", kernelFiles)
	a.suite(t, "bookworm", "arm64", []pkgEntry{
		{"linux-image-arm64", "6.1.100-1", "linux-image-6.1.0-8-arm64 (= 6.1.100-1)", []byte{}},
		{"linux-image-6.1.0-8-arm64", "6.1.100-1", "", old},
	})
	a.suite(t, "bookworm-security", "arm64", []pkgEntry{
		{"linux-image-arm64", "6.1.110-1", "linux-image-6.1.0-9-arm64 (= 6.1.110-1)", []byte{}},
		{"linux-image-6.1.0-9-arm64", "6.1.110-1", "", cur},
	})
	srv := httptest.NewServer(a)
	defer srv.Close()
	cache := t.TempDir()
	var notes []string
	var progress int64
	f := &Fetcher{CacheDir: cache, Note: func(n string) { notes = append(notes, n) }, Progress: func(done, total int64) { progress = done }}
	sources := []Source{{URI: srv.URL + "/debian", Suite: "bookworm"}, {URI: srv.URL + "/debian/", Suite: "bookworm-security"}}
	dir, err := f.Fetch(context.Background(), sources, "arm64", "linux-image-arm64")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, "linux-image-6.1.0-9-arm64_6.1.110-1_arm64"), dir)
	b, err := os.ReadFile(filepath.Join(cache, "linux-image-arm64_arm64", "boot", "vmlinuz-6.1.0-9-arm64"))
	require.NoError(t, err, "the link the image build follows")
	assert.Equal(t, "KERNEL", string(b))
	assert.FileExists(t, filepath.Join(dir, "lib/modules/6.1.0-9-arm64/kernel/virtio.ko"))
	assert.Equal(t, int64(len(cur)), progress)
	assert.Contains(t, strings.Join(notes, "\n"), "signature not checked", "an unverified Release is said so")
	left, _ := filepath.Glob(filepath.Join(cache, ".*"))
	assert.Empty(t, left, "no .part or extract left")

	debPath := "pool/main/l/linux-image-6.1.0-9-arm64_6.1.110-1_arm64.deb"
	_, err = f.Fetch(context.Background(), sources, "arm64", "linux-image-arm64")
	require.NoError(t, err)
	assert.Equal(t, 1, a.hits[debPath], "cached: not downloaded again")
}

// A .deb whose SHA256 differs from Packages, or an index whose sum differs
// from InRelease, is refused, and nothing counts as fetched.
func TestFetchRefusesTamperedFiles(t *testing.T) {
	a := newArchive()
	cur := debOf(t, "linux-image-6.1.0-9-arm64", "6.1.110-1", kernelFiles)
	a.suite(t, "stable", "arm64", []pkgEntry{{"linux-image-6.1.0-9-arm64", "6.1.110-1", "", cur}})
	tampered := append([]byte(nil), cur...)
	tampered[len(tampered)-1] ^= 1
	a.files["pool/main/l/linux-image-6.1.0-9-arm64_6.1.110-1_arm64.deb"] = tampered
	srv := httptest.NewServer(a)
	defer srv.Close()
	cache := t.TempDir()
	f := &Fetcher{CacheDir: cache}
	_, err := f.Fetch(context.Background(), []Source{{URI: srv.URL + "/debian", Suite: "stable"}}, "arm64", "linux-image-6.1.0-9-arm64")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a damaged or tampered download")
	entries, _ := os.ReadDir(cache)
	assert.Empty(t, entries, "a partial download never counts as fetched")

	a.files["dists/stable/main/binary-arm64/Packages.xz"] = xzOf(t, []byte("Package: evil\n"))
	_, err = f.Fetch(context.Background(), []Source{{URI: srv.URL + "/debian", Suite: "stable"}}, "arm64", "linux-image-6.1.0-9-arm64")
	assert.ErrorContains(t, err, "the Release file says")
}

// A .deb whose data tries to write outside its extract (through a symlink
// it plants, or a ../ name) stays inside; a package without a kernel image
// is refused.
func TestExtractStaysInside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	evil := filepath.Join(dir, "evil.deb")
	require.NoError(t, os.WriteFile(evil, debOf(t, "x", "1", [][2]string{{"./boot/", ""}, {"./boot/vmlinuz-1", "K"}, {"./link", "->" + outside}, {"./link/planted", "owned"}}), 0o644))
	require.NoError(t, extract(evil, filepath.Join(dir, "out")), "symlinks are left out")
	assert.FileExists(t, filepath.Join(dir, "out", "link", "planted"), "written inside, in a real directory")
	left, _ := os.ReadDir(outside)
	assert.Empty(t, left, "nothing written outside the extract")
	dots := filepath.Join(dir, "dots.deb")
	require.NoError(t, os.WriteFile(dots, debOf(t, "x", "1", [][2]string{{"./boot/", ""}, {"./boot/vmlinuz-1", "K"}, {"../../escaped", "owned"}}), 0o644))
	require.NoError(t, extract(dots, filepath.Join(dir, "out3")), "a ../ name is cleaned into the root")
	assert.FileExists(t, filepath.Join(dir, "out3", "escaped"))
	assert.NoFileExists(t, filepath.Join(dir, "escaped"))

	nokernel := filepath.Join(dir, "nokernel.deb")
	require.NoError(t, os.WriteFile(nokernel, debOf(t, "x", "1", [][2]string{{"./usr/share/doc/x/README", "hi"}}), 0o644))
	assert.ErrorContains(t, extract(nokernel, filepath.Join(dir, "out2")), "holds no kernel image")
}

func TestNoSourcesSaysWhatToSet(t *testing.T) {
	_, err := (&Fetcher{CacheDir: t.TempDir()}).Fetch(context.Background(), nil, "arm64", "linux-image-arm64")
	assert.ErrorContains(t, err, "set kernel.mirror in the recipe or QOSLAB_DEBIAN_MIRROR")
}

// The machine's apt sources, in both formats, give the suites to read: only
// deb entries with main, disabled stanzas left out, no duplicates.
func TestAptSources(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sources.list.d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sources.list"), []byte(`# comment
deb http://mirror.example/debian bookworm main contrib
deb-src http://mirror.example/debian bookworm main
deb [arch=amd64 signed-by=/x.gpg] http://mirror.example/debian/ bookworm-updates main
deb http://other.example/debian bookworm non-free
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sources.list.d", "debian.sources"), []byte(`Types: deb deb-src
URIs: http://mirror.example/debian
Suites: bookworm bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://off.example/debian
Suites: sid
Components: main
Enabled: no
`), 0o644))
	got, err := AptSources(dir)
	require.NoError(t, err)
	assert.Equal(t, []Source{
		{"http://mirror.example/debian", "bookworm"},
		{"http://mirror.example/debian", "bookworm-updates"},
		{"http://mirror.example/debian", "bookworm-security"},
	}, got)

	none, err := AptSources(filepath.Join(dir, "nope"))
	require.NoError(t, err)
	assert.Empty(t, none, "no apt (a Mac): no sources, no error")
}

// This machine's Debian keyring verifies a real InRelease when both are
// here; elsewhere the test has nothing to check.
func TestLoadKeyring(t *testing.T) {
	kr, err := LoadKeyring(filepath.Join(t.TempDir(), "none.gpg"))
	require.NoError(t, err)
	assert.Nil(t, kr, "a missing keyring is none, not an error")
	if _, err := os.Stat(DebianKeyring); err != nil {
		t.Skip("no Debian archive keyring on this machine")
	}
	kr, err = LoadKeyring(DebianKeyring)
	require.NoError(t, err)
	assert.NotEmpty(t, kr)
}
