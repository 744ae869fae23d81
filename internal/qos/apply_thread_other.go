//go:build !linux

package qos

import (
	"fmt"
	"runtime"
)

// ApplyThread applies c to the calling thread (tid 0) only: off Linux no API
// gives another thread, let alone another process's, a QoS class.
func ApplyThread(tid int, c Class) Applied {
	if tid == 0 {
		return ApplySelf(c)
	}
	return Applied{Asked: c, Reason: fmt.Sprintf("on %s a QoS class can only be applied by the thread itself, not to thread %d", runtime.GOOS, tid)}
}

// ReadThread reads the calling thread's class only (tid 0).
func ReadThread(tid int) (Class, string, error) {
	if tid == 0 {
		return ReadSelf()
	}
	return Unspecified, "", fmt.Errorf("thread %d: on %s only the calling thread's class can be read", tid, runtime.GOOS)
}
