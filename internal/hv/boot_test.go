package hv

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDefaultBootTimeout(t *testing.T) {
	macOS := Image{OS: OSMacOS}
	for _, tc := range []struct {
		name string
		m    MachineInfo
		want time.Duration
	}{
		{"qemu, emulated", MachineInfo{Backend: "qemu", Accel: AccelTCG}, 5 * time.Minute},
		{"qemu, the vz model emulated", MachineInfo{Backend: "qemu", Accel: AccelTCG, Model: ModelVZ}, 5 * time.Minute},
		{"qemu, KVM", MachineInfo{Backend: "qemu", Accel: "kvm"}, 90 * time.Second},
		{"qemu, hvf", MachineInfo{Backend: "qemu", Accel: "hvf"}, 90 * time.Second},
		{"vz, a Linux guest", MachineInfo{Backend: "vz", Accel: "vz"}, 90 * time.Second},
		{"vz, a Linux guest named so", MachineInfo{Backend: "vz", Accel: "vz", Image: Image{OS: OSLinux}}, 90 * time.Second},
		// A first macOS boot takes minutes: the 90 s every accelerated
		// guest had would stop it half way.
		{"vz, a macOS guest", MachineInfo{Backend: "vz", Accel: "vz", Image: macOS}, 5 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, DefaultBootTimeout(tc.m))
		})
	}
	assert.Equal(t, OSLinux, Image{}.GuestOS(), "an image that names no OS is a Linux image")
	assert.Equal(t, OSMacOS, macOS.GuestOS())
}
