package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/agent/agentpb"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/spec"
	"github.com/qoslab/qoslab/internal/workload/catalog"
)

// Target is an agent that measures cells: the host's, or one in a VM.
type Target interface {
	Info(ctx context.Context) (*agentpb.InfoReply, error)
	Run(ctx context.Context, req *agentpb.RunRequest, onProgress func(*agentpb.Progress)) (*agentpb.Result, error)
	// Close stops the agent, and the VM when the run booted it.
	Close() error
}

// inVM is a Target inside a VM, which the host sees as a machine.
type inVM interface {
	Target
	Machine() hv.MachineInfo
}

// hostAgentOptions starts the host's agent so that it may write where the
// spec's sinks point: a file sink's directory becomes its scratch
// directory, a block sink's device is allowed.
func hostAgentOptions(path string, s spec.Spec, stderr io.Writer) agent.LocalOptions {
	o := agent.LocalOptions{Path: path, Stderr: stderr}
	for _, e := range s.Matrix {
		switch {
		case e.Sink == catalog.SinkFile && e.SinkPath != "" && o.ScratchDir == "":
			o.ScratchDir = e.SinkPath
		case e.Sink == catalog.SinkBlock && e.SinkPath != "":
			o.BlockDevices = append(o.BlockDevices, e.SinkPath)
		}
	}
	return o
}

// StartHostAgent runs the agent binary (path, or the one next to qoslab when
// empty) as a child of this process, able to write where s's sinks point.
func StartHostAgent(ctx context.Context, path string, s spec.Spec, stderr io.Writer) (Target, error) {
	p, err := agent.FindAgent(path)
	if err != nil {
		return nil, err
	}
	return agent.StartLocal(ctx, hostAgentOptions(p, s, stderr))
}

// vmTarget is the agent inside a VM, and the VM itself when this run booted
// it.
type vmTarget struct {
	*agent.Client
	machine hv.Machine
	owned   bool   // booted for this run: stopped with it
	dir     string // state directory to remove after an owned VM stopped
	// keepConsole is where the console log goes before dir is removed.
	keepConsole string
}

func (a *vmTarget) Machine() hv.MachineInfo { return a.machine.Info() }

// Run maps the host's notion of a file sink onto the VM's raw scratch disk:
// in the guest, files live in RAM (tmpfs), and the point of the VM's sink is
// that its writes go through the virtual disk.
func (a *vmTarget) Run(ctx context.Context, req *agentpb.RunRequest, onProgress func(*agentpb.Progress)) (*agentpb.Result, error) {
	var note string
	if req.Sink == catalog.SinkFile {
		info := a.machine.Info()
		switch {
		case info.GuestDisk != "":
			req.Sink, req.SinkPath = catalog.SinkBlock, info.GuestDisk
			note = fmt.Sprintf("vm: sink file applied as block %s, the VM's raw scratch disk (%s on the host)", info.GuestDisk, info.Disk)
		case info.Image.Kernel == "":
			// A macOS guest: its agent's scratch directory is on the guest's own disk.
			note = "vm: sink file on the guest's own disk (a macOS guest's boot volume)"
		default:
			return nil, fmt.Errorf("vm %s has no scratch disk for the file sink and its files live in RAM: give it one with --disk, or use --sink null", info.Name)
		}
	}
	res, err := a.Client.Run(ctx, req, onProgress)
	if res != nil && note != "" {
		res.Notes = append(res.Notes, note)
	}
	return res, err
}

// Close powers the guest off and stops the VM when this run booted it; a
// named VM keeps running.
func (a *vmTarget) Close() error {
	if !a.owned {
		return a.Client.Close()
	}
	err := guestvm.Stop(a.Client, a.machine)
	if a.dir != "" {
		if rerr := releaseStateDir(a.dir, a.keepConsole, a.machine.Info().Name); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}
