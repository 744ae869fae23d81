package vz

import (
	"fmt"
	"net"
)

// devices is a plan device by device, as the framework is given it: which
// devices the guest gets, in which order, and with what. The darwin code
// only turns each into its vz object.
type devices struct {
	// macOS: the macOS boot loader, the bundle's platform and a display;
	// else the Linux boot loader with the plan's kernel.
	macOS bool
	// disks are the block devices in the guest's order: a macOS guest's
	// boot disk, then the scratch disk.
	disks []disk
	// mac is the NAT network device's address; nil for no network.
	mac net.HardwareAddr
	// console is the file the virtio console writes; "" for none.
	console string
}

// disk is a virtio block device on a raw disk image.
type disk struct {
	path    string
	caching string // cachingAutomatic or cachingUncached
}

// planDevices lays out p's devices. Every VM also gets an entropy device
// and the one virtio socket device the agent is reached through.
func planDevices(p plan) (devices, error) {
	var d devices
	switch p.Kind {
	case GuestMacOS:
		d.macOS = true
		d.disks = append(d.disks, disk{p.BootDisk, cachingAutomatic})
	case guestLinux:
	default:
		return d, fmt.Errorf("plan for a %q guest", p.Kind)
	}
	if p.ScratchDisk != "" {
		d.disks = append(d.disks, disk{p.ScratchDisk, p.ScratchCaching})
	}
	if p.NAT {
		// The bundle's own, so that the guest sees the same NIC every boot.
		mac, err := net.ParseMAC(p.MACAddress)
		if err != nil {
			return d, fmt.Errorf("MAC address %q of the plan: %w", p.MACAddress, err)
		}
		d.mac = mac
	}
	d.console = p.ConsoleLog
	return d, nil
}
