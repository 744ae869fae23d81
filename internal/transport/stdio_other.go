//go:build !linux

package transport

import (
	"net"
	"os"
)

// stdioConn is the agent's end of the stdio transport. Outside Linux stdin
// and stdout stay blocking: on darwin kqueue does not report the last
// writer's close of a FIFO (Go issue 24164) and fstat cannot tell a FIFO from
// a pipe, while EOF on stdin is how the agent learns that its controller has
// gone. So deadlines do not fire and Close does not interrupt
// a pending Read there; the agent exits once Serve returns anyway.
func stdioConn() (net.Conn, error) {
	return PipeConn(os.Stdin, os.Stdout, "stdio"), nil
}
