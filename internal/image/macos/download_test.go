package macos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileServer serves one file and can misbehave the ways real servers do.
type fileServer struct {
	mu      sync.Mutex
	content []byte
	etag    string // "" sends none
	ranges  bool   // honour Range (http.ServeContent) or always send 200
	// cutAfter, when > 0, drops the connection after that many body bytes
	// of the next response, once.
	cutAfter int
	// hold, when set, is closed once cutAfter bytes were sent, and the
	// handler then waits for the client to go away instead of dropping it.
	hold     chan struct{}
	requests []http.Header
}

func (s *fileServer) set(content []byte, etag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.content, s.etag = content, etag
}

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	content, etag, ranges, cut, hold := s.content, s.etag, s.ranges, s.cutAfter, s.hold
	s.cutAfter, s.hold = 0, nil
	s.requests = append(s.requests, r.Header.Clone())
	s.mu.Unlock()

	out := w
	if cut > 0 {
		out = &cuttingWriter{ResponseWriter: w, left: cut, hold: hold, done: r.Context().Done()}
	}
	if etag != "" {
		w.Header().Set("ETag", etag)
	}
	if ranges {
		http.ServeContent(out, r, "f.ipsw", time.Unix(1700000000, 0), bytes.NewReader(content))
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(content)))
	out.WriteHeader(http.StatusOK)
	_, _ = out.Write(content)
}

func (s *fileServer) headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.requests...)
}

// cuttingWriter passes left bytes through, then aborts the connection (or
// waits for the client to leave, when hold is set).
type cuttingWriter struct {
	http.ResponseWriter
	left int
	hold chan struct{}
	done <-chan struct{}
}

func (c *cuttingWriter) Write(p []byte) (int, error) {
	if len(p) <= c.left {
		c.left -= len(p)
		return c.ResponseWriter.Write(p)
	}
	_, _ = c.ResponseWriter.Write(p[:c.left])
	c.ResponseWriter.(http.Flusher).Flush()
	if c.hold != nil {
		close(c.hold)
		<-c.done
	}
	panic(http.ErrAbortHandler)
}

func testContent(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func plenty(string) (uint64, error) { return 1 << 50, nil }

func testDownloadOptions(t *testing.T, srvURL string) downloadOptions {
	return downloadOptions{
		URL:        srvURL + "/UniversalMac_14.4.1_23E224_Restore.ipsw",
		Dest:       filepath.Join(t.TempDir(), "restore.ipsw"),
		Attempts:   1,
		RetryDelay: time.Millisecond,
		FreeSpace:  plenty,
	}
}

func TestDownloadWhole(t *testing.T) {
	fs := &fileServer{content: testContent(300_000, 1), etag: `"v1"`, ranges: true}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)
	var last Progress
	opts.OnProgress = func(p Progress) { last = p }

	res, err := download(context.Background(), opts)
	require.NoError(t, err)
	got, err := os.ReadFile(opts.Dest)
	require.NoError(t, err)
	assert.Equal(t, fs.content, got)
	assert.Equal(t, int64(300_000), res.Size)
	assert.False(t, res.Resumed)
	assert.Equal(t, Progress{Done: 300_000, Total: 300_000}, Progress{Done: last.Done, Total: last.Total})
	assert.NoFileExists(t, opts.Dest+".part")
	assert.NoFileExists(t, opts.Dest+".part.json")

	// A second run finds the file and fetches nothing.
	res, err = download(context.Background(), opts)
	require.NoError(t, err)
	assert.True(t, res.AlreadyComplete)
	assert.Len(t, fs.headers(), 1)
}

func TestDownloadResumesAfterDrop(t *testing.T) {
	fs := &fileServer{content: testContent(500_000, 2), etag: `"v1"`, ranges: true, cutAfter: 120_000}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)

	_, err := download(context.Background(), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run the same command again to resume")
	assert.NoFileExists(t, opts.Dest, "a partial download never takes the final name")
	fi, err := os.Stat(opts.Dest + ".part")
	require.NoError(t, err)
	assert.Equal(t, int64(120_000), fi.Size())

	res, err := download(context.Background(), opts)
	require.NoError(t, err)
	assert.True(t, res.Resumed)
	assert.False(t, res.Restarted)
	got, err := os.ReadFile(opts.Dest)
	require.NoError(t, err)
	assert.Equal(t, fs.content, got)

	h := fs.headers()
	require.Len(t, h, 2)
	assert.Equal(t, "bytes=120000-", h[1].Get("Range"))
	assert.Equal(t, `"v1"`, h[1].Get("If-Range"))
}

