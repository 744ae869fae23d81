// Command plotreview renders every chart of the result fixtures in
// testdata/results (linux-fixture with the constructed telemetry, and
// linux-contention, its charts named contention-*) into a directory, for a
// person to look at after changing a chart. Run it from the repository's
// root:
//
//	go run ./scripts/plotreview [-format png|svg|pdf] DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/qoslab/qoslab/internal/plot"
	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/results/summary"
	"github.com/qoslab/qoslab/internal/telemetry"
)

// fixtures is the repository's result fixtures (see its README.md).
const fixtures = "testdata/results"

func main() {
	format := flag.String("format", "png", "the charts' format: png, svg or pdf")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./scripts/plotreview [-format png|svg|pdf] DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *format); err != nil {
		fmt.Fprintln(os.Stderr, "plotreview:", err)
		os.Exit(1)
	}
}

func run(dir, format string) error {
	in, err := load("linux-fixture")
	if err != nil {
		return err
	}
	ts, notes, err := telemetry.ReadFile(filepath.Join(fixtures, "telemetry-constructed.jsonl"))
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Println("telemetry:", n)
	}
	in.Telemetry = ts
	charts, skipped := plot.Charts(in)
	for _, s := range skipped {
		fmt.Printf("skipped %s: %s\n", s.Name, s.Reason)
	}
	contention, err := load("linux-contention")
	if err != nil {
		return err
	}
	more, _ := plot.Charts(contention)
	for i := range more {
		more[i].Name = "contention-" + more[i].Name
	}
	paths, err := plot.WriteAll(dir, append(charts, more...), format)
	for _, p := range paths {
		fmt.Println(p)
	}
	return err
}

// load reads a results directory fixture as the plot command does.
func load(name string) (plot.Input, error) {
	d, err := results.Open(filepath.Join(fixtures, name))
	if err != nil {
		return plot.Input{}, err
	}
	recs, torn, err := d.ReadSamples()
	if err != nil {
		return plot.Input{}, err
	}
	if torn != nil {
		return plot.Input{}, fmt.Errorf("fixture %s has a torn tail", name)
	}
	samples := results.Samples(recs)
	return plot.Input{Name: d.Run.Name, Samples: samples, Summary: summary.Analyze(samples, "host", "vm")}, nil
}
