// Command fleetgen writes a constructed fleet (internal/testfleet): N
// results directories, one per machine, with chosen (not measured) rates
// that give every kind of verdict, to compare and chart a fleet of any size
// without one. It prints the directories in order, one a line. Run it from
// the repository's root, then compare them:
//
//	go run ./scripts/fleetgen -n 50 /tmp/fleet50 > /tmp/fleet50.dirs
//	bin/qoslab report --compare $(cat /tmp/fleet50.dirs) --out /tmp/fleet50/report
//
// (the fleet chart is /tmp/fleet50/report/plots/compare-fleet-fp.png).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/qoslab/qoslab/internal/testfleet"
)

func main() {
	n := flag.Int("n", 12, "how many machines")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./scripts/fleetgen [-n N] DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	dirs, err := testfleet.Write(flag.Arg(0), *n)
	for _, d := range dirs {
		fmt.Println(d)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetgen:", err)
		os.Exit(1)
	}
}
