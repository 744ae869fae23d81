//go:build !linux && !darwin

package transport

import (
	"fmt"
	"os"
	"runtime"
)

func openSerial(path string) (*os.File, error) {
	return nil, fmt.Errorf("serial device %s: serial devices are supported on linux and darwin, not %s", path, runtime.GOOS)
}
