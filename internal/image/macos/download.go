package macos

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/httpfetch"
)

// downloadOptions says what to fetch and where.
type downloadOptions struct {
	URL string // http or https
	// Dest is the finished file. Bytes arrive in Dest+".part" (with what the
	// server said about them in Dest+".part.json") and are renamed to Dest
	// only once complete, so Dest never holds a partial download.
	Dest string
	// Client defaults to one with no overall timeout (a restore image is
	// tens of GB) but with connect and header timeouts.
	Client *http.Client
	// Progress gets a bar on a terminal, periodic lines otherwise; nil is silent.
	Progress io.Writer
	// OnProgress, when set, gets every progress update.
	OnProgress func(Progress)
	// Attempts is how many times a dropped connection is retried within one
	// call, each try resuming where the last stopped; 0 means 3.
	Attempts int
	// RetryDelay is the pause before a retry; 0 means 2 s.
	RetryDelay time.Duration
	// FreeSpace defaults to statfs on Dest's directory.
	FreeSpace FreeSpaceFunc

	idleTimeout time.Duration // tests shorten idleTimeout
}

// DownloadResult says what Download did.
type DownloadResult struct {
	Path string
	Size int64
	// AlreadyComplete is true when Dest existed, so nothing was fetched.
	AlreadyComplete bool
	// Resumed is true when an earlier .part was continued.
	Resumed bool
	// Restarted is true when an earlier .part was thrown away: the server
	// ignored the range, or the file changed on the server since.
	Restarted bool
}

// partState is Dest+".part.json": what the server said about the bytes in
// the .part file, so a resume asks for the same version of the file.
type partState struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"` // strong ETags only: If-Range refuses weak ones
	LastModified string `json:"last_modified,omitempty"`
	Size         int64  `json:"size"` // -1 when the server did not say
	AcceptRanges string `json:"accept_ranges,omitempty"`
}

// validator is what If-Range sends: a resume without one could splice two
// versions of the file, so no validator means no resume.
func (s *partState) validator() string {
	if s.ETag != "" {
		return s.ETag
	}
	return s.LastModified
}

const (
	defaultAttempts   = 3
	defaultRetryDelay = 2 * time.Second
	copyBuffer        = 1 << 20
	// idleTimeout ends a transfer that has stalled: a connection can hang
	// without failing, and only a retry (which resumes) gets it moving.
	idleTimeout = 2 * time.Minute
)

var errStalled = errors.New("the transfer stalled")

// defaultIPSWName is the file name to save url under: its last path element
// (Apple's names carry the version and build, e.g.
// UniversalMac_14.4.1_23E224_Restore.ipsw).
func defaultIPSWName(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("restore image URL %q: %w", rawURL, err)
	}
	name := path.Base(u.Path)
	if name == "." || name == "/" || name == "" {
		return "", fmt.Errorf("restore image URL %q names no file: pass a URL ending in the .ipsw's name", rawURL)
	}
	return name, nil
}

