package transport

import (
	"fmt"
	"net"

	"github.com/mdlayher/vsock"
)

func listenVsock(cid, port uint32) (net.Listener, error) {
	l, err := vsock.ListenContextID(cid, port, nil)
	if err != nil {
		return nil, fmt.Errorf("%w (does this kernel have vsock? a guest needs the vmw_vsock_virtio_transport module)", err)
	}
	return l, nil
}

func dialVsock(cid, port uint32) (net.Conn, error) {
	c, err := vsock.Dial(cid, port, nil)
	if err != nil {
		// Not c: a nil *vsock.Conn is a non-nil net.Conn.
		return nil, err
	}
	return c, nil
}
