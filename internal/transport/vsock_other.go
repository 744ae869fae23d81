//go:build !linux && !darwin

package transport

import (
	"fmt"
	"net"
	"runtime"
)

func listenVsock(cid, port uint32) (net.Listener, error) {
	return nil, fmt.Errorf("vsock is not supported on %s", runtime.GOOS)
}

func dialVsock(cid, port uint32) (net.Conn, error) {
	return nil, fmt.Errorf("vsock is not supported on %s", runtime.GOOS)
}
