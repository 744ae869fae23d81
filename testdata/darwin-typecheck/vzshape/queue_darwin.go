package vzshape

/*
#cgo darwin CFLAGS: -x objective-c -fno-objc-arc
#import <Foundation/Foundation.h>

static void *makeDispatchQueue(const char *label) {
	return dispatch_queue_create(label, DISPATCH_QUEUE_SERIAL);
}
*/
import "C"

import (
	"unsafe"

	"example.com/dtc/vzshape/internal/objc"
)

// char is C.char under a Go name, as vz's cgoutil.go declares it.
type char C.char

func (c *char) CString() *C.char { return (*C.char)(c) }

// newDispatchQueue converts a C type returned by another package, as vz's
// NewVirtualMachine does; go/types then reports "cannot convert ... (value
// with invalid type)", which the checker must suppress.
func newDispatchQueue() unsafe.Pointer {
	cs := (*char)(objc.GetUUID())
	return C.makeDispatchQueue(cs.CString())
}
