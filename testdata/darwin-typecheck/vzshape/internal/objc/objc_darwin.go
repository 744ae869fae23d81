// Package objc mimics vz's internal/objc: it returns a C type from an
// exported Go function, which cgo permits between packages of one module and
// which FakeImportC turns into a value of invalid type in the importer.
package objc

/*
#cgo darwin CFLAGS: -x objective-c -fno-objc-arc
#import <Foundation/Foundation.h>

static const char *getUUID(void) {
	return [[[NSUUID UUID] UUIDString] UTF8String];
}
*/
import "C"

// GetUUID returns a fresh UUID string owned by the autorelease pool.
func GetUUID() *C.char {
	return C.getUUID()
}
