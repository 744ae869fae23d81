package debkernel

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/image/debkernel/debtest"
	"github.com/qoslab/qoslab/internal/testvm"
)

func hits(a *debtest.Archive, p string) int {
	n, _ := a.Requests(p)
	return n
}

// The metapackage resolves to the kernel package it depends on, the newest
// over every suite (the security suite's here), whose .deb is checked and
// extracted where the image build looks; a second fetch downloads nothing.
func TestFetchResolvesTheNewestKernelAcrossSuites(t *testing.T) {
	a := debtest.NewArchive(t)
	old := debtest.Deb(t, "linux-image-6.1.0-8-arm64", "6.1.100-1", debtest.KernelFiles)
	cur := debtest.Deb(t, "linux-image-6.1.0-9-arm64", "6.1.110-1", debtest.KernelFiles)
	a.Suite(t, "bookworm", "arm64", []debtest.Package{
		{Name: "linux-image-arm64", Version: "6.1.100-1", Depends: "linux-image-6.1.0-8-arm64 (= 6.1.100-1)", Deb: []byte{}},
		{Name: "linux-image-6.1.0-8-arm64", Version: "6.1.100-1", Deb: old},
	})
	a.Suite(t, "bookworm-security", "arm64", []debtest.Package{
		{Name: "linux-image-arm64", Version: "6.1.110-1", Depends: "linux-image-6.1.0-9-arm64 (= 6.1.110-1)", Deb: []byte{}},
		{Name: "linux-image-6.1.0-9-arm64", Version: "6.1.110-1", Deb: cur},
	})
	srv := httptest.NewServer(a)
	defer srv.Close()
	cache := t.TempDir()
	var notes []string
	var progress int64
	f := &Fetcher{CacheDir: cache, Keyring: a.Keyring(t), Note: func(n string) { notes = append(notes, n) }, Progress: func(done, total int64) { progress = done }}
	sources := []Source{{URI: srv.URL + "/debian", Suite: "bookworm"}, {URI: srv.URL + "/debian/", Suite: "bookworm-security"}}
	dir, err := f.Fetch(context.Background(), sources, "arm64", "linux-image-arm64")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, "linux-image-6.1.0-9-arm64_6.1.110-1_arm64"), dir)
	b, err := os.ReadFile(filepath.Join(cache, "linux-image-arm64_arm64", "boot", "vmlinuz-6.1.0-9-arm64"))
	require.NoError(t, err, "the link the image build follows")
	assert.Equal(t, "KERNEL", string(b))
	assert.FileExists(t, filepath.Join(dir, "lib/modules/6.1.0-9-arm64/kernel/virtio.ko"))
	assert.Equal(t, int64(len(cur)), progress)
	assert.Contains(t, strings.Join(notes, "\n"), srv.URL+"/debian/dists/bookworm-security/InRelease: signed by Test Archive Key", "which key verified each index is said")
	left, _ := filepath.Glob(filepath.Join(cache, ".*"))
	assert.Empty(t, left, "no .part or extract left")
	rec, err := ReadRecord(dir)
	require.NoError(t, err)
	require.NotNil(t, rec, "the extract says where it came from")
	assert.Equal(t, srv.URL+"/debian bookworm-security", rec.Source)
	assert.Equal(t, "linux-image-6.1.0-9-arm64", rec.Package)
	assert.Equal(t, "6.1.110-1", rec.Version)
	assert.Equal(t, debtest.SHA256(cur), rec.SHA256)
	assert.True(t, rec.Verified())
	require.NotNil(t, rec.Index.SignedBy)
	assert.Equal(t, fmt.Sprintf("%X", a.Key.PrimaryKey.Fingerprint[:]), rec.Index.SignedBy.Fingerprint)

	debPath := "pool/main/l/linux-image-6.1.0-9-arm64_6.1.110-1_arm64.deb"
	_, err = f.Fetch(context.Background(), sources, "arm64", "linux-image-arm64")
	require.NoError(t, err)
	assert.Equal(t, 1, hits(a, debPath), "cached: not downloaded again")
}

