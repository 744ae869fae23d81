package hv

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The guest operating systems a backend boots (Image.OS).
const (
	OSLinux = "linux"
	OSMacOS = "macos"
)

// GuestOS is the operating system the image boots: OSLinux unless it says
// otherwise (a Linux image's manifest names none).
func (i Image) GuestOS() string {
	if i.OS == "" {
		return OSLinux
	}
	return i.OS
}

// AccelTCG is the accelerator name of an emulated guest (QEMU's TCG).
const AccelTCG = "tcg"

// How long a guest may take, from its hypervisor's start to its agent's
// first answer, before it is stopped (DefaultBootTimeout).
const (
	// bootTimeoutEmulated: an emulated guest (TCG) boots in seconds to a
	// minute on a busy 2-CPU machine.
	bootTimeoutEmulated = 5 * time.Minute
	// bootTimeoutMacOS: a macOS guest reaches its LaunchDaemons in well
	// under a minute, but its first boot after the install (or an update)
	// takes minutes.
	bootTimeoutMacOS = 5 * time.Minute
	// bootTimeoutOther: a Linux guest on KVM, hvf or Virtualization.framework
	// answers in seconds.
	bootTimeoutOther = 90 * time.Second
)

// DefaultBootTimeout is the one place that decides how long a VM may take
// to boot, from its hypervisor's start to its agent's first answer, before
// qoslab gives up on it (--boot-timeout overrides it): by how the backend
// runs the guest (m.Accel: AccelTCG emulating, kvm, hvf, or vz for
// Virtualization.framework) and the guest's operating system (m.Image). A guest stopped or hung at boot would
// otherwise be waited for forever; a guest given too little is stopped
// half way, as a first macOS boot would be at 90 s.
func DefaultBootTimeout(m MachineInfo) time.Duration {
	switch {
	case m.Accel == AccelTCG:
		return bootTimeoutEmulated
	case m.Image.GuestOS() == OSMacOS:
		return bootTimeoutMacOS
	}
	return bootTimeoutOther
}

// AwaitReady is how every backend's Start waits for its guest: it runs
// ready (Spec.Ready) until it returns nil, ctx ends, or m ends, whose end
// cancels ready's context. When m ended, the error says so, what naming
// what ended as the user knows it ("qemu", "the VM"), wrapping why it
// ended; else it is ready's.
func AwaitReady(ctx context.Context, m Machine, ready func(context.Context, Machine) error, what string) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-m.Done():
			cancel()
		case <-rctx.Done():
		}
	}()
	err := ready(rctx, m)
	if err == nil {
		return nil
	}
	select {
	case <-m.Done():
		if end := m.Err(); end != nil {
			return fmt.Errorf("%s ended before the agent answered: %w", what, end)
		}
		return errors.New(what + " ended before the agent answered")
	default:
	}
	return err
}
