// Package guestchan names what the controller, the guest image, the guest's
// init and every hypervisor backend must agree on to reach the agent in a
// guest: the virtio-serial port, the vsock port, the init configuration's
// path and the scratch disk.
package guestchan

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
)
