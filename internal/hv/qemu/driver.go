package qemu

import "github.com/qoslab/qoslab/internal/hv"

// Name is the backend's name.
const Name = "qemu"

// models are the device models the backend lays a VM out as, its own
// first.
var models = []string{hv.ModelDefault, hv.ModelVZ}

// Driver is the backend as it registers itself (hv/registry): Linux guests;
// KVM or TCG on Linux, hvf on macOS; its own layout or the vz model.
func Driver() hv.Driver {
	return hv.Driver{
		Name:   Name,
		Accels: []string{accelKVM, AccelTCG, accelHVF},
		Models: []hv.Model{{
			Name: hv.ModelVZ,
			Is:   "the qemu backend's emulation of Virtualization.framework's devices",
			Help: "boots an arm64 image on qemu laid out as Virtualization.framework lays it out (virtio console, no UART, no virtio-serial, the agent over vsock through vhost-device-vsock): a test of the guest a Mac boots, not a Mac",
		}},
		New: func(o hv.DriverOptions) hv.Backend {
			return New(Options{CacheDir: o.CacheDir, VhostVsockDirs: o.VhostVsockDirs})
		},
	}
}
