// Package vzfork stands for a patched copy of a cgo module that the
// fixture's go.mod points at with replace, as qoslab's go.mod points at its
// copy of vz: the checker reads it from that folder, and a wrong call into
// it is caught like one into the module's own packages.
package vzfork

/*
#cgo darwin CFLAGS: -x objective-c -fno-objc-arc
#import <Virtualization/Virtualization.h>

static int connectToPort(void *device, unsigned int port) {
	return -1;
}
*/
import "C"

import (
	"errors"
	"net"
	"unsafe"
)

// VirtioSocketDevice is a VZVirtioSocketDevice.
type VirtioSocketDevice struct{ ptr unsafe.Pointer }

// Connect connects to a port in the guest.
func (d *VirtioSocketDevice) Connect(port uint32) (net.Conn, error) {
	if C.connectToPort(d.ptr, C.uint(port)) < 0 {
		return nil, errors.New("no connection")
	}
	return nil, nil
}
