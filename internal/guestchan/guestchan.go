// Package guestchan names what the controller, the guest image, the guest's
// init and every hypervisor backend must agree on to reach the agent in a
// guest (the virtio-serial port, the vsock port, the init configuration's
// path, the scratch disk) and builds the kernel command line of a Linux
// guest laid out as Virtualization.framework lays it out.
package guestchan

import (
	"fmt"
	"strings"
)

const (
	// PortName is the virtio-serial port the host connects the agent's
	// channel to (found in a Linux guest under /sys/class/virtio-ports).
	PortName = "org.qoslab.agent"
	// VsockPort is the vsock port the agent listens on in a guest: a Linux
	// guest's init and a macOS guest's LaunchDaemon alike.
	VsockPort = 1024
	// ConfigPath is where the image puts the init configuration inside a
	// Linux guest's initramfs.
	ConfigPath = "/etc/qoslab/init.json"
	// ScratchDisk is where the VM's raw scratch disk, the compression
	// workloads' sink, appears in a Linux guest: the only virtio-blk
	// device, so the first.
	ScratchDisk = "/dev/vda"
	// ListenParam names, on a Linux guest's kernel command line, the
	// agent's channels the VM has ("qoslab.listen=vsock:1024"; several are
	// separated by commas), in place of the image's list: a backend that
	// knows its devices says so, and the guest waits for no channel it
	// lacks. The kernel leaves a parameter with a dot in its name to /proc/cmdline.
	ListenParam = "qoslab.listen"
	// ServingMark is in the line the guest's agent writes to the console
	// once it listens on its channels ("qoslab-agent: VERSION serving on
	// ADDR, ..."): the guest's devices are set up by then.
	ServingMark = " serving on "
	// vzConsole is the console of a Linux guest on Virtualization.framework:
	// its virtio console device (VZVirtioConsoleDeviceSerialPortConfiguration),
	// hvc0. The framework gives no UART.
	vzConsole = "hvc0"
)

// VZLinuxCmdline is the kernel command line of a Linux guest laid out as
// the vz backend lays it out, from the image's: every console= of the image
// is dropped (it names QEMU's UART, which vz does not have), the virtio
// console is the only console, and the agent's only channel is vsock. The
// vz backend boots it, and the qemu backend's vz model emulates it, so the
// two cannot drift apart.
func VZLinuxCmdline(image string) string {
	var fields []string
	for _, f := range strings.Fields(image) {
		if strings.HasPrefix(f, "console=") || strings.HasPrefix(f, ListenParam+"=") {
			continue
		}
		fields = append(fields, f)
	}
	fields = append(fields, "console="+vzConsole, fmt.Sprintf("%s=vsock:%d", ListenParam, VsockPort))
	return strings.Join(fields, " ")
}

// ListenFromCmdline returns the channels the kernel command line names with
// ListenParam (the last one counts, as the kernel's own parameters do), and
// whether it names any.
func ListenFromCmdline(cmdline string) ([]string, bool) {
	var listen []string
	found := false
	for _, f := range strings.Fields(cmdline) {
		v, ok := strings.CutPrefix(f, ListenParam+"=")
		if !ok {
			continue
		}
		found = true
		listen = nil
		for _, ch := range strings.Split(v, ",") {
			if ch != "" {
				listen = append(listen, ch)
			}
		}
	}
	return listen, found
}
