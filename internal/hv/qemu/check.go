package qemu

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/qoslab/qoslab/internal/hv"
)

// Check reports what the backend needs on this host, for `qoslab doctor`:
// the emulators (the one for this host's architecture is required), the
// accelerator, and vsock.
func (b *Backend) Check(ctx context.Context) []hv.Check {
	var checks []hv.Check
	for _, arch := range []string{"amd64", "arm64"} {
		name := b.binaryName(arch)
		c := hv.Check{Name: name}
		path, version, err := b.findQEMU(ctx, arch)
		switch {
		case err == nil:
			c.OK, c.Detail = true, fmt.Sprintf("%s: %s", path, version)
		case arch == runtime.GOARCH:
			c.Detail, c.Fix = err.Error(), installHint(arch)
		default:
			// Only needed to emulate the other architecture's images.
			c.OK, c.Absent = true, true
			c.Detail = fmt.Sprintf("not installed; needed only to emulate %s images (slowly, with TCG)", arch)
			c.Fix = installHint(arch)
		}
		checks = append(checks, c)
	}

	// Nothing in qoslab runs qemu-img: it is listed so that nobody
	// installs it thinking a run needs it.
	img := hv.Check{Name: "qemu-img", OK: true}
	if path, err := exec.LookPath("qemu-img"); err == nil {
		img.Detail = path + " (not needed: qoslab makes its raw disks itself)"
	} else {
		img.Absent = true
		img.Detail = "not installed; nothing in qoslab needs it (qoslab makes its raw disks itself): only for looking at disk images by hand"
	}
	checks = append(checks, img)

	switch runtime.GOOS {
	case "linux":
		checks = append(checks, b.kvmChecks(time.Now())...)
		vsock := hv.Check{Name: vhostVsockDevice, OK: true}
		if problem := vhostVsockProblem(); problem == "" {
			vsock.Detail = "the agent is reached over vsock, or virtio-serial if the guest has no vsock"
		} else {
			vsock.Absent = true
			vsock.Detail = problem + " (optional: the agent is reached over virtio-serial instead)"
			vsock.Fix = "sudo modprobe vhost_vsock"
		}
		checks = append(checks, vsock, b.vhostVsockCheck(ctx))
	case "darwin":
		hvf := hv.Check{Name: "hvf", OK: true, Detail: "Hypervisor.framework is available"}
		if problem := hvfProblem(); problem != "" {
			hvf = hv.Check{Name: "hvf", Detail: problem + "; QEMU will use TCG, which is slower"}
		}
		checks = append(checks, hvf)
	}
	return checks
}

// kvmChecks: /dev/kvm, and what the last probe boot found.
func (b *Backend) kvmChecks(now time.Time) []hv.Check {
	dev := hv.Check{Name: kvmDevice}
	if problem := kvmProblem(); problem != "" {
		dev.Detail = problem + "; QEMU will use TCG, which is slower"
		dev.Fix = kvmFix(problem)
		return []hv.Check{dev}
	}
	dev.OK, dev.Detail = true, "present and accessible"
	return []hv.Check{dev, probeCheck(b.failuresFile(), now)}
}

// probeCheck says what the failed KVM probes remembered in file (""
// for no cache directory) mean for the next start.
func probeCheck(file string, now time.Time) hv.Check {
	probe := hv.Check{Name: "KVM probe", OK: true, Detail: "no failed probe remembered; the next start probes KVM"}
	if file == "" {
		probe.Detail = "no cache directory: every start probes KVM"
		return probe
	}
	failures, err := readProbeFailures(file)
	if err != nil {
		probe.Detail = err.Error()
	}
	if f, ok := failures.latest(now); ok {
		// KVM is there but a guest does not boot on it (a nested or
		// paravirtual KVM that the guest kernel cannot run on): runs use
		// TCG and go on, so this is a warning, not a thing missing.
		probe.Warn = true
		probe.Detail = fmt.Sprintf("KVM is present but unusable here: a probe boot failed at %s (%s); TCG will be used until %s",
			f.At.Local().Format(time.DateTime), rewordAbort(f.Reason), f.At.Add(probeFailureTTL).Local().Format(time.DateTime))
		probe.Fix = "rm " + file + "  (to probe again), or --accel kvm to force KVM"
	}
	return probe
}

// oldAbortWording is how qoslab before signalCause worded QEMU's own abort
// in the failures it remembered (for up to probeFailureTTL).
const oldAbortWording = "died of signal 6 (aborted), sent from outside qoslab"

// rewordAbort says a remembered reason as signalCause would: an abort is
// QEMU's own end, not a signal sent from outside.
func rewordAbort(reason string) string {
	return strings.ReplaceAll(reason, oldAbortWording, "died of signal 6 (aborted): QEMU aborted itself, not a signal from outside")
}

// vhostVsockCheck: the vz model's vsock daemon, needed by --vm-model vz
// only.
func (b *Backend) vhostVsockCheck(ctx context.Context) hv.Check {
	c := hv.Check{Name: VhostVsockName, OK: true}
	path, version, err := b.FindVhostVsock(ctx)
	if err != nil {
		c.Absent = true
		c.Detail = err.Error() + " (needed only for --vm-model vz)"
		c.Fix = vhostVsockInstall
		return c
	}
	c.Detail = fmt.Sprintf("%s: %s %s, for --vm-model vz (Virtualization.framework's device model under QEMU)", path, VhostVsockName, version)
	if note := versionNote(version); note != "" {
		c.Detail += "; " + note
		c.Fix = vhostVsockInstall
	}
	return c
}
