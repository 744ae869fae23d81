package httpfetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stallingServer sends half of body, flushes it, and then sends nothing
// until the client goes away; /slow-header sends nothing at all.
func stallingServer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-header" {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Length", "1000")
		_, _ = io.WriteString(w, body)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A body that stops mid-way ends in a StallError naming the URL and the
// bytes that arrived, long before the test's own bound; without the idle
// watch the read would wait for the test's deadline.
func TestDoEndsAStalledBody(t *testing.T) {
	srv := stallingServer(t, strings.Repeat("x", 500))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/file", nil)
	require.NoError(t, err)
	resp, err := Do(NewClient(Timeouts{}), req, 200*time.Millisecond)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	var stall *StallError
	require.ErrorAs(t, err, &stall, "not the test's deadline: %v", err)
	assert.NoError(t, ctx.Err(), "ended by the idle bound, not the test's deadline")
	assert.Len(t, got, 500)
	assert.Equal(t, int64(500), stall.Received)
	assert.Contains(t, err.Error(), srv.URL+"/file: no data for 200ms after 500 bytes of the body")
}

// A server that never answers ends in the header bound (the client's) or
// the idle bound, whichever is shorter.
func TestDoEndsASilentServer(t *testing.T) {
	srv := stallingServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, c := range []struct {
		name    string
		client  *http.Client
		idle    time.Duration
		wantErr string
	}{
		{"idle", NewClient(Timeouts{}), 200 * time.Millisecond, "no response for 200ms"},
		{"header", NewClient(Timeouts{Header: 200 * time.Millisecond}), time.Minute, "timeout awaiting response headers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow-header", nil)
			require.NoError(t, err)
			_, err = Do(c.client, req, c.idle)
			require.Error(t, err)
			assert.NoError(t, ctx.Err(), "ended by the bound, not the test's deadline")
			assert.Contains(t, err.Error(), c.wantErr)
		})
	}
}

// A body that arrives in pieces, with pauses shorter than the idle bound,
// is read whole: each read restarts the bound.
func TestDoLetsASlowBodyFinish(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for range 5 {
			_, _ = io.WriteString(w, "abcd")
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := Do(NewClient(Timeouts{}), req, 5*time.Second)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("abcd", 5), string(got))
}

// Cancelling the caller's context is the caller's error, not a stall.
func TestDoCancelIsNotAStall(t *testing.T) {
	srv := stallingServer(t, "abc")
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/file", nil)
	require.NoError(t, err)
	resp, err := Do(NewClient(Timeouts{}), req, time.Minute)
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, 3)
	_, err = io.ReadFull(resp.Body, buf)
	require.NoError(t, err)
	cancel()
	_, err = resp.Body.Read(buf)
	assert.ErrorIs(t, err, context.Canceled)
	var stall *StallError
	assert.False(t, errors.As(err, &stall))
}

func TestTimeoutsWithDefaults(t *testing.T) {
	d := DefaultTimeouts()
	assert.Equal(t, d, Timeouts{}.WithDefaults())
	assert.Equal(t, Timeouts{Connect: time.Second, Header: d.Header, Idle: d.Idle}, Timeouts{Connect: time.Second}.WithDefaults())
}
