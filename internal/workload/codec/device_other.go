//go:build !linux && !darwin

package codec

import (
	"errors"
	"os"
)

func deviceSize(*os.File) (int64, error) {
	return 0, errors.New("block sinks are supported on Linux and macOS only")
}
