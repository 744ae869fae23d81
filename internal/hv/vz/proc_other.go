//go:build !unix

package vz

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

var errLocked = errors.New("held by another process")

var errNoUnix = errors.New("the vz backend needs a unix system, not " + runtime.GOOS)

func lockExclusive(path string, create bool) (*os.File, error) { return nil, errNoUnix }

func lockHeld(path string) (bool, error) { return false, errNoUnix }

func replaceLocked(path string, held *os.File, content []byte) (*os.File, error) {
	return nil, errNoUnix
}

func hostProcAttr() *syscall.SysProcAttr { return nil }

func signalProcess(pid int, sig syscall.Signal) error { return errNoUnix }
