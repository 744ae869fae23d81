// Command qoslab measures whether thread QoS survives virtualization.
package main

import (
	"context"
	"os"

	"github.com/qoslab/qoslab/internal/cli"
	"github.com/qoslab/qoslab/internal/interrupt"
)

func main() {
	ctx, stop := interrupt.Context(context.Background())
	code := cli.Execute(ctx, cli.NewFactory(cli.SystemIO()), os.Args[1:])
	stop()
	os.Exit(code)
}
