package debkernel

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qoslab/qoslab/internal/httpfetch"
	"github.com/qoslab/qoslab/internal/image/debkernel/debtest"
)

const stallDeb = "pool/main/l/linux-image-6.1.0-9-arm64_6.1.110-1_arm64.deb"

// stallingArchive is an archive whose .deb arrives half, then nothing.
func stallingArchive(t *testing.T) (*debtest.Archive, []byte, []Source) {
	t.Helper()
	a := debtest.NewArchive(t)
	deb := debtest.Deb(t, "linux-image-6.1.0-9-arm64", "6.1.110-1", append(debtest.KernelFiles, [2]string{"./usr/share/doc/pad", strings.Repeat("p", 64<<10)}))
	a.Suite(t, "stable", "arm64", []debtest.Package{{Name: "linux-image-6.1.0-9-arm64", Version: "6.1.110-1", Deb: deb}})
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return a, deb, []Source{{URI: srv.URL + "/debian", Suite: "stable"}}
}

// fastFetcher gives up on silence after 200 ms, and retries at once.
func fastFetcher(t *testing.T, a *debtest.Archive, cache string, notes *[]string) *Fetcher {
	return &Fetcher{CacheDir: cache, Keyring: a.Keyring(t), Attempts: 2, RetryDelay: time.Millisecond,
		Timeouts: httpfetch.Timeouts{Idle: 200 * time.Millisecond},
		Note:     func(n string) { *notes = append(*notes, n) }}
}

// A mirror that sends half the .deb and then goes silent ends the fetch
// with an error naming the URL and the bytes received, well before the
// test's own bound (without an idle bound the fetch waits for that); what
// arrived is kept, and the next fetch resumes from it with a Range request
// instead of starting over.
func TestFetchStalledMirror(t *testing.T) {
	a, deb, src := stallingArchive(t)
	half := len(deb) / 2
	a.Stall(func(p string, _ int) int {
		if p == stallDeb {
			return half
		}
		return -1
	})
	cache := t.TempDir()
	var notes []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := fastFetcher(t, a, cache, &notes).Fetch(ctx, src, "arm64", "linux-image-6.1.0-9-arm64")
	require.Error(t, err)
	require.NoError(t, ctx.Err(), "ended by the idle bound, not the test's deadline: %v", err)
	url := src[0].URI + "/" + stallDeb
	assert.Contains(t, err.Error(), url)
	assert.Contains(t, err.Error(), url+": no data for 200ms after "+itoa(half)+" of its "+itoa(len(deb))+" bytes: the mirror stalled")
	assert.Contains(t, err.Error(), "(tried 2 times)")
	assert.Contains(t, err.Error(), "the next fetch resumes from them")
	assert.Contains(t, strings.Join(notes, "\n"), "trying the download again", "the stall was retried")
	part := filepath.Join(cache, "."+filepath.Base(stallDeb)+".part")
	fi, err := os.Stat(part)
	require.NoError(t, err, "what arrived is kept")
	assert.Equal(t, int64(half), fi.Size(), "once, not twice: the retry resumed")
	_, ranges := a.Requests(stallDeb)
	assert.Equal(t, []string{"bytes=" + itoa(half) + "-"}, ranges, "the retry asked for the rest only")

	a.Stall(nil)
	dir, err := fastFetcher(t, a, cache, &notes).Fetch(ctx, src, "arm64", "linux-image-6.1.0-9-arm64")
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "boot", "vmlinuz-6.1.0-9-arm64"))
	_, ranges = a.Requests(stallDeb)
	assert.Equal(t, "bytes="+itoa(half)+"-", ranges[len(ranges)-1], "the next fetch resumed")
	assert.NoFileExists(t, part)
}

// A stall within one fetch is retried there, resuming, and the file that
// results is the whole, checked .deb.
func TestFetchResumesWithinOneCall(t *testing.T) {
	a, deb, src := stallingArchive(t)
	a.Stall(func(p string, n int) int {
		if p == stallDeb && n == 1 {
			return len(deb) / 3
		}
		return -1
	})
	var notes []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir, err := fastFetcher(t, a, t.TempDir(), &notes).Fetch(ctx, src, "arm64", "linux-image-6.1.0-9-arm64")
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "boot", "vmlinuz-6.1.0-9-arm64"))
	hits, ranges := a.Requests(stallDeb)
	assert.Equal(t, 2, hits)
	assert.Equal(t, []string{"bytes=" + itoa(len(deb)/3) + "-"}, ranges)
}

// A stalled index (InRelease, Packages) is tried again from the start, and
// a mirror that stalls every time is an error naming the file.
func TestFetchStalledIndex(t *testing.T) {
	a, _, src := stallingArchive(t)
	a.Stall(func(p string, n int) int {
		if strings.HasSuffix(p, "Packages.xz") && n == 1 {
			return 10
		}
		return -1
	})
	var notes []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := fastFetcher(t, a, t.TempDir(), &notes).Fetch(ctx, src, "arm64", "linux-image-6.1.0-9-arm64")
	require.NoError(t, err, "the second try gets it")

	a.Stall(func(p string, _ int) int {
		if strings.HasSuffix(p, "InRelease") {
			return 5
		}
		return -1
	})
	_, err = fastFetcher(t, a, t.TempDir(), &notes).Fetch(ctx, src, "arm64", "linux-image-6.1.0-9-arm64")
	require.Error(t, err)
	require.NoError(t, ctx.Err())
	assert.Contains(t, err.Error(), src[0].URI+"/dists/stable/InRelease: no data for 200ms after 5 bytes of the body: the server stalled")
}

func itoa(n int) string { return strconv.Itoa(n) }
