//go:build !linux && !darwin

package qos

import (
	"fmt"
	"runtime"
)

// ApplySelf reports that class c cannot be applied: this OS has no thread QoS
// this package knows how to set.
func ApplySelf(c Class) Applied {
	return Applied{Asked: c, Reason: "QoS classes are not supported on " + runtime.GOOS}
}

// ReadSelf reports that no class can be read on this OS.
func ReadSelf() (Class, string, error) {
	return Unspecified, "", fmt.Errorf("QoS classes are not supported on %s", runtime.GOOS)
}

// Support describes what this OS can apply: nothing.
func Support() string {
	return runtime.GOOS + ": QoS classes are not supported"
}
