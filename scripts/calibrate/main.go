// Command calibrate measures the data model of internal/workload/codec and
// prints its calibration table, the rows of the calibration variable in
// internal/workload/codec/generate.go: at knob 0, 0.025, ... 1, the ratio
// klauspost zstd at SpeedDefault achieves on 16 MiB of the model's data,
// keeping only the rows where it increases (the table must increase; flat
// stretches add nothing). Run it after changing the model or upgrading
// klauspost, and paste its output into the table:
//
//	go run ./scripts/calibrate
package main

import (
	"fmt"
	"os"

	"github.com/qoslab/qoslab/internal/workload/codec"
)

// steps is how many parts the knob's range is measured in.
const steps = 40

func main() {
	last := 0.0
	for i := 0; i <= steps; i++ {
		knob := float64(i) / steps
		r, err := codec.ModelRatio(knob, 16<<20)
		if err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
		if r <= last {
			continue
		}
		last = r
		fmt.Printf("\t{%.3f, %.3f},\n", knob, r)
	}
}
