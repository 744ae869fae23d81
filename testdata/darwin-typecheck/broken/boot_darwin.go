package broken

/*
#cgo darwin CFLAGS: -x objective-c
#import <Foundation/Foundation.h>
#include <stdlib.h>
#include <sys/sysctl.h>

static unsigned long long hostMemory(void) {
	return [[NSProcessInfo processInfo] physicalMemory];
}
*/
import "C"

import (
	"fmt"

	"example.com/dtc/vzshape"
)

// Boot makes every Go-level mistake the checker must catch in a cgo file.
func Boot(kernel, initrd string, cpus uint) (*vzshape.VirtualMachine, error) {
	memory := uint64(C.hostMemory()) / 4
	loader, err := vzshape.NewLinuxBootLoader(kernel, initrd) // want `cannot use initrd \(variable of type string\) as vzshape.LinuxBootLoaderOption value in argument to vzshape.NewLinuxBootLoader`
	if err != nil {
		return nil, err
	}
	config := vzshape.NewVirtualMachineConfiguration(loader, cpus, memory) // want `assignment mismatch: 1 variable but vzshape.NewVirtualMachineConfiguration returns 2 values`
	m, err := vzshape.NewVirtualMachine(config)
	if err != nil {
		return nil, err
	}
	if err := startVM(m); err != nil { // want `not enough arguments in call to startVM`
		return nil, err
	}
	if err := m.Resume(); err != nil { // want `m.Resume undefined \(type \*vzshape.VirtualMachine has no field or method Resume\)`
		return nil, err
	}
	name := C.CString("hw.model") // want `declared and not used: name`
	return m, nil
}

// Opaque passes C values where Go values belong. FakeImportC gives every C
// expression an invalid type, which silences these: only a Mac's compiler
// catches them, so no want here.
func Opaque() error {
	_, err := vzshape.NewLinuxBootLoader(C.CString("/vmlinuz")) // not caught: *C.char is not a string
	n := C.sysctlbyname(nil, nil, nil, nil, 0)
	fmt.Println(n + "x") // not caught: C.int + string
	return err
}
