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
// -name-width 40 -varied makes the fleet compare must fit at scale: host
// names of 40 characters, machines that differ in CPU, OS, VM and
// mechanism.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/qoslab/qoslab/internal/testfleet"
)

func main() {
	n := flag.Int("n", 12, "how many machines")
	var o testfleet.Options
	flag.IntVar(&o.NameWidth, "name-width", 0, "pad each host's name to this many characters (0: fleet-01 as it is)")
	flag.BoolVar(&o.Varied, "varied", false, "machines that differ in CPU, OS, VM and where each side's effect lies")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./scripts/fleetgen [-n N] [-name-width W] [-varied] DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	dirs, err := testfleet.WriteWith(flag.Arg(0), *n, o)
	for _, d := range dirs {
		fmt.Println(d)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetgen:", err)
		os.Exit(1)
	}
}
