package vz

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"time"
)

// AgentStop asks the agent at the other end of c to power the guest off,
// returning once the agent has answered, and closes c.
type AgentStop func(ctx context.Context, c net.Conn) error

// agentStopReach bounds reaching a guest's agent to ask it to power off,
// from connecting to its answer: a running agent answers at once; a guest
// already going down (its agent asked by the controller a moment before)
// may end meanwhile, which stops the wait.
const agentStopReach = 10 * time.Second

// stopBound is the longest a host takes to stop p's VM: every step of
// stopInstance given its whole time.
func stopBound(p plan) time.Duration { return agentStopReach + p.StopTimeout + forceStopTimeout }

// stopTimes are how long each step of a stop may take.
type stopTimes struct {
	reach time.Duration // to reach the guest's agent and have its answer
	grace time.Duration // for the guest to power off once asked
	force time.Duration // for a forced stop
}

// stopInstance powers inst off, in this order, each step only when the one
// before did not end the VM:
//
//  1. through the guest's agent (agentStop over a connection to its port,
//     within times.reach): a macOS guest's agent runs shutdown(8), a Linux
//     guest's (init) powers off. Once the agent has answered, the guest has
//     times.grace to go down, and then is stopped by force: it is already
//     on its way down, and the power button would open a dialog in macOS.
//  2. the power button, only when the agent could not be reached or
//     refused (or agentStop is nil), with times.grace;
//  3. a forced stop, given times.force even when ctx has ended.
//
// When ctx ends, the step under way is cut short and the VM is stopped by
// force.
func stopInstance(ctx context.Context, inst instance, port uint32, agentStop AgentStop, times stopTimes, logger *log.Logger) error {
	if ended(inst) {
		return nil
	}
	asked := false
	if agentStop != nil && ctx.Err() == nil {
		err := stopThroughAgent(ctx, inst, port, agentStop, times.reach)
		switch {
		case ended(inst):
			return nil
		case err == nil:
			asked = true
			logger.Printf("asked the guest's agent to power the guest off")
		default:
			logger.Printf("the guest's agent cannot be asked to power off (%v): pressing the power button", err)
		}
	}
	if !asked {
		if err := inst.RequestStop(); err != nil {
			logger.Printf("the guest cannot be asked to power off (%v): stopping it by force", err)
			return forceStop(ctx, inst, times.force)
		}
	}
	t := time.NewTimer(times.grace)
	defer t.Stop()
	select {
	case <-inst.Done():
		return nil
	case <-t.C:
		logger.Printf("the guest did not power off within %s: stopping it by force", times.grace)
	case <-ctx.Done():
		logger.Printf("no more time for the guest to power off (%v): stopping it by force", ctx.Err())
	}
	return forceStop(ctx, inst, times.force)
}

// stopThroughAgent connects to the agent's port, retrying within reach,
// and has agentStop ask it to power the guest off. It gives up as soon as
// the VM ends.
func stopThroughAgent(ctx context.Context, inst instance, port uint32, agentStop AgentStop, reach time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, reach)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-inst.Done():
			cancel()
		case <-stop:
		}
	}()
	c, err := connectRetry(ctx, func(ctx context.Context) (net.Conn, error) { return inst.Connect(ctx, port) })
	if err != nil {
		return fmt.Errorf("no agent on vsock port %d: %w", port, err)
	}
	defer c.Close()
	if err := agentStop(ctx, c); err != nil {
		return fmt.Errorf("the agent on vsock port %d: %w", port, err)
	}
	return nil
}

// forceStop stops inst by force, with force to do it whether or not ctx
// has ended: a forced stop is prompt, and must not be cut short.
func forceStop(ctx context.Context, inst instance, force time.Duration) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), force)
	defer cancel()
	ferr := inst.ForceStop(fctx)
	select {
	case <-inst.Done():
		return nil
	case <-fctx.Done():
	}
	if ferr != nil {
		return fmt.Errorf("forced stop: %w", ferr)
	}
	return errors.New("the VM is still running " + force.String() + " after a forced stop")
}

// ended reports whether inst has stopped.
func ended(inst instance) bool {
	select {
	case <-inst.Done():
		return true
	default:
		return false
	}
}
