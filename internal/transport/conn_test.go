package transport

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// pipePair is the two ends of the stdio transport over two os.Pipe pairs,
// as the controller and the agent it started see them.
func pipePair(t *testing.T) (agent, controller net.Conn) {
	t.Helper()
	toAgentR, toAgentW, err := os.Pipe()
	require.NoError(t, err)
	toControllerR, toControllerW, err := os.Pipe()
	require.NoError(t, err)
	agent = PipeConn(toAgentR, toControllerW, "agent")
	controller = PipeConn(toControllerR, toAgentW, "controller")
	t.Cleanup(func() {
		_ = agent.Close()
		_ = controller.Close()
	})
	return agent, controller
}

func TestPipeConnRoundTrip(t *testing.T) {
	agent, controller := pipePair(t)
	require.NoError(t, agent.SetDeadline(time.Now().Add(boundedWait)))
	require.NoError(t, controller.SetDeadline(time.Now().Add(boundedWait)))

	_, err := controller.Write([]byte("request"))
	require.NoError(t, err)
	got := make([]byte, len("request"))
	_, err = io.ReadFull(agent, got)
	require.NoError(t, err)
	assert.Equal(t, "request", string(got))

	_, err = agent.Write([]byte("reply"))
	require.NoError(t, err)
	got = make([]byte, len("reply"))
	_, err = io.ReadFull(controller, got)
	require.NoError(t, err)
	assert.Equal(t, "reply", string(got))

	assert.Equal(t, "pipe", agent.LocalAddr().Network())
	assert.Equal(t, "agent", agent.LocalAddr().String())
	assert.Equal(t, "agent", agent.RemoteAddr().String())
}

func TestPipeConnDeadlineReachesThePipe(t *testing.T) {
	agent, _ := pipePair(t)
	require.NoError(t, agent.SetReadDeadline(time.Now().Add(-time.Second)))
	_, err := agent.Read(make([]byte, 1))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout(), "gRPC sees a deadline as a timeout")

	require.NoError(t, agent.SetReadDeadline(time.Time{}))
}

func TestPipeConnIgnoresDeadlinesItCannotSet(t *testing.T) {
	c := PipeConn(io.NopCloser(bytes.NewBufferString("data")), nopWriteCloser{io.Discard}, "buffer")
	assert.NoError(t, c.SetDeadline(time.Now().Add(-time.Second)))
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, "data", string(got), "the ignored deadline does not stop reads")
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func TestPipeConnCloseClosesBothEnds(t *testing.T) {
	agent, controller := pipePair(t)
	require.NoError(t, agent.Close())
	assert.ErrorIs(t, agent.Close(), net.ErrClosed, "a second Close")

	require.NoError(t, controller.SetDeadline(time.Now().Add(boundedWait)))
	_, err := controller.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the agent's write end is closed")
	_, err = controller.Write([]byte("x"))
	assert.Error(t, err, "the agent's read end is closed")
}

// acceptResult runs Accept in the background.
func acceptResult(l net.Listener) <-chan error {
	done := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if c != nil {
			_ = c.Close()
		}
		done <- err
	}()
	return done
}

func TestSingleConnListenerEnds(t *testing.T) {
	cases := []struct {
		name string
		end  func(t *testing.T, l net.Listener, accepted, controller net.Conn)
	}{
		{"the controller goes away", func(t *testing.T, _ net.Listener, accepted, controller net.Conn) {
			require.NoError(t, controller.Close())
			// What gRPC's reader does: read until EOF.
			require.NoError(t, accepted.SetReadDeadline(time.Now().Add(boundedWait)))
			_, err := io.Copy(io.Discard, accepted)
			require.NoError(t, err)
		}},
		{"the connection is closed", func(t *testing.T, _ net.Listener, accepted, _ net.Conn) {
			require.NoError(t, accepted.Close())
		}},
		{"the listener is closed", func(t *testing.T, l net.Listener, _, _ net.Conn) {
			require.NoError(t, l.Close())
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			agent, controller := pipePair(t)
			l := SingleConnListener(agent)
			defer l.Close()

			accepted, err := l.Accept()
			require.NoError(t, err)
			defer accepted.Close()
			next := acceptResult(l)
			select {
			case err := <-next:
				t.Fatalf("second Accept returned %v while the connection is live", err)
			case <-time.After(50 * time.Millisecond):
			}

			tc.end(t, l, accepted, controller)
			select {
			case err := <-next:
				assert.ErrorIs(t, err, net.ErrClosed)
			case <-time.After(boundedWait):
				t.Fatal("Accept still blocked after the connection ended")
			}
			assert.ErrorIs(t, <-acceptResult(l), net.ErrClosed, "every later Accept")
		})
	}
}

func TestSingleConnListenerClosedBeforeAccept(t *testing.T) {
	agent, controller := pipePair(t)
	l := SingleConnListener(agent)
	require.NoError(t, l.Close())

	c, err := l.Accept()
	assert.Nil(t, c)
	assert.ErrorIs(t, err, net.ErrClosed)

	require.NoError(t, controller.SetReadDeadline(time.Now().Add(boundedWait)))
	_, err = controller.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "a connection never accepted is closed with the listener")
}

// TestGRPCServeEndsWithItsController is the agent's stdio life cycle: a gRPC
// server serves over the pipes, answers the controller, and Serve returns
// once the controller closes its end.
func TestGRPCServeEndsWithItsController(t *testing.T) {
	agent, controller := pipePair(t)
	srv := grpc.NewServer()
	defer srv.Stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(SingleConnListener(agent)) }()

	client, err := grpc.NewClient("passthrough:///agent",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return controller, nil }),
	)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), boundedWait)
	defer cancel()
	// No service is registered: the server's Unimplemented answer proves a
	// request and its reply crossed the pipes.
	err = client.Invoke(ctx, "/qoslab.Absent/Ping", &emptypb.Empty{}, &emptypb.Empty{})
	assert.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)

	require.NoError(t, client.Close())
	select {
	case err := <-served:
		assert.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(boundedWait):
		t.Fatal("Serve did not return after the controller closed its end")
	}
}

func BenchmarkPipeConnThroughput(b *testing.B) {
	toAgentR, toAgentW, err := os.Pipe()
	require.NoError(b, err)
	toControllerR, toControllerW, err := os.Pipe()
	require.NoError(b, err)
	agent := PipeConn(toAgentR, toControllerW, "agent")
	controller := PipeConn(toControllerR, toAgentW, "controller")
	defer agent.Close()
	defer controller.Close()

	buf := make([]byte, 32<<10)
	drained := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, agent)
		drained <- err
	}()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if _, err := controller.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.NoError(b, toAgentW.Close())
	require.NoError(b, <-drained)
}
