package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/version"
)

// Client is the controller's side of one agent connection.
type Client struct {
	conn *grpc.ClientConn
	api  agentpb.AgentClient
}

// Protocol is what this controller speaks, sent with every request.
func Protocol() *agentpb.ProtocolVersion {
	return &agentpb.ProtocolVersion{Major: version.ProtocolMajor, Minor: version.ProtocolMinor}
}

// NewClient speaks to an agent over dial, which is called once for the
// connection (a stdio pipe or a VM channel cannot be redialled).
func NewClient(dial func(ctx context.Context) (net.Conn, error)) (*Client, error) {
	used := false
	conn, err := grpc.NewClient("passthrough:///qoslab-agent",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			if used {
				return nil, errors.New("agent connection already closed; it cannot be redialled")
			}
			used = true
			return dial(ctx)
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)),
	)
	if err != nil {
		return nil, fmt.Errorf("agent client: %w", err)
	}
	return &Client{conn: conn, api: agentpb.NewAgentClient(conn)}, nil
}

// Info asks the agent to describe its machine, refusing an agent whose
// protocol major differs from ours.
func (c *Client) Info(ctx context.Context) (*agentpb.InfoReply, error) {
	r, err := c.api.Info(ctx, &agentpb.InfoRequest{Protocol: Protocol()}, grpc.WaitForReady(true))
	if err != nil {
		return nil, fmt.Errorf("agent info: %w", err)
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
	stream, err := c.api.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	var res *agentpb.Result
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if res == nil {
				return nil, errors.New("agent ended the cell without a result")
			}
			return res, nil
		}
		if err != nil {
			return res, err
		}
		switch e := ev.Event.(type) {
		case *agentpb.RunEvent_Progress:
			if onProgress != nil {
				onProgress(e.Progress)
			}
		case *agentpb.RunEvent_Result:
			res = e.Result
		}
	}
}

// Shutdown asks the agent to stop.
func (c *Client) Shutdown(ctx context.Context) error {
	_, err := c.api.Shutdown(ctx, &agentpb.ShutdownRequest{})
	return err
}

// Close drops the connection.
func (c *Client) Close() error { return c.conn.Close() }
