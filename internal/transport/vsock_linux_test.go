package transport

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mdlayher/vsock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// vmaddrCIDLocal is VMADDR_CID_LOCAL, the loopback CID that the
// vsock_loopback transport serves.
const vmaddrCIDLocal = 1

func TestVsockLoopback(t *testing.T) {
	ctx := context.Background()
	l, err := Listen(ctx, Addr{Kind: KindVsock, CID: VsockAnyCID})
	if errors.Is(err, unix.EAFNOSUPPORT) {
		t.Skipf("this kernel has no vsock (AF_VSOCK socket: %v)", err)
	}
	require.NoError(t, err)
	defer l.Close()
	la, ok := l.Addr().(*vsock.Addr)
	require.True(t, ok, "listener address %T", l.Addr())

	assert.Equal(t, VsockAnyCID, la.ContextID, "listens for any CID")

	// Without a loopback transport the kernel sends CID 1 to the host, which
	// never answers: bound the wait well below the kernel's 2 s timeout.
	dialCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	c, err := Dial(dialCtx, Addr{Kind: KindVsock, CID: vmaddrCIDLocal, Port: la.Port})
	for _, noLoopback := range []error{context.DeadlineExceeded, unix.ETIMEDOUT, unix.ENODEV, unix.ECONNRESET} {
		if errors.Is(err, noLoopback) {
			t.Skipf("vsock listens here but has no loopback transport (vsock_loopback, CONFIG_VSOCKETS_LOOPBACK): dial CID %d port %d: %v", vmaddrCIDLocal, la.Port, err)
		}
	}
	require.NoError(t, err)
	defer c.Close()
	assertEcho(t, l, c)
}
