package macos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// LatestIPSW asks Virtualization.framework for the newest restore image
// this Mac supports.
const LatestIPSW = "latest"

// FetchOptions says which restore image to download and where.
type FetchOptions struct {
	// IPSW is LatestIPSW or an http(s) URL.
	IPSW string
	// Dir receives the file, named after the URL's last element.
	Dir        string
	Progress   io.Writer
	OnProgress func(Progress)
	// Framework resolves LatestIPSW; nil means hostFramework(), asked only
	// for LatestIPSW.
	Framework  Framework
	Client     *http.Client
	FreeSpace  FreeSpaceFunc
	Attempts   int
	RetryDelay time.Duration
}

// FetchResult is a downloaded and checked restore image.
type FetchResult struct {
	URL      string
	Download DownloadResult
	Image    RestoreImage
}

// Fetch downloads a restore image (resuming an earlier partial download)
// and checks that what arrived is one.
func Fetch(ctx context.Context, opts FetchOptions) (FetchResult, error) {
	var res FetchResult
	u, err := resolveIPSWURL(ctx, opts.IPSW, opts.Framework)
	if err != nil {
		return res, err
	}
	res.URL = u
	name, err := defaultIPSWName(u)
	if err != nil {
		return res, err
	}
	if opts.Dir == "" {
		return res, errors.New("fetch restore image: no destination directory given")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil { //nolint:gosec // G301: the directory of downloaded restore images, which are public
		return res, fmt.Errorf("fetch restore image: %w", err)
	}
	res.Download, err = download(ctx, downloadOptions{
		URL: u, Dest: filepath.Join(opts.Dir, name),
		Client: opts.Client, Progress: opts.Progress, OnProgress: opts.OnProgress,
		Attempts: opts.Attempts, RetryDelay: opts.RetryDelay, FreeSpace: opts.FreeSpace,
	})
	if err != nil {
		return res, err
	}
	res.Image, err = inspectIPSW(res.Download.Path)
	if err != nil {
		if !res.Download.AlreadyComplete {
			// What this call fetched is not a restore image (an error page
			// served as 200, say): drop it, or the next run would find it
			// "complete".
			os.Remove(res.Download.Path)
			return res, fmt.Errorf("%s did not send a restore image, so the download was deleted: %w", u, err)
		}
		return res, err
	}
	return res, nil
}

// resolveIPSWURL turns --ipsw into a URL: LatestIPSW needs
// Virtualization.framework, a URL is taken as is.
func resolveIPSWURL(ctx context.Context, spec string, fw Framework) (string, error) {
	if spec != LatestIPSW {
		return spec, nil
	}
	if fw == nil {
		var err error
		if fw, err = hostFramework(); err != nil {
			return "", fmt.Errorf("--ipsw latest asks Virtualization.framework which image this Mac supports, so it needs macOS 13+ on Apple silicon; "+
				"pass the restore image's URL instead: %w", err)
		}
	}
	return fw.LatestRestoreImageURL(ctx)
}
