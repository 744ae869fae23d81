// Package agent is the qoslab agent protocol: the gRPC server that measures on a
// target, and the client the controller drives it with.
package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/qos"
	"github.com/qoslab/qoslab/internal/telemetry"
	"github.com/qoslab/qoslab/internal/version"
	"github.com/qoslab/qoslab/internal/workload"
	"github.com/qoslab/qoslab/internal/workload/catalog"
	"github.com/qoslab/qoslab/internal/workload/codec"
	"github.com/qoslab/qoslab/internal/workload/kernel"
)

// maxRequestBytes bounds any message the agent accepts.
const maxRequestBytes = 64 << 10

// Policy is what the agent's launcher allows requests to touch; no request can
// widen it.
type Policy struct {
	// ScratchDir is the only directory file sinks may write in.
	ScratchDir string
	// BlockDevices are the raw devices a block sink may write to.
	BlockDevices []string
	// Token, when set, must come with every request (tokenHeader): an
	// agent listening on TCP requires it; TokenFile says where it is.
	Token, TokenFile string
}

// Server measures cells, one at a time.
type Server struct {
	agentpb.UnimplementedAgentServer
	policy   Policy
	running  sync.Mutex
	shutdown func()

	// newProbe makes the telemetry probe (telemetry.NewLocalProbe unless a
	// test sets it); probe is made on first use and kept.
	newProbe func(context.Context, time.Duration) (telemetry.Probe, error)
	probeMu  sync.Mutex
	probe    telemetry.Probe
	probeErr error
}

// NewServer returns an agent that serves within policy; shutdown is called
// once after a Shutdown request has been answered.
func NewServer(policy Policy, shutdown func()) *Server {
	return &Server{policy: policy, shutdown: shutdown}
}

// Close releases what the agent holds between cells (the telemetry probe;
// for powermetrics, a child process). The server still answers afterwards.
func (s *Server) Close() { s.closeProbe() }

// GRPCServer returns a gRPC server with the agent registered and its limits set.
func (s *Server) GRPCServer() *grpc.Server {
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxRequestBytes), grpc.MaxConcurrentStreams(8)}
	if s.policy.Token != "" {
		opts = append(opts, tokenInterceptors(s.policy.Token, s.policy.TokenFile)...)
	}
	g := grpc.NewServer(opts...)
	agentpb.RegisterAgentServer(g, s)
	return g
}

func checkProtocol(p *agentpb.ProtocolVersion) error {
	if p.GetMajor() != version.ProtocolMajor {
		return status.Errorf(codes.FailedPrecondition, "protocol %d.%d not supported: this agent (%s) speaks %d.x; use a controller and agent from the same release",
			p.GetMajor(), p.GetMinor(), version.String(), version.ProtocolMajor)
	}
	return nil
}

// Info describes this machine and agent.
func (s *Server) Info(ctx context.Context, req *agentpb.InfoRequest) (*agentpb.InfoReply, error) {
	if err := checkProtocol(req.GetProtocol()); err != nil {
		return nil, err
	}
	r := &agentpb.InfoReply{
		AgentVersion: version.String(),
		Protocol:     &agentpb.ProtocolVersion{Major: version.ProtocolMajor, Minor: version.ProtocolMinor},
		Os:           runtime.GOOS,
		Arch:         runtime.GOARCH,
		LogicalCpus:  uint32(runtime.NumCPU()),
		QosSupport:   qos.Support(),
		Workloads:    catalog.Names(),
		Codecs:       codec.Codecs(),
		MmulImpl:     kernel.MMulImpl(),
		Pid:          int32(os.Getpid()),
		MaxThreads:   catalog.MaxThreads,
	}
	r.Hostname, _ = os.Hostname()
	describeMachine(r)
	return r, nil
}

// checkRequest is req's workload parameters with their defaults, the
// sink placed by the agent's policy, checked as a whole; a gRPC status
// error naming what is wrong otherwise.
func (s *Server) checkRequest(req *agentpb.RunRequest) (workload.Params, error) {
	p := paramsFromRequest(req).WithDefaults()
	if _, err := catalog.Get(p.Workload); err != nil {
		return p, status.Error(codes.InvalidArgument, err.Error())
	}
	// The sink's place comes from the agent's policy before the request is
	// checked as a whole (a file sink needs its directory).
	var err error
	if p.SinkPath, err = s.sinkPath(p); err != nil {
		return p, status.Error(codes.PermissionDenied, err.Error())
	}
	if p.Sink == catalog.SinkFile && catalog.IsCompression(p.Workload) {
		// The path's text is inside the scratch directory; the root
		// makes sure the files are too, whatever symlinks it holds.
		p.SinkRoot = s.policy.ScratchDir
	}
	if err := p.Validate(); err != nil {
		return p, status.Error(codes.InvalidArgument, err.Error())
	}
	return p, nil
}

