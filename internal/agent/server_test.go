package agent

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/transport"
	"github.com/qoslab/qoslab/internal/version"
)

// serve starts an agent server on one end of an in-memory pipe and returns a
// client on the other.
func serve(t *testing.T, policy Policy) (*Client, *Server) {
	t.Helper()
	srvEnd, cliEnd := net.Pipe()
	stopped := make(chan struct{})
	srv := NewServer(policy, func() { close(stopped) })
	g := srv.GRPCServer()
	go func() { _ = g.Serve(transport.SingleConnListener(srvEnd)) }()
	c, err := NewClient(DialOnce(cliEnd))
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Close()
		g.Stop()
	})
	return c, srv
}

// codeOf is the gRPC code behind a client error.
func codeOf(err error) codes.Code {
	var r *refusedError
	switch {
	case errors.As(err, &r):
		return r.Code
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return status.Code(err)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestInfo(t *testing.T) {
	c, _ := serve(t, Policy{ScratchDir: t.TempDir()})
	info, err := c.Info(ctx(t))
	require.NoError(t, err)
	assert.Equal(t, uint32(version.ProtocolMajor), info.GetProtocol().GetMajor())
	assert.Equal(t, "linux", info.GetOs())
	assert.NotEmpty(t, info.GetCpuModel())
	assert.Positive(t, info.GetLogicalCpus())
	assert.Positive(t, info.GetMemoryBytes())
	assert.Contains(t, info.GetWorkloads(), "fp")
	assert.Contains(t, info.GetCodecs(), "zstd")
	assert.NotContains(t, info.GetCodecs(), "lzfse", "lzfse exists only on macOS")
	assert.NotEmpty(t, info.GetQosSupport())
	assert.NotEmpty(t, info.GetVirtualization(), "the virtualization verdict says how it was reached")
	require.NotEmpty(t, info.GetPerfLevels())
}

func TestRefusesUnknownProtocolMajor(t *testing.T) {
	c, _ := serve(t, Policy{})
	_, err := c.api.Info(ctx(t), &agentpb.InfoRequest{Protocol: &agentpb.ProtocolVersion{Major: version.ProtocolMajor + 1}})
	require.Error(t, err)
	assert.Equal(t, codes.FailedPrecondition, codeOf(err))
	assert.Contains(t, err.Error(), "protocol 2.0 not supported")

	stream, err := c.api.Run(ctx(t), &agentpb.RunRequest{Protocol: &agentpb.ProtocolVersion{Major: 0}, Workload: "fp", Qos: 21, Threads: 1, Loops: 1})
	require.NoError(t, err)
	_, err = stream.Recv()
	assert.Equal(t, codes.FailedPrecondition, codeOf(err))
}

func TestRunFP(t *testing.T) {
	c, _ := serve(t, Policy{})
	var progress []float64
	res, err := c.Run(ctx(t), &agentpb.RunRequest{Workload: "fp", Qos: int32(qos.Utility), Threads: 2, Loops: 3 << 20, ProgressIntervalMs: 50},
		func(p *agentpb.Progress) { progress = append(progress, p.GetFraction()) })
	require.NoError(t, err)
	assert.Equal(t, "loops", res.GetUnit())
	require.Len(t, res.GetRecords(), 2)
	for i, r := range res.GetRecords() {
		assert.Equal(t, uint32(i), r.GetIndex())
		assert.Equal(t, float64(3<<20), r.GetWork())
		assert.Greater(t, r.GetEndNs(), r.GetStartNs())
		assert.GreaterOrEqual(t, r.GetStartNs(), int64(0), "times are since the cell began")
		assert.InEpsilon(t, r.GetWork()/(float64(r.GetEndNs()-r.GetStartNs())/1e9), r.GetRate(), 1e-9)
		assert.Equal(t, int32(qos.Utility), r.GetQos().GetAsked())
		assert.Equal(t, int32(qos.Utility), r.GetQos().GetApplied(), r.GetQos().GetDetail())
		assert.NotEmpty(t, r.GetCpus(), "Linux records the CPUs a thread ran on")
		assert.Positive(t, r.GetCpuNs(), "the thread's CPU time crosses the wire")
		assert.LessOrEqual(t, r.GetCpuNs(), r.GetEndNs()-r.GetStartNs()+1e6, "no more CPU time than wall time")
	}
	for _, f := range progress {
		assert.True(t, f >= 0 && f <= 1, "progress fraction %v", f)
	}
}

func TestRunRejectsBadRequests(t *testing.T) {
	c, _ := serve(t, Policy{ScratchDir: t.TempDir(), BlockDevices: []string{"/dev/vdb"}})
	cases := []struct {
		req  *agentpb.RunRequest
		code codes.Code
		msg  string
	}{
		{&agentpb.RunRequest{Workload: "shell", Qos: 21, Threads: 1, Loops: 1}, codes.InvalidArgument, `unknown workload "shell"`},
		{&agentpb.RunRequest{Workload: "fp", Qos: 10, Threads: 1, Loops: 1}, codes.InvalidArgument, "unknown QoS class 10"},
		{&agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 0, Loops: 1}, codes.InvalidArgument, "0 threads: allowed 1..1024"},
		{&agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 5000, Loops: 1}, codes.InvalidArgument, "5000 threads"},
		{&agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 1, Loops: 0}, codes.InvalidArgument, "0 loops"},
		{&agentpb.RunRequest{Workload: "compress", Qos: 21, Threads: 1, SizeBytes: 1 << 20, Sink: "file", SinkPath: "/etc"}, codes.PermissionDenied, "outside the agent's scratch directory"},
		{&agentpb.RunRequest{Workload: "compress", Qos: 21, Threads: 1, SizeBytes: 1 << 20, Sink: "file", SinkPath: "../../etc"}, codes.PermissionDenied, "outside the agent's scratch directory"},
		{&agentpb.RunRequest{Workload: "compress", Qos: 21, Threads: 1, SizeBytes: 1 << 20, Sink: "block", SinkPath: "/dev/sda"}, codes.PermissionDenied, `block sink "/dev/sda" not allowed`},
	}
	for _, tc := range cases {
		_, err := c.Run(ctx(t), tc.req, nil)
		require.Error(t, err, tc.msg)
		assert.Equal(t, tc.code, codeOf(err), err.Error())
		assert.Contains(t, err.Error(), tc.msg)
	}
}