func TestDownloadRetriesWithinOneCall(t *testing.T) {
	fs := &fileServer{content: testContent(200_000, 3), etag: `"v1"`, ranges: true, cutAfter: 50_000}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)
	opts.Attempts = 2

	res, err := download(context.Background(), opts)
	require.NoError(t, err)
	assert.True(t, res.Resumed)
	got, err := os.ReadFile(opts.Dest)
	require.NoError(t, err)
	assert.Equal(t, fs.content, got)
}

func TestDownloadRetriesAStall(t *testing.T) {
	fs := &fileServer{content: testContent(200_000, 12), etag: `"v1"`, ranges: true, cutAfter: 60_000, hold: make(chan struct{})}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)
	opts.Attempts = 2
	opts.idleTimeout = 100 * time.Millisecond
	var log bytes.Buffer
	opts.Progress = &log

	res, err := download(context.Background(), opts)
	require.NoError(t, err)
	assert.True(t, res.Resumed)
	assert.Contains(t, log.String(), "the transfer stalled: no data for 100ms; retrying")
	got, err := os.ReadFile(opts.Dest)
	require.NoError(t, err)
	assert.Equal(t, fs.content, got)
}

func TestDownloadRestartsWhenServerIgnoresRange(t *testing.T) {
	fs := &fileServer{content: testContent(200_000, 4), etag: `"v1"`, ranges: false, cutAfter: 70_000}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)

	_, err := download(context.Background(), opts)
	require.Error(t, err)
	res, err := download(context.Background(), opts)
	require.NoError(t, err)
	assert.True(t, res.Restarted)
	assert.False(t, res.Resumed)
	got, err := os.ReadFile(opts.Dest)
	require.NoError(t, err)
	assert.Equal(t, fs.content, got, "the old .part must not be spliced in front of a full response")
}

func TestDownloadRestartsWhenFileChanged(t *testing.T) {
	fs := &fileServer{content: testContent(200_000, 5), etag: `"v1"`, ranges: true, cutAfter: 90_000}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)

	_, err := download(context.Background(), opts)
	require.Error(t, err)
	v2 := testContent(180_000, 6)
	fs.set(v2, `"v2"`)

	res, err := download(context.Background(), opts)
	require.NoError(t, err)
	assert.True(t, res.Restarted)
	got, err := os.ReadFile(opts.Dest)
	require.NoError(t, err)
	assert.Equal(t, v2, got)
	assert.Equal(t, `"v1"`, fs.headers()[1].Get("If-Range"), "the resume named the version it had")
}

