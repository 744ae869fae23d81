package qemu

import (
	"fmt"
	"time"
)

// accelHost is what the accelerator choice depends on, gathered from the
// host so that the choice itself is a pure function.
type accelHost struct {
	GOOS, GOARCH string
	KVMProblem   string // "" when /dev/kvm can be opened
	KVMFix       string // what to do about KVMProblem
	HVFProblem   string // "" when Hypervisor.framework is there
	// KVMFailure is a remembered failed probe for this QEMU and kernel.
	KVMFailure   *probeFailure
	FailuresFile string
	// CanProbe: the spec has a Ready function to tell a boot that reached
	// the agent from one that hangs.
	CanProbe bool
}

// accelPlan is how to boot: with Accel, or (Probe) with KVM under the
// probe timeout and then with TCG.
type accelPlan struct {
	Accel string
	Probe bool
	// Note is what the user should be told before booting, "" for nothing.
	Note string
}

// slowTCG is the tail of every message that falls back to TCG.
const slowTCG = "using TCG, which is slower. Force with --accel kvm|tcg."

// planAccel chooses the accelerator for an image of imageArch. A forced
// one is checked and used without fallback; "" takes the best this host
// has, which on Linux means a KVM probe unless KVM is known not to work.
func planAccel(requested, imageArch string, h accelHost) (accelPlan, error) {
	native := imageArch == h.GOARCH
	switch requested {
	case AccelTCG:
		return accelPlan{Accel: AccelTCG}, nil
	case accelKVM:
		if h.GOOS != "linux" {
			return accelPlan{}, fmt.Errorf("accelerator kvm: KVM exists only on Linux; on macOS use hvf, or tcg")
		}
		if !native {
			return accelPlan{}, fmt.Errorf("accelerator kvm: KVM runs only guests of the host's architecture (host %s, image %s); use --accel tcg", h.GOARCH, imageArch)
		}
		if h.KVMProblem != "" {
			return accelPlan{}, fmt.Errorf("accelerator kvm: %s; fix: %s; or use --accel tcg", h.KVMProblem, h.KVMFix)
		}
		return accelPlan{Accel: accelKVM}, nil
	case accelHVF:
		if h.GOOS != "darwin" {
			return accelPlan{}, fmt.Errorf("accelerator hvf: Hypervisor.framework exists only on macOS; on Linux use kvm, or tcg")
		}
		if !native {
			return accelPlan{}, fmt.Errorf("accelerator hvf: hvf runs only guests of the host's architecture (host %s, image %s); use --accel tcg", h.GOARCH, imageArch)
		}
		if h.HVFProblem != "" {
			return accelPlan{}, fmt.Errorf("accelerator hvf: %s; use --accel tcg", h.HVFProblem)
		}
		return accelPlan{Accel: accelHVF}, nil
	case "":
	default:
		return accelPlan{}, fmt.Errorf("accelerator %q: want kvm, tcg, hvf, or none to let qoslab choose", requested)
	}

	if !native {
		return accelPlan{Accel: AccelTCG, Note: fmt.Sprintf("The image is %s and this host %s: emulating every instruction with TCG, which is much slower.", imageArch, h.GOARCH)}, nil
	}
	switch h.GOOS {
	case "linux":
		switch {
		case h.KVMProblem != "":
			return accelPlan{Accel: AccelTCG, Note: fmt.Sprintf("No usable KVM (%s); %s", h.KVMProblem, slowTCG)}, nil
		case h.KVMFailure != nil:
			f := h.KVMFailure
			return accelPlan{Accel: AccelTCG, Note: fmt.Sprintf(
				"KVM probe failed at %s (%s); %s The verdict is kept in %s until %s; delete that file to probe again.",
				f.At.Local().Format(time.DateTime), f.Reason, slowTCG, h.FailuresFile, f.At.Add(probeFailureTTL).Local().Format(time.DateTime))}, nil
		case !h.CanProbe:
			// Nothing can tell a hung KVM boot from a slow one: trust KVM.
			return accelPlan{Accel: accelKVM}, nil
		default:
			return accelPlan{Accel: accelKVM, Probe: true}, nil
		}
	case "darwin":
		if h.HVFProblem != "" {
			return accelPlan{Accel: AccelTCG, Note: fmt.Sprintf("No Hypervisor.framework (%s); %s", h.HVFProblem, slowTCG)}, nil
		}
		return accelPlan{Accel: accelHVF}, nil
	default:
		return accelPlan{Accel: AccelTCG, Note: fmt.Sprintf("No hardware acceleration for QEMU on %s; %s", h.GOOS, slowTCG)}, nil
	}
}