// download fetches opts.URL to opts.Dest, resuming an earlier partial
// download when the server supports ranges and the file has not changed
// since. Cancelling ctx keeps the .part file for the next call.
func download(ctx context.Context, opts downloadOptions) (DownloadResult, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return DownloadResult{}, fmt.Errorf("download %q: not an http(s) URL; pass the restore image's full URL", opts.URL)
	}
	if opts.Dest == "" {
		return DownloadResult{}, errors.New("download: no destination file given")
	}
	if fi, err := os.Stat(opts.Dest); err == nil {
		if !fi.Mode().IsRegular() {
			return DownloadResult{}, fmt.Errorf("download to %s: it exists and is not a file", opts.Dest)
		}
		return DownloadResult{Path: opts.Dest, Size: fi.Size(), AlreadyComplete: true}, nil
	}
	if err := os.MkdirAll(filepath.Dir(opts.Dest), 0o755); err != nil { //nolint:gosec // G301: the directory of downloaded restore images, which are public
		return DownloadResult{}, fmt.Errorf("download: %w", err)
	}
	d := &downloader{opts: opts, client: opts.Client, idleAfter: opts.idleTimeout}
	if d.client == nil {
		d.client = defaultHTTPClient()
	}
	if d.idleAfter <= 0 {
		d.idleAfter = idleTimeout
	}
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = defaultAttempts
	}
	delay := opts.RetryDelay
	if delay <= 0 {
		delay = defaultRetryDelay
	}
	bar := newProgressBar(opts.Progress, filepath.Base(opts.Dest), unitBytes, opts.OnProgress)
	defer bar.finish()
	d.bar = bar

	var res DownloadResult
	for try := 1; ; try++ {
		err = d.once(ctx, &res)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return res, d.paused(ctx.Err())
		}
		var re *retryableError
		if !errors.As(err, &re) {
			return res, err
		}
		if try >= attempts {
			return res, d.paused(fmt.Errorf("%w (tried %d times)", err, try))
		}
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "\n%s; retrying in %s\n", err, delay)
		}
		select {
		case <-ctx.Done():
			return res, d.paused(ctx.Err())
		case <-time.After(delay):
		}
	}
}

// retryableError is a failure another try may not repeat: a dropped
// connection, a server error.
type retryableError struct{ err error }

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

type downloader struct {
	opts   downloadOptions
	client *http.Client
	bar    *progressBar
	idle   *time.Timer // reset by every read; fires errStalled
	// idleAfter is how long a transfer may go without data.
	idleAfter time.Duration
}

func (d *downloader) partPath() string  { return d.opts.Dest + ".part" }
func (d *downloader) statePath() string { return d.opts.Dest + ".part.json" }

// paused explains a stop that left a .part behind.
func (d *downloader) paused(err error) error {
	fi, statErr := os.Stat(d.partPath())
	if statErr != nil || fi.Size() == 0 {
		return fmt.Errorf("download %s: %w", d.opts.URL, err)
	}
	st := d.loadState()
	if st == nil || st.validator() == "" || st.AcceptRanges == "none" {
		return fmt.Errorf("download %s stopped after %s: %w; the server does not allow resuming, so the next run starts over",
			d.opts.URL, formatBytes(fi.Size()), err)
	}
	return fmt.Errorf("download %s stopped after %s: %w; run the same command again to resume from %s",
		d.opts.URL, formatBytes(fi.Size()), err, d.partPath())
}

func (d *downloader) loadState() *partState {
	b, err := os.ReadFile(d.statePath())
	if err != nil {
		return nil
	}
	var st partState
	if json.Unmarshal(b, &st) != nil || st.URL != d.opts.URL {
		return nil
	}
	return &st
}

func (d *downloader) saveState(st *partState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(d.statePath(), append(b, '\n'), 0o644) //nolint:gosec // G306: the resume state of a public restore image (its URL, size and validators), beside it
}

// discardPart forgets a .part that cannot be resumed.
func (d *downloader) discardPart() {
	os.Remove(d.partPath())
	os.Remove(d.statePath())
}