// Run measures one cell, streaming progress when asked and then the result.
// A failed cell still sends what finished before the error.
func (s *Server) Run(req *agentpb.RunRequest, stream agentpb.Agent_RunServer) error {
	trace := newCallTrace(req.GetTrace(), workload.MonoNow())
	if err := checkProtocol(req.GetProtocol()); err != nil {
		return err
	}
	p, err := s.checkRequest(req)
	if err != nil {
		return err
	}
	if !s.running.TryLock() {
		return status.Error(codes.Unavailable, "agent busy: it measures one cell at a time")
	}
	defer s.running.Unlock()

	ctx := stream.Context()
	prog := &workload.Progress{}
	type outcome struct {
		res workload.Result
		err error
		// returned is when workload.Run returned (the trace's clock).
		returned int64
	}
	done := make(chan outcome, 1)
	trace.step(traceValidate)
	tel := s.startTelemetry(ctx, req, prog)
	trace.step(traceTelStart)
	began := time.Now()
	go func() {
		res, err := workload.Run(ctx, p, prog)
		done <- outcome{res, err, workload.MonoNow()}
	}()

	var tick <-chan time.Time
	if ms := req.GetProgressIntervalMs(); ms > 0 {
		t := time.NewTicker(time.Duration(max(ms, 50)) * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
			ev := &agentpb.RunEvent{Event: &agentpb.RunEvent_Progress{Progress: &agentpb.Progress{
				Fraction: prog.Fraction(), ElapsedNs: time.Since(began).Nanoseconds()}}}
			if err := stream.Send(ev); err != nil {
				<-done
				return err
			}
		case o := <-done:
			trace.workload(prog.Phases(), o.returned)
			events := tel.finish(prog)
			trace.step(traceTelStop)
			for _, ev := range events {
				if err := stream.Send(&agentpb.RunEvent{Event: &agentpb.RunEvent_Telemetry{Telemetry: ev}}); err != nil {
					return err
				}
			}
			trace.step(traceTelSend)
			res := resultToProto(p.Workload, o.res)
			res.TraceNs = trace.result()
			if err := stream.Send(&agentpb.RunEvent{Event: &agentpb.RunEvent_Result{Result: res}}); err != nil {
				return err
			}
			if o.err != nil {
				if ctx.Err() != nil {
					return status.FromContextError(ctx.Err()).Err()
				}
				return status.Error(codes.Aborted, o.err.Error())
			}
			return nil
		}
	}
}

// sinkPath resolves where a file or block sink may write, within policy.
func (s *Server) sinkPath(p workload.Params) (string, error) {
	if !catalog.IsCompression(p.Workload) {
		return "", nil
	}
	switch p.Sink {
	case "file":
		if s.policy.ScratchDir == "" {
			return "", fmt.Errorf("file sink: this agent was started without a scratch directory (--scratch)")
		}
		if p.SinkPath == "" {
			return s.policy.ScratchDir, nil
		}
		dir := filepath.Clean(filepath.Join(s.policy.ScratchDir, p.SinkPath))
		if filepath.IsAbs(p.SinkPath) {
			dir = filepath.Clean(p.SinkPath)
		}
		scratch := filepath.Clean(s.policy.ScratchDir)
		if dir != scratch && !strings.HasPrefix(dir, scratch+string(filepath.Separator)) {
			return "", fmt.Errorf("file sink %q is outside the agent's scratch directory %s", p.SinkPath, scratch)
		}
		return dir, nil
	case "block":
		for _, d := range s.policy.BlockDevices {
			if p.SinkPath == d {
				return d, nil
			}
		}
		return "", fmt.Errorf("block sink %q not allowed: this agent allows %v (start it with --allow-block DEVICE)", p.SinkPath, s.policy.BlockDevices)
	}
	return p.SinkPath, nil
}

// Shutdown answers, then stops the agent.
func (s *Server) Shutdown(ctx context.Context, req *agentpb.ShutdownRequest) (*agentpb.ShutdownReply, error) {
	s.Close()
	if s.shutdown != nil {
		// After the reply is on its way: GracefulStop waits for this RPC to finish.
		go s.shutdown()
	}
	return &agentpb.ShutdownReply{}, nil
}
