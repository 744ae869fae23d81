package vz

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A macOS guest boots from its bundle's disk, on the bundle's NIC; a Linux
// guest gets its scratch disk, as the plan caches it, and its console.
func TestPlanDevices(t *testing.T) {
	mac := plan{Kind: GuestMacOS, BootDisk: "/b/disk.img", NAT: true, MACAddress: "5a:94:ef:e4:0c:dd"}
	d, err := planDevices(mac)
	require.NoError(t, err)
	want, _ := net.ParseMAC("5a:94:ef:e4:0c:dd")
	assert.Equal(t, devices{macOS: true, disks: []disk{{"/b/disk.img", cachingAutomatic}}, mac: want}, d)

	mac.ScratchDisk, mac.ScratchCaching = "/s/scratch.raw", cachingUncached
	d, err = planDevices(mac)
	require.NoError(t, err)
	assert.Equal(t, []disk{{"/b/disk.img", cachingAutomatic}, {"/s/scratch.raw", cachingUncached}}, d.disks, "the boot disk first")

	linux := plan{Kind: guestLinux, ScratchDisk: "/s/scratch.raw", ScratchCaching: cachingUncached, ConsoleLog: "/s/console.log"}
	d, err = planDevices(linux)
	require.NoError(t, err)
	assert.Equal(t, devices{disks: []disk{{"/s/scratch.raw", cachingUncached}}, console: "/s/console.log"}, d)

	linux.ScratchDisk = ""
	d, err = planDevices(linux)
	require.NoError(t, err)
	assert.Empty(t, d.disks)
	assert.Nil(t, d.mac, "no network")
}

func TestPlanDevicesRefuses(t *testing.T) {
	_, err := planDevices(plan{Kind: GuestMacOS, NAT: true, MACAddress: "not a mac"})
	assert.ErrorContains(t, err, `MAC address "not a mac" of the plan`)
	_, err = planDevices(plan{Kind: "windows"})
	assert.EqualError(t, err, `plan for a "windows" guest`)
}
