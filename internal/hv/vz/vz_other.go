//go:build !(darwin && arm64 && cgo)

package vz

import (
	"context"
	"fmt"
	"log"
	"runtime"

	"github.com/qoslab/qoslab/internal/hv"
)

// unsupported is why the vz backend cannot run in this build.
func unsupported() (detail, fix string) {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		// vz calls the framework through cgo.
		return "this qoslab was built without cgo (CGO_ENABLED=0), and vz reaches Virtualization.framework through cgo",
			"make build on the Mac (cgo is on by default there)"
	}
	return fmt.Sprintf("vz needs macOS 13+ on Apple silicon; this is %s/%s", runtime.GOOS, runtime.GOARCH),
		"use the qemu backend here"
}

// hostPlatform where the framework cannot be reached: Check says why, and
// Start refuses before it writes anything.
func hostPlatform() platform {
	refuse := func() error {
		detail, fix := unsupported()
		return fmt.Errorf("%s: %s", detail, fix)
	}
	return platform{
		limits: func() (Limits, error) { return Limits{}, refuse() },
		boot: func(context.Context, plan, *log.Logger) (instance, error) {
			return nil, refuse()
		},
		check: func(context.Context) []hv.Check {
			detail, fix := unsupported()
			return []hv.Check{{Name: "Virtualization.framework", Detail: detail, Fix: fix}}
		},
	}
}
