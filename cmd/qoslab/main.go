// Command qoslab measures whether thread QoS survives virtualization.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/qoslab/qoslab/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, cli.NewFactory(cli.SystemIO()), os.Args[1:])
	stop()
	os.Exit(code)
}
