package clean

/*
#include <stdlib.h>
#include <sys/sysctl.h>

static int hostCPUs(void) {
	int n = 0;
	size_t len = sizeof(n);
	if (sysctlbyname("hw.perflevel0.physicalcpu", &n, &len, NULL, 0) != 0) {
		return -1;
	}
	return n;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"example.com/dtc/vzshape"
)

// Boot starts a machine for s.
func Boot(s Spec) (*vzshape.VirtualMachine, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if max := int(C.hostCPUs()); max > 0 && s.CPUs > uint(max) {
		return nil, fmt.Errorf("boot: %d CPUs asked, the host has %d performance cores", s.CPUs, max)
	}
	loader, err := vzshape.NewLinuxBootLoader(s.Kernel, vzshape.WithInitrd(s.Initrd), vzshape.WithCommandLine(s.CmdLine))
	if err != nil {
		return nil, fmt.Errorf("boot loader: %w", err)
	}
	config, err := vzshape.NewVirtualMachineConfiguration(loader, s.CPUs, s.MemoryMiB<<20)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	if ok, err := config.Validate(); !ok {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	m, err := vzshape.NewVirtualMachine(config)
	if err != nil {
		return nil, fmt.Errorf("machine: %w", err)
	}
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	return m, nil
}

// hostModel reads a sysctl string through the errno form of a C call, which
// FakeImportC must accept: two results from one C call.
func hostModel() (string, error) {
	name := C.CString("hw.model")
	defer C.free(unsafe.Pointer(name))
	var buf [256]C.char
	size := C.size_t(len(buf))
	if _, err := C.sysctlbyname(name, unsafe.Pointer(&buf[0]), &size, nil, 0); err != nil {
		return "", fmt.Errorf("sysctl hw.model: %w", err)
	}
	return C.GoString(&buf[0]), nil
}
