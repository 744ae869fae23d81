package agent

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// tokenHeader is the gRPC metadata key a client presents the agent's token
// in. An agent listening on TCP takes requests from anyone who can reach
// its port (a Shutdown, a 1024-thread run): it requires the token, which
// only the user who started it can read. stdio, serial and vsock channels
// are the controller's alone and need none.
const tokenHeader = "x-qoslab-token"

// RuntimeDirEnv is the user's runtime directory (XDG), where an agent
// keeps its token; the agent's main reads it with its flags.
const RuntimeDirEnv = "XDG_RUNTIME_DIR"

// DefaultTokenFile is where an agent listening on TCP keeps its token when
// none is named: in runtimeDir, the user's $XDG_RUNTIME_DIR (private to the
// user), or, when that is "", the user's config directory.
func DefaultTokenFile(runtimeDir string) (string, error) {
	if runtimeDir != "" {
		return filepath.Join(runtimeDir, "qoslab-agent.token"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place for the agent's token: %w; give --token-file", err)
	}
	return filepath.Join(d, "qoslab", "agent.token"), nil
}

// LoadOrCreateToken returns the token in path, creating the file (mode
// 0600, 32 random bytes in hex) when it does not exist. A file others may
// read is refused: anyone who can read it can drive the agent.
func LoadOrCreateToken(path string) (string, error) {
	if t, err := readToken(path); err == nil {
		return t, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("agent token: %w", err)
	}
	tok := hex.EncodeToString(b[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("agent token %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // G304: the token file the user names
	if err != nil {
		return "", fmt.Errorf("agent token %s: %w", path, err)
	}
	_, err = f.WriteString(tok + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("agent token %s: %w", path, err)
	}
	return tok, nil
}

// readToken reads a token file, refusing one that others may read.
func readToken(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("agent token %s is readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path) //nolint:gosec // G304: the token file the user names
	if err != nil {
		return "", err
	}
	t := strings.TrimSpace(string(b))
	if len(t) < 32 {
		return "", fmt.Errorf("agent token %s holds %d characters: want at least 32", path, len(t))
	}
	return t, nil
}

// tokenInterceptors refuse every call that does not present token (in
// constant time); where says where the token file is, for the message.
func tokenInterceptors(token, where string) []grpc.ServerOption {
	check := func(ctx context.Context) error {
		md, _ := metadata.FromIncomingContext(ctx)
		for _, got := range md.Get(tokenHeader) {
			if subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1 {
				return nil
			}
		}
		return status.Errorf(codes.Unauthenticated, "this agent listens on TCP and wants its token (gRPC metadata %s), which is in %s on the agent's machine", tokenHeader, where)
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := check(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := check(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}

// tokenCreds presents a token with every call.
type tokenCreds string

func (t tokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{tokenHeader: string(t)}, nil
}

// RequireTransportSecurity is false: the token guards a loopback or lab
// network port, as the agent's documentation says; it is not a secret on
// an untrusted network.
func (t tokenCreds) RequireTransportSecurity() bool { return false }
