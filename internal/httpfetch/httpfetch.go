// Package httpfetch bounds every phase of an HTTP download (connecting,
// waiting for the response's header, and each wait for more of its body),
// so that a server that stalls is an error naming it and what arrived, not
// a hang.
package httpfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Timeouts bound each phase of a request. None bounds the whole transfer:
// a large file over a slow link takes as long as it takes, as long as
// bytes keep coming.
type Timeouts struct {
	// Connect bounds the TCP connection and then the TLS handshake.
	Connect time.Duration
	// Header bounds the wait for the response's header once the request
	// is sent.
	Header time.Duration
	// Idle bounds each wait for more of the body (and, before the header,
	// the wait for anything at all).
	Idle time.Duration
}

// DefaultTimeouts are generous for a slow mirror and still end a dead one
// within a minute or two.
func DefaultTimeouts() Timeouts {
	return Timeouts{Connect: 30 * time.Second, Header: time.Minute, Idle: time.Minute}
}

// WithDefaults fills the phases t leaves zero from DefaultTimeouts.
func (t Timeouts) WithDefaults() Timeouts {
	d := DefaultTimeouts()
	if t.Connect <= 0 {
		t.Connect = d.Connect
	}
	if t.Header <= 0 {
		t.Header = d.Header
	}
	if t.Idle <= 0 {
		t.Idle = d.Idle
	}
	return t
}

// NewClient returns a client whose transport bounds connecting, the TLS
// handshake and the wait for the header (t's zero phases take the
// defaults); Do adds the idle bound on the body.
func NewClient(t Timeouts) *http.Client {
	t = t.WithDefaults()
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   t.Connect,
		ResponseHeaderTimeout: t.Header,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
	}}
}

// StallError is a response that went quiet for longer than the idle bound.
type StallError struct {
	URL string
	// Received is how many body bytes had arrived.
	Received int64
	Idle     time.Duration
	// BeforeHeader is a stall before the response's header arrived.
	BeforeHeader bool
}

func (e *StallError) Error() string {
	if e.BeforeHeader {
		return fmt.Sprintf("%s: no response for %s: the server stalled", e.URL, e.Idle)
	}
	return fmt.Sprintf("%s: no data for %s after %d bytes of the body: the server stalled", e.URL, e.Idle, e.Received)
}

var errIdle = errors.New("idle timeout")

// Do sends req with client, ending it with a *StallError when no byte
// arrives for idle: before the header, and then between reads of the body
// (the returned response's Body). Closing the body ends the watch.
func Do(client *http.Client, req *http.Request, idle time.Duration) (*http.Response, error) {
	if idle <= 0 {
		idle = DefaultTimeouts().Idle
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(idle, func() { cancel(errIdle) })
	url := req.URL.Redacted()
	resp, err := client.Do(req.WithContext(ctx)) //nolint:gosec // G704: fetching the URL its caller gives (a Debian mirror, an IPSW) is this package's job
	if err != nil {
		timer.Stop()
		stalled := errors.Is(context.Cause(ctx), errIdle)
		cancel(nil)
		if stalled {
			return nil, &StallError{URL: url, Idle: idle, BeforeHeader: true}
		}
		return nil, err
	}
	timer.Reset(idle)
	resp.Body = &watchedBody{rc: resp.Body, ctx: ctx, cancel: cancel, timer: timer, idle: idle, url: url}
	return resp, nil
}

// watchedBody restarts the idle timer on every read and turns the
// cancellation the timer causes into a StallError.
type watchedBody struct {
	rc       io.ReadCloser
	ctx      context.Context
	cancel   context.CancelCauseFunc
	timer    *time.Timer
	idle     time.Duration
	url      string
	received atomic.Int64
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.received.Add(int64(n))
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF && errors.Is(context.Cause(b.ctx), errIdle) {
		return n, &StallError{URL: b.url, Received: b.received.Load(), Idle: b.idle}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.timer.Stop()
	b.cancel(nil)
	return b.rc.Close()
}
