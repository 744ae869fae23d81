// Command orchtrace sums a run's trace (qoslab run --trace writes it as
// trace.jsonl in the results directory): the run's time line, where its
// orchestration went, and each step's median and mean per cell run on the
// host and in the VM. scripts/bench-orchestration.sh runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/qoslab/qoslab/internal/results"
	"github.com/qoslab/qoslab/internal/runtrace"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: orchtrace RESULTS-DIR|TRACE-FILE (a run made with qoslab run --trace)")
		os.Exit(2)
	}
	path := os.Args[1]
	if st, err := os.Stat(path); err == nil && st.IsDir() { //nolint:gosec // G703: the directory the user names on the command line
		path = filepath.Join(path, results.TraceFile)
	}
	spans, err := runtrace.Read(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "orchtrace: %v (run with qoslab run --trace to write one)\n", err)
		os.Exit(1)
	}
	runtrace.Summarize(spans).Text(os.Stdout)
}
