// Command genman writes qoslab's man pages (one per command) into a
// directory, from the same command tree the binary runs: `make man`.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra/doc"

	"github.com/qoslab/qoslab/internal/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genman DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: man pages are for everyone to read
		fmt.Fprintln(os.Stderr, "genman:", err)
		os.Exit(1)
	}
	root := cli.NewCmdRoot(cli.NewFactory(cli.SystemIO()))
	root.DisableAutoGenTag = true
	header := &doc.GenManHeader{Title: "QOSLAB", Section: "1", Source: "qoslab", Manual: "qoslab manual"}
	if err := cli.WriteManPages(root, header, dir); err != nil {
		fmt.Fprintln(os.Stderr, "genman:", err)
		os.Exit(1)
	}
}
