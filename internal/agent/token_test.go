package agent

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/qoslab/qoslab/internal/transport"
)

// An agent on TCP with a token: a client without it, or with a wrong one,
// is refused as unauthenticated with where the token lives; the right one
// is served.
func TestTCPAgentWantsItsToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.token")
	tok, err := LoadOrCreateToken(path)
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "readable by its owner only")
	again, err := LoadOrCreateToken(path)
	require.NoError(t, err)
	assert.Equal(t, tok, again, "an existing token is kept, so clients can read it")
	assert.Len(t, tok, 64)

	addr, err := transport.Parse("tcp:127.0.0.1:0")
	require.NoError(t, err)
	lis, err := transport.Listen(context.Background(), addr)
	require.NoError(t, err)
	srv := NewServer(Policy{ScratchDir: t.TempDir(), Token: tok, TokenFile: path}, func() {})
	g := srv.GRPCServer()
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", lis.Addr().String())
	}

	for _, presented := range []string{"", "0123456789abcdef0123456789abcdef"} {
		c, err := newClientWithToken(dial, presented)
		require.NoError(t, err)
		_, err = c.Info(ctx(t))
		require.Error(t, err, "token %q", presented)
		assert.Equal(t, codes.Unauthenticated, codeOf(err), "token %q: %v", presented, err)
		assert.Contains(t, err.Error(), path)
		err = c.Shutdown(ctx(t))
		assert.Equal(t, codes.Unauthenticated, codeOf(err), "nor may it stop the agent: %v", err)
		c.Close()
	}
	c, err := newClientWithToken(dial, tok)
	require.NoError(t, err)
	defer c.Close()
	info, err := c.Info(ctx(t))
	require.NoError(t, err, "served, and still up after the refused Shutdowns")
	assert.NotEmpty(t, info.GetAgentVersion())
}

// A token file others can read is refused: anyone who reads it can drive
// the agent.
func TestTokenFileMustBePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.token")
	require.NoError(t, os.WriteFile(path, []byte("0123456789abcdef0123456789abcdef0123\n"), 0o644))
	_, err := LoadOrCreateToken(path)
	assert.ErrorContains(t, err, "is readable by others (mode -rw-r--r--): chmod 600 it")
}
