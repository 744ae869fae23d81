package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/version"
)

// Client is the controller's side of one agent connection.
type Client struct {
	conn *grpc.ClientConn
	api  agentpb.AgentClient
	// gone, when set, closes when the agent's process or machine has ended;
	// every call then fails with why() instead of waiting for a peer that
	// cannot come back.
	gone <-chan struct{}
	why  func() error
}

// EndsWith ties the client's calls to the agent's life: once gone closes,
// calls in flight and later ones fail with why().
func (c *Client) EndsWith(gone <-chan struct{}, why func() error) {
	c.gone, c.why = gone, why
}

// bind derives a call's context that ends when the agent does.
func (c *Client) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if c.gone != nil {
		go func() {
			select {
			case <-c.gone:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// explain replaces a call's error with the agent's end when that is the
// cause, and a gRPC status with what the agent said.
func (c *Client) explain(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if c.gone != nil {
		// A channel that broke because the agent's process or VM ended often
		// reports the broken stream first: give the end a moment to be noticed.
		select {
		case <-c.gone:
			return c.why()
		default:
		}
		if !ok || st.Code() == codes.Unavailable || st.Code() == codes.Internal {
			select {
			case <-c.gone:
				return c.why()
			case <-time.After(endNoticeTime):
			}
		}
	}
	if !ok {
		return err
	}
	switch st.Code() {
	case codes.Canceled:
		return context.Canceled
	case codes.DeadlineExceeded:
		return context.DeadlineExceeded
	}
	return &refusedError{Code: st.Code(), Message: st.Message()}
}

// endNoticeTime is how long a broken channel waits for the agent's end to be
// noticed (a VM killed from outside is noticed within 2 s).
const endNoticeTime = 2 * time.Second

// refusedError is what the agent answered instead of a result.
type refusedError struct {
	Code    codes.Code
	Message string
}

func (e *refusedError) Error() string {
	switch e.Code {
	case codes.InvalidArgument, codes.PermissionDenied, codes.FailedPrecondition, codes.ResourceExhausted:
		return "agent refused: " + e.Message
	case codes.Unavailable:
		return "agent unavailable: " + e.Message
	}
	return "agent: " + e.Message
}

// IsBadRequest tells whether the agent refused a request as malformed: a
// mistake in what was asked, not a failure of the measurement.
func IsBadRequest(err error) bool {
	var r *refusedError
	return errors.As(err, &r) && r.Code == codes.InvalidArgument
}

// Protocol is what this controller speaks, sent with every request.
func Protocol() *agentpb.ProtocolVersion {
	return &agentpb.ProtocolVersion{Major: version.ProtocolMajor, Minor: version.ProtocolMinor}
}

// NewClient speaks to an agent over dial. gRPC calls dial again when a
// connection fails, so dial must either open a fresh channel each time (a VM's
// socket) or refuse (see DialOnce for a pipe that cannot be reopened).
func NewClient(dial func(ctx context.Context) (net.Conn, error)) (*Client, error) {
	return newClientWithToken(dial, "")
}

// newClientWithToken is NewClient presenting token with every call, as an
// agent listening on TCP wants (see tokenHeader); "" presents none.
func newClientWithToken(dial func(ctx context.Context) (net.Conn, error), token string) (*Client, error) {
	opts := []grpc.DialOption{}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(tokenCreds(token)))
	}
	conn, err := grpc.NewClient("passthrough:///qoslab-agent", append(opts,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }),
		// A guest booting under TCG can take longer than gRPC's default 20 s
		// to send the server preface on a channel that connected at once.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: 2 * time.Minute}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)),
	)...)
	if err != nil {
		return nil, fmt.Errorf("agent client: %w", err)
	}
	return &Client{conn: conn, api: agentpb.NewAgentClient(conn)}, nil
}

// DialOnce hands out conn once; later dials fail, for a channel such as a
// child's stdio that cannot be reopened.
func DialOnce(conn net.Conn) func(context.Context) (net.Conn, error) {
	var once sync.Once
	return func(context.Context) (net.Conn, error) {
		var c net.Conn
		once.Do(func() { c = conn })
		if c == nil {
			return nil, errors.New("agent connection already closed; it cannot be redialled")
		}
		return c, nil
	}
}

// Info asks the agent to describe its machine, refusing an agent whose
// protocol major differs from ours.
func (c *Client) Info(ctx context.Context) (*agentpb.InfoReply, error) {
	ctx, cancel := c.bind(ctx)
	defer cancel()
	r, err := c.api.Info(ctx, &agentpb.InfoRequest{Protocol: Protocol()}, grpc.WaitForReady(true))
	if err != nil {
		return nil, fmt.Errorf("agent info: %w", c.explain(err))
	}
	if r.GetProtocol().GetMajor() != version.ProtocolMajor {
		return nil, fmt.Errorf("agent %s speaks protocol %d.x, this controller (%s) speaks %d.x: use binaries from the same release",
			r.GetAgentVersion(), r.GetProtocol().GetMajor(), version.String(), version.ProtocolMajor)
	}
	return r, nil
}

// Run measures one cell. onProgress, when not nil, gets each progress event.
// The result holds what finished even when the error is not nil.
func (c *Client) Run(ctx context.Context, req *agentpb.RunRequest, onProgress func(*agentpb.Progress)) (*agentpb.Result, error) {
	req.Protocol = Protocol()
	ctx, cancel := c.bind(ctx)
	defer cancel()
	stream, err := c.api.Run(ctx, req, grpc.WaitForReady(true))
	if err != nil {
		return nil, c.explain(err)
	}
	var res *agentpb.Result
	var tel *agentpb.Telemetry
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if res == nil {
				return nil, errors.New("agent ended the cell without a result")
			}
			return res, nil
		}
		if err != nil {
			return res, c.explain(err)
		}
		switch e := ev.Event.(type) {
		case *agentpb.RunEvent_Progress:
			if onProgress != nil {
				onProgress(e.Progress)
			}
		case *agentpb.RunEvent_Telemetry:
			tel = mergeTelemetry(tel, e.Telemetry)
		case *agentpb.RunEvent_Result:
			res = e.Result
			res.Telemetry = tel
		}
	}
}

// Shutdown asks the agent to stop.
func (c *Client) Shutdown(ctx context.Context) error {
	ctx, cancel := c.bind(ctx)
	defer cancel()
	_, err := c.api.Shutdown(ctx, &agentpb.ShutdownRequest{})
	return c.explain(err)
}

// Close drops the connection.
func (c *Client) Close() error { return c.conn.Close() }

// mergeTelemetry adds a batch of telemetry to what came before it: the agent
// sends a long cell's samples in several events, the figures in the last.
func mergeTelemetry(into, batch *agentpb.Telemetry) *agentpb.Telemetry {
	if into == nil {
		into = &agentpb.Telemetry{}
	}
	into.SamplesJson = append(into.SamplesJson, batch.GetSamplesJson()...)
	if batch.GetUnavailable() != "" {
		into.Unavailable = batch.GetUnavailable()
	}
	if batch.GetSamples() > 0 {
		into.Samples, into.Within_10Ms, into.SamplerCpuNs = batch.GetSamples(), batch.GetWithin_10Ms(), batch.GetSamplerCpuNs()
	}
	return into
}
