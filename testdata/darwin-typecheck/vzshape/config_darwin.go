// Package vzshape mimics the shape of github.com/Code-Hex/vz/v3, which the
// checker's tests cannot download: Go wrappers around Objective-C
// Virtualization.framework objects, built with cgo, darwin only. Its Go API is
// what the consumers in this module call, rightly (clean) or wrongly (broken).
package vzshape

/*
#cgo darwin CFLAGS: -x objective-c -fno-objc-arc
#cgo darwin LDFLAGS: -lobjc -framework Foundation -framework Virtualization
#import <Foundation/Foundation.h>
#import <Virtualization/Virtualization.h>
#include <stdlib.h>

static void *newConfiguration(void *bootLoader, unsigned int cpus, unsigned long long memory) {
	VZVirtualMachineConfiguration *c = [[VZVirtualMachineConfiguration alloc] init];
	c.bootLoader = (VZBootLoader *)bootLoader;
	c.CPUCount = cpus;
	c.memorySize = memory;
	return c;
}

static void *newLinuxBootLoader(const char *kernel, const char *initrd, const char *cmdline) {
	NSURL *k = [NSURL fileURLWithPath:[NSString stringWithUTF8String:kernel]];
	VZLinuxBootLoader *l = [[VZLinuxBootLoader alloc] initWithKernelURL:k];
	if (initrd != NULL) {
		l.initialRamdiskURL = [NSURL fileURLWithPath:[NSString stringWithUTF8String:initrd]];
	}
	l.commandLine = [NSString stringWithUTF8String:cmdline];
	return l;
}

static int validateConfiguration(void *config, char **message) {
	NSError *err = nil;
	if ([(VZVirtualMachineConfiguration *)config validateWithError:&err]) {
		return 1;
	}
	*message = strdup([[err localizedDescription] UTF8String]);
	return 0;
}

static void releaseObject(void *obj) {
	[(NSObject *)obj release];
}
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"
)

// pointer holds a retained Objective-C object.
type pointer struct {
	ptr unsafe.Pointer
}

func (p *pointer) release() { C.releaseObject(p.ptr) }

// BootLoader is a VZBootLoader.
type BootLoader interface {
	bootLoader() unsafe.Pointer
}

// LinuxBootLoader boots a Linux kernel directly.
type LinuxBootLoader struct {
	pointer
	vmlinuz string
}

func (l *LinuxBootLoader) bootLoader() unsafe.Pointer { return l.ptr }

// LinuxBootLoaderOption sets an optional part of a LinuxBootLoader.
type LinuxBootLoaderOption func(*linuxBootOptions)

type linuxBootOptions struct {
	initrd, cmdline string
}

// WithCommandLine sets the kernel command line.
func WithCommandLine(cmdline string) LinuxBootLoaderOption {
	return func(o *linuxBootOptions) { o.cmdline = cmdline }
}

// WithInitrd sets the initial RAM disk.
func WithInitrd(path string) LinuxBootLoaderOption {
	return func(o *linuxBootOptions) { o.initrd = path }
}

// NewLinuxBootLoader makes a boot loader for the kernel at vmlinuz.
func NewLinuxBootLoader(vmlinuz string, opts ...LinuxBootLoaderOption) (*LinuxBootLoader, error) {
	var o linuxBootOptions
	for _, opt := range opts {
		opt(&o)
	}
	kernel := C.CString(vmlinuz)
	defer C.free(unsafe.Pointer(kernel))
	cmdline := C.CString(o.cmdline)
	defer C.free(unsafe.Pointer(cmdline))
	var initrd *C.char
	if o.initrd != "" {
		initrd = C.CString(o.initrd)
		defer C.free(unsafe.Pointer(initrd))
	}
	l := &LinuxBootLoader{pointer: pointer{ptr: C.newLinuxBootLoader(kernel, initrd, cmdline)}, vmlinuz: vmlinuz}
	runtime.SetFinalizer(l, (*LinuxBootLoader).release)
	return l, nil
}

// VirtualMachineConfiguration is a VZVirtualMachineConfiguration.
type VirtualMachineConfiguration struct {
	pointer
	cpus   uint
	memory uint64
}

// NewVirtualMachineConfiguration makes a configuration of cpus CPUs and
// memorySize bytes that boots with bootLoader.
func NewVirtualMachineConfiguration(bootLoader BootLoader, cpus uint, memorySize uint64) (*VirtualMachineConfiguration, error) {
	if bootLoader == nil {
		return nil, errors.New("vzshape: no boot loader")
	}
	c := &VirtualMachineConfiguration{
		pointer: pointer{ptr: C.newConfiguration(bootLoader.bootLoader(), C.uint(cpus), C.ulonglong(memorySize))},
		cpus:    cpus,
		memory:  memorySize,
	}
	runtime.SetFinalizer(c, (*VirtualMachineConfiguration).release)
	return c, nil
}

// Validate reports whether the framework accepts c, and why not.
func (c *VirtualMachineConfiguration) Validate() (bool, error) {
	var msg *C.char
	if C.validateConfiguration(c.ptr, &msg) == 1 {
		return true, nil
	}
	defer C.free(unsafe.Pointer(msg))
	return false, errors.New(C.GoString(msg))
}