// A .deb whose SHA256 differs from Packages, or an index whose sum differs
// from InRelease, is refused, and nothing counts as fetched.
func TestFetchRefusesTamperedFiles(t *testing.T) {
	a := debtest.NewArchive(t)
	cur := debtest.Deb(t, "linux-image-6.1.0-9-arm64", "6.1.110-1", debtest.KernelFiles)
	a.Suite(t, "stable", "arm64", []debtest.Package{{Name: "linux-image-6.1.0-9-arm64", Version: "6.1.110-1", Deb: cur}})
	tampered := append([]byte(nil), cur...)
	tampered[len(tampered)-1] ^= 1
	a.Files["pool/main/l/linux-image-6.1.0-9-arm64_6.1.110-1_arm64.deb"] = tampered
	srv := httptest.NewServer(a)
	defer srv.Close()
	cache := t.TempDir()
	f := &Fetcher{CacheDir: cache, Keyring: a.Keyring(t)}
	_, err := f.Fetch(context.Background(), []Source{{URI: srv.URL + "/debian", Suite: "stable"}}, "arm64", "linux-image-6.1.0-9-arm64")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a damaged or tampered download")
	entries, _ := os.ReadDir(cache)
	assert.Empty(t, entries, "a partial download never counts as fetched")

	a.Files["dists/stable/main/binary-arm64/Packages.xz"] = debtest.XZ(t, []byte("Package: evil\n"))
	_, err = f.Fetch(context.Background(), []Source{{URI: srv.URL + "/debian", Suite: "stable"}}, "arm64", "linux-image-6.1.0-9-arm64")
	assert.ErrorContains(t, err, "the Release file says")
}

// A .deb whose data tries to write outside its extract (through a symlink
// it plants, or a ../ name) stays inside; a package without a kernel image
// is refused.
func TestExtractStaysInside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	evil := filepath.Join(dir, "evil.deb")
	require.NoError(t, os.WriteFile(evil, debtest.Deb(t, "x", "1", [][2]string{{"./boot/", ""}, {"./boot/vmlinuz-1", "K"}, {"./link", "->" + outside}, {"./link/planted", "owned"}}), 0o644))
	require.NoError(t, extract(evil, filepath.Join(dir, "out")), "symlinks are left out")
	assert.FileExists(t, filepath.Join(dir, "out", "link", "planted"), "written inside, in a real directory")
	left, _ := os.ReadDir(outside)
	assert.Empty(t, left, "nothing written outside the extract")
	dots := filepath.Join(dir, "dots.deb")
	require.NoError(t, os.WriteFile(dots, debtest.Deb(t, "x", "1", [][2]string{{"./boot/", ""}, {"./boot/vmlinuz-1", "K"}, {"../../escaped", "owned"}}), 0o644))
	require.NoError(t, extract(dots, filepath.Join(dir, "out3")), "a ../ name is cleaned into the root")
	assert.FileExists(t, filepath.Join(dir, "out3", "escaped"))
	assert.NoFileExists(t, filepath.Join(dir, "escaped"))

	nokernel := filepath.Join(dir, "nokernel.deb")
	require.NoError(t, os.WriteFile(nokernel, debtest.Deb(t, "x", "1", [][2]string{{"./usr/share/doc/x/README", "hi"}}), 0o644))
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

// This machine's Debian keyring loads when it is here (make setup's kernel
// fetch verifies with it, so with QOSLAB_REQUIRE_VM=1, as in CI, a missing
// one fails); elsewhere the test has nothing to check.
func TestLoadKeyring(t *testing.T) {
	kr, err := LoadKeyring(filepath.Join(t.TempDir(), "none.gpg"))
	require.NoError(t, err)
	assert.Nil(t, kr, "a missing keyring is none, not an error")
	if _, err := os.Stat(DebianKeyring); err != nil {
		testvm.Missing(t, "no Debian archive keyring on this machine", "apt-get install debian-archive-keyring")
	}
	kr, err = LoadKeyring(DebianKeyring)
	require.NoError(t, err)
	assert.NotEmpty(t, kr)
}
