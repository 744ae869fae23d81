package cli

import (
	"fmt"
	"time"

	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/report"
)

// publish writes a results directory's summaries and report from one
// reading of it and prints the run's summary, then, for a session that
// measured, where its time went.
// It returns the report, nil when the directory could not be read.
func publish(io *IOStreams, dir string, res *experiment.Session, wall time.Duration, telemetryMs int) (*report.Report, error) {
	r, err := report.Publish(dir, io.Out, io.ErrOut, io.Verdicts)
	if res != nil {
		for _, line := range res.TimeText(wall, telemetryMs) {
			fmt.Fprintln(io.Out, line)
		}
	}
	return r, err
}
