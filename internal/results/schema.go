package results

import (
	"fmt"
	"strconv"
	"strings"
)

// SchemaVersion is the version of the result files this build writes. Readers
// accept any minor of a major they know and refuse other majors. 1.1:
// records carry params, run.json scheduling; 1.2: records carry cpu_ns,
// the thread's CPU time in its interval (absent, 0: not recorded); 1.3:
// records carry host_view, what the host saw of the cell run (absent: not
// recorded); 1.4: run.json carries looks, the blocks of repeats a run added
// (absent: none), which an older build resuming the run would drop; 1.5:
// run.json carries telemetry_notes, the notes about telemetry as a whole
// (absent: none recorded apart), and summary.json names each ratio by its estimator (ratio_hl, the
// Hodges-Lehmann ratio the text prints, with ratio_hl_low and
// ratio_hl_high; ratio_of_medians where it was ratio), see docs/results.md.
const SchemaVersion = "1.5"

// checkSchema refuses a file written with a schema major this build cannot read.
func checkSchema(v string) error {
	major, _, _ := strings.Cut(v, ".")
	ours, _, _ := strings.Cut(SchemaVersion, ".")
	if _, err := strconv.Atoi(major); err != nil {
		return fmt.Errorf("result schema version %q is not MAJOR.MINOR", v)
	}
	if major != ours {
		return fmt.Errorf("result schema %s is not readable by this qoslab (reads %s.x): use a qoslab release that matches", v, ours)
	}
	return nil
}