func TestRunCompressInScratch(t *testing.T) {
	scratch := t.TempDir()
	c, _ := serve(t, Policy{ScratchDir: scratch})
	res, err := c.Run(ctx(t), &agentpb.RunRequest{Workload: "compress", Qos: 21, Threads: 1, SizeBytes: 1 << 20, Seed: 1}, nil)
	require.NoError(t, err, "file is the default sink and the scratch directory its default place")
	require.Len(t, res.GetRecords(), 1)
	assert.Equal(t, "compress", res.GetRecords()[0].GetPhase())
	assert.Equal(t, 1.0, res.GetMetrics()["verified"])
	assert.Equal(t, "bytes", res.GetUnit())
}

func TestRefusedErrorsReadWell(t *testing.T) {
	c, _ := serve(t, Policy{})
	_, err := c.Run(ctx(t), &agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 0, Loops: 1}, nil)
	require.Error(t, err)
	assert.Equal(t, "agent refused: 0 threads: allowed 1..1024", err.Error())
	assert.True(t, IsBadRequest(err))
}

func TestRequestSizeLimited(t *testing.T) {
	c, _ := serve(t, Policy{})
	_, err := c.Run(ctx(t), &agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 1, Loops: 1, Codec: strings.Repeat("x", maxRequestBytes)}, nil)
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, codeOf(err))
}

func TestOneCellAtATime(t *testing.T) {
	c, _ := serve(t, Policy{})
	started := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx(t), &agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 1, Loops: 1 << 40, ProgressIntervalMs: 50},
			func(*agentpb.Progress) {
				select {
				case started <- struct{}{}:
				default:
				}
			})
		done <- err
	}()
	<-started
	_, err := c.Run(ctx(t), &agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 1, Loops: 1}, nil)
	assert.Equal(t, codes.Unavailable, codeOf(err))
	assert.Contains(t, err.Error(), "busy")
	// Cancelling the long cell from the client stops it in the agent.
	require.NoError(t, c.Shutdown(ctx(t)))
}

func TestCancelStopsCell(t *testing.T) {
	c, _ := serve(t, Policy{})
	cctx, cancel := context.WithCancel(ctx(t))
	began := time.Now()
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	_, err := c.Run(cctx, &agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 1, Loops: 1 << 40}, nil)
	require.Error(t, err)
	assert.Equal(t, codes.Canceled, codeOf(err))
	// The agent is free again: the cancelled cell's threads stopped.
	require.Eventually(t, func() bool {
		_, err := c.Run(ctx(t), &agentpb.RunRequest{Workload: "fp", Qos: 21, Threads: 1, Loops: 1}, nil)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	assert.Less(t, time.Since(began), 10*time.Second)
}