func TestDownloadDoesNotResumeUnsafely(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers map[string]string
	}{
		// No ETag and no Last-Modified: a resume could splice two versions
		// of the file, so the .part is not trusted.
		{"no validator", map[string]string{"Accept-Ranges": "bytes"}},
		// The server says it cannot serve ranges.
		{"ranges refused", map[string]string{"Accept-Ranges": "none", "ETag": `"v1"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content := testContent(100_000, 7)
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				for k, v := range tc.headers {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(content)))
				assert.Empty(t, r.Header.Get("Range"))
				if n == 1 {
					_, _ = w.Write(content[:30_000])
					w.(http.Flusher).Flush()
					panic(http.ErrAbortHandler)
				}
				_, _ = w.Write(content)
			}))
			defer srv.Close()
			opts := testDownloadOptions(t, srv.URL)

			_, err := download(context.Background(), opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "next run starts over")
			res, err := download(context.Background(), opts)
			require.NoError(t, err)
			assert.False(t, res.Resumed)
			got, err := os.ReadFile(opts.Dest)
			require.NoError(t, err)
			assert.Equal(t, content, got)
			assert.Equal(t, int32(2), calls.Load())
		})
	}
}

func TestDownloadChecksFreeSpaceFirst(t *testing.T) {
	fs := &fileServer{content: testContent(100_000, 8), etag: `"v1"`, ranges: true}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)
	var asked string
	opts.FreeSpace = func(dir string) (uint64, error) { asked = dir; return 40_000, nil }

	_, err := download(context.Background(), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs 97.7 KiB free")
	assert.Contains(t, err.Error(), "only 39.1 KiB is free")
	assert.Equal(t, filepath.Dir(opts.Dest), asked)
	fi, statErr := os.Stat(opts.Dest + ".part")
	if statErr == nil {
		assert.Zero(t, fi.Size(), "nothing is written before the check")
	}
	assert.NoFileExists(t, opts.Dest)
}

func TestDownloadFreeSpaceCountsOnlyWhatIsLeft(t *testing.T) {
	fs := &fileServer{content: testContent(100_000, 9), etag: `"v1"`, ranges: true, cutAfter: 80_000}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)
	_, err := download(context.Background(), opts)
	require.Error(t, err)

	// 20,000 bytes remain: 30,000 free is enough for the resume.
	opts.FreeSpace = func(string) (uint64, error) { return 30_000, nil }
	_, err = download(context.Background(), opts)
	require.NoError(t, err)
}

func TestDownloadCancelKeepsPart(t *testing.T) {
	hold := make(chan struct{})
	fs := &fileServer{content: testContent(400_000, 10), etag: `"v1"`, ranges: true, cutAfter: 100_000, hold: hold}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	opts.OnProgress = func(p Progress) {
		if p.Done >= 100_000 {
			cancel()
		}
	}

	_, err := download(ctx, opts)
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Contains(t, err.Error(), "resume")
	fi, err := os.Stat(opts.Dest + ".part")
	require.NoError(t, err)
	assert.Equal(t, int64(100_000), fi.Size())

	opts.OnProgress = nil
	res, err := download(context.Background(), opts)
	require.NoError(t, err)
	assert.True(t, res.Resumed)
	got, err := os.ReadFile(opts.Dest)
	require.NoError(t, err)
	assert.Equal(t, fs.content, got)
}

func TestDownloadHTTPErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)
	_, err := download(context.Background(), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "404")
	assert.Contains(t, err.Error(), "check the URL")

	for _, bad := range []string{"", "ftp://x/y.ipsw", "latest", "https:///nohost"} {
		opts.URL = bad
		_, err := download(context.Background(), opts)
		assert.ErrorContains(t, err, "not an http(s) URL", bad)
	}
}

func TestDownloadProgressLines(t *testing.T) {
	fs := &fileServer{content: testContent(50_000, 11), etag: `"v1"`, ranges: true}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	opts := testDownloadOptions(t, srv.URL)
	var out bytes.Buffer
	opts.Progress = &out

	_, err := download(context.Background(), opts)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.NotEmpty(t, lines)
	assert.NotContains(t, out.String(), "\r", "no terminal control in a log")
	assert.Equal(t, "restore.ipsw 100.0%  48.8 KiB / 48.8 KiB", lines[len(lines)-1])
}

func TestParseContentRange(t *testing.T) {
	for _, tc := range []struct {
		in          string
		start, size int64
		bad         bool
	}{
		{in: "bytes 100-199/200", start: 100, size: 200},
		{in: "bytes 0-0/*", start: 0, size: -1},
		{in: "bytes */300", start: -1, size: 300},
		{in: "items 1-2/3", bad: true},
		{in: "bytes 1-2", bad: true},
		{in: "bytes x-2/3", bad: true},
	} {
		start, size, err := parseContentRange(tc.in)
		if tc.bad {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.start, start, tc.in)
		assert.Equal(t, tc.size, size, tc.in)
	}
}

func TestDefaultIPSWName(t *testing.T) {
	name, err := defaultIPSWName("https://updates.cdn-apple.com/2024/x/UniversalMac_14.4.1_23E224_Restore.ipsw?a=b")
	require.NoError(t, err)
	assert.Equal(t, "UniversalMac_14.4.1_23E224_Restore.ipsw", name)
	_, err = defaultIPSWName("https://example.com/")
	assert.Error(t, err)
}