// once makes one request and writes what it gets; a nil error means Dest is
// complete.
func (d *downloader) once(ctx context.Context, res *DownloadResult) error {
	st := d.loadState()
	offset := d.resumeOffset(st)

	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(d.idleAfter, func() { cancel(errStalled) })
	defer idle.Stop()
	d.idle = idle

	resp, err := d.get(reqCtx, offset, st)
	if err != nil {
		return err
	}
	defer resp.Body.Close()

	total, offset, finished, err := d.answered(resp, st, offset, res)
	if finished || err != nil {
		return err
	}
	if total >= 0 {
		if err := checkFreeSpace(d.opts.FreeSpace, filepath.Dir(d.opts.Dest), uint64(total-offset),
			"downloading "+filepath.Base(d.opts.Dest)); err != nil {
			return err
		}
	}
	if err := d.saveState(newPartState(d.opts.URL, resp, st, total)); err != nil {
		return fmt.Errorf("download: %w", err)
	}

	f, err := d.openPart(offset)
	if err != nil {
		return err
	}
	n, copyErr := d.writePart(f, resp.Body, offset, total)
	got := offset + n
	if copyErr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(context.Cause(reqCtx), errStalled) {
			copyErr = fmt.Errorf("%w: no data for %s", errStalled, d.idleAfter)
		}
		var pe *os.PathError
		if errors.As(copyErr, &pe) {
			return fmt.Errorf("download: %w", copyErr) // the local disk, not the network
		}
		return &retryableError{fmt.Errorf("download %s: connection lost after %s: %w", d.opts.URL, formatBytes(got), copyErr)}
	}
	if total >= 0 && got != total {
		return &retryableError{fmt.Errorf("download %s: got %d bytes, the server announced %d", d.opts.URL, got, total)}
	}
	return d.complete(res, got)
}

// resumeOffset is where the .part left off, when st says the server can
// resume it there; else 0.
func (d *downloader) resumeOffset(st *partState) int64 {
	fi, err := os.Stat(d.partPath())
	if err != nil || st == nil || st.validator() == "" || st.AcceptRanges == "none" {
		return 0
	}
	if st.Size >= 0 && fi.Size() > st.Size {
		return 0 // longer than the file it claims to be part of
	}
	return fi.Size()
}

// get sends the request: all of the file, or from offset on if it is still
// the file st describes.
func (d *downloader) get(ctx context.Context, offset int64, st *partState) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.opts.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", d.opts.URL, err)
	}
	req.Header.Set("User-Agent", "qoslab")
	// Byte-exact ranges: no transparent decompression.
	req.Header.Set("Accept-Encoding", "identity")
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
		req.Header.Set("If-Range", st.validator())
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, &retryableError{fmt.Errorf("download %s: %w", d.opts.URL, err)}
	}
	return resp, nil
}

// answered reads the response's status: the file's total size (-1 if not
// known) and the offset its body starts at, or an error. finished means the
// .part already held the whole file and is now Dest (err is how moving it
// went).
func (d *downloader) answered(resp *http.Response, st *partState, offset int64, res *DownloadResult) (total, start int64, finished bool, err error) {
	total = resp.ContentLength
	switch {
	case resp.StatusCode == http.StatusPartialContent && offset > 0:
		from, size, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil || from != offset || (st.Size >= 0 && size >= 0 && size != st.Size) {
			// Not the bytes asked for: trust nothing of the old .part.
			d.discardPart()
			res.Restarted = true
			return 0, 0, false, &retryableError{fmt.Errorf("download %s: asked to resume at byte %d, the server answered %q",
				d.opts.URL, offset, resp.Header.Get("Content-Range"))}
		}
		res.Resumed = true
		return size, offset, false, nil
	case resp.StatusCode == http.StatusOK:
		if offset > 0 {
			// The server ignored the range, or If-Range did not match: the
			// file changed since the .part was written. Start over.
			res.Restarted = true
		}
		return total, 0, false, nil
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && offset > 0:
		// The .part may already hold the whole file (a crash between the
		// last byte and the rename).
		if _, size, err := parseContentRange(resp.Header.Get("Content-Range")); err == nil && size == offset && st.Size == offset {
			return 0, 0, true, d.complete(res, offset)
		}
		d.discardPart()
		res.Restarted = true
		return 0, 0, false, &retryableError{fmt.Errorf("download %s: the server refused to resume at byte %d", d.opts.URL, offset)}
	}
	err = fmt.Errorf("download %s: %s", d.opts.URL, resp.Status)
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests {
		return 0, 0, false, &retryableError{err}
	}
	if resp.StatusCode == http.StatusNotFound {
		return 0, 0, false, fmt.Errorf("%w: check the URL (Apple removes old restore images; `--ipsw latest` on a Mac finds the current one)", err)
	}
	return 0, 0, false, err
}

