//go:build !(darwin && arm64 && cgo)

package vz

import (
	"fmt"
	"runtime"
)

// HostFramework is Virtualization.framework on a Mac with Apple silicon, in
// a build with cgo; here it is an error saying what is missing.
func HostFramework() (Framework, error) {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		return nil, fmt.Errorf("%w; this qoslab was built without cgo (CGO_ENABLED=0), which Virtualization.framework needs: build it on the Mac with `make build`", ErrNeedsMac)
	}
	return nil, fmt.Errorf("%w; this is %s/%s", ErrNeedsMac, runtime.GOOS, runtime.GOARCH)
}
