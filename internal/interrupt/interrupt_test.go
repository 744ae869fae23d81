package interrupt

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A signal cancels the context with itself as the cause; a second one is
// caught too (this test process would die of it otherwise).
func TestSignalCancelsWithItsCause(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		text string
		code int
	}{
		{syscall.SIGINT, "interrupted by SIGINT", 130},
		{syscall.SIGTERM, "interrupted by SIGTERM", 143},
	} {
		t.Run(tc.text, func(t *testing.T) {
			ctx, stop := Context(context.Background())
			defer stop()
			assert.Nil(t, Of(ctx), "not cancelled yet")
			require.NoError(t, syscall.Kill(os.Getpid(), tc.sig))
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the signal did not cancel the context")
			}
			require.ErrorIs(t, ctx.Err(), context.Canceled)
			i := Of(ctx)
			require.NotNil(t, i)
			assert.Equal(t, tc.text, i.Error())
			assert.Equal(t, tc.code, i.ExitCode())
			require.NoError(t, syscall.Kill(os.Getpid(), tc.sig), "a second one")
			time.Sleep(50 * time.Millisecond) // it would have killed the test by now
		})
	}
}

func TestOfACancelWithoutSignal(t *testing.T) {
	ctx, stop := Context(context.Background())
	stop()
	require.Error(t, ctx.Err(), "stop cancels")
	assert.Nil(t, Of(ctx), "stop is no signal")
	assert.Nil(t, Of(context.Background()))
	cctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("other"))
	assert.Nil(t, Of(cctx))
}