// newPartState is what the .part.json records of resp: what a later request
// needs to resume, and to know it resumes the same file. A 206 may omit
// what the first response said (st); that is kept.
func newPartState(url string, resp *http.Response, st *partState, total int64) *partState {
	ps := &partState{
		URL:          url,
		LastModified: resp.Header.Get("Last-Modified"),
		Size:         total,
		AcceptRanges: resp.Header.Get("Accept-Ranges"),
	}
	if et := resp.Header.Get("ETag"); et != "" && !strings.HasPrefix(et, "W/") {
		ps.ETag = et
	}
	if resp.StatusCode == http.StatusPartialContent {
		ps.ETag, ps.LastModified = cmp.Or(ps.ETag, st.ETag), cmp.Or(ps.LastModified, st.LastModified)
		ps.AcceptRanges = cmp.Or(ps.AcceptRanges, st.AcceptRanges, "bytes")
	}
	return ps
}

// openPart opens the .part for writing at offset, truncating it when offset
// is 0.
func (d *downloader) openPart(offset int64) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE
	if offset == 0 {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(d.partPath(), flags, 0o644) //nolint:gosec // G302: a public restore image (Apple's); the finished file keeps this mode, as any download
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("download: %w", err)
	}
	return f, nil
}

// writePart copies body into f (the .part, at offset), syncs and closes
// it; it returns the bytes written and the first error.
func (d *downloader) writePart(f *os.File, body io.Reader, offset, total int64) (int64, error) {
	n, err := d.copy(f, body, offset, total)
	if serr := f.Sync(); serr != nil && err == nil {
		err = serr
	}
	if cerr := f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return n, err
}

// copy writes body to f, reporting progress from offset on.
func (d *downloader) copy(f *os.File, body io.Reader, offset, total int64) (int64, error) {
	buf := make([]byte, copyBuffer)
	var n int64
	d.bar.update(offset, total)
	for {
		m, rerr := body.Read(buf)
		d.idle.Reset(d.idleAfter)
		if m > 0 {
			if _, werr := f.Write(buf[:m]); werr != nil {
				return n, werr
			}
			n += int64(m)
			d.bar.update(offset+n, total)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// complete moves the finished .part into place.
func (d *downloader) complete(res *DownloadResult, size int64) error {
	if err := os.Rename(d.partPath(), d.opts.Dest); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	os.Remove(d.statePath())
	res.Path, res.Size = d.opts.Dest, size
	return nil
}

// parseContentRange reads "bytes START-END/SIZE" or "bytes */SIZE"; size
// is -1 for "*".
func parseContentRange(s string) (start, size int64, err error) {
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, 0, fmt.Errorf("content-range %q: not bytes", s)
	}
	rng, sz, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, fmt.Errorf("content-range %q: no size", s)
	}
	size = -1
	if sz != "*" {
		if size, err = strconv.ParseInt(sz, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("content-range %q: %w", s, err)
		}
	}
	if rng == "*" {
		return -1, size, nil
	}
	first, _, ok := strings.Cut(rng, "-")
	if !ok {
		return 0, 0, fmt.Errorf("content-range %q: no range", s)
	}
	if start, err = strconv.ParseInt(first, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("content-range %q: %w", s, err)
	}
	return start, size, nil
}

// defaultHTTPClient bounds connecting and the wait for a response's header
// (the phases httpfetch bounds for every download qoslab makes) but not the
// transfer, which for a restore image takes as long as it takes; the idle
// timer in once ends a transfer that stops moving.
func defaultHTTPClient() *http.Client {
	return httpfetch.NewClient(httpfetch.Timeouts{Connect: 30 * time.Second, Header: time.Minute, Idle: idleTimeout})
}
