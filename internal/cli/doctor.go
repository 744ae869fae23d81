package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/doctor"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/termcolor"
)

// doctorOptions are the settings of `qoslab doctor`.
type doctorOptions struct {
	IO        *IOStreams
	AgentPath string
	JSON      bool
	VMEnv     guestvm.Env
	// KernelCache is where guest kernels are cached.
	KernelCache string
}

// newCmdDoctor builds `qoslab doctor`.
func newCmdDoctor(f *Factory, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	o := &doctorOptions{IO: f.IO}
	cmd := &cobra.Command{Use: "doctor", Short: "Say what is present and missing for each backend, and how to fix it", Args: noArgs}
	cmd.Flags().StringVar(&o.AgentPath, "agent", "", "the qoslab-agent binary to run on this machine (default: next to qoslab)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the checks as JSON")
	return command(f, cmd, "doctor", o, nil, func([]string) error {
		o.VMEnv = vmEnv(f, o.VMEnv)
		o.KernelCache, _ = image.DefaultKernelCacheDir(f.Env)
		return nil
	}, doctorRun, runF)
}

func doctorRun(ctx context.Context, o *doctorOptions) error {
	checks := doctor.Checks(ctx, o.AgentPath, o.VMEnv, o.KernelCache)
	if o.JSON {
		return printJSON(o.IO.Out, checks)
	}
	// Each check's detail (and fix) wraps in its column, or under its row
	// where a word of it (a path) is wider than the column: the table fits
	// the terminal, or 100 columns (issue 40).
	var rows []tableRow
	missing := 0
	for _, c := range checks {
		mark := word{text: doctorMark(c)}
		if o.IO.colored() {
			// From the check's outcome, as verdicts are from theirs.
			switch {
			case !c.OK:
				mark.shown = termcolor.Paint(termcolor.Red, mark.text)
			case c.Warn:
				mark.shown = termcolor.Paint(termcolor.Yellow, mark.text)
			case !c.NotApplicable && !c.Absent:
				mark.shown = termcolor.Paint(termcolor.Green, mark.text)
			}
		}
		rows = append(rows, tableRow{cells: []word{mark, {text: c.Name}}, last: textWords(c.Detail)})
		if !c.OK {
			missing++
		}
		if !c.OK || c.Warn {
			rows = append(rows, tableRow{cells: []word{{}, {}}, last: textWords("fix: " + c.Fix)})
		}
	}
	if err := fitTable(o.IO.Out, rows, o.IO.width()); err != nil {
		return err
	}
	if missing > 0 {
		return fmt.Errorf("doctor: %d of %d checks failed; the fixes are listed above", missing, len(checks))
	}
	return nil
}

// doctorMark is a check's first column: "MISSING" (a run needs it: doctor
// fails), "warn" (there, but not working as it should; runs go on without
// it), "absent" (optional and not installed), "n/a" (a backend not for
// this platform), or "ok".
func doctorMark(c doctor.Check) string {
	switch {
	case !c.OK:
		return "MISSING"
	case c.NotApplicable:
		return "n/a"
	case c.Warn:
		return "warn"
	case c.Absent:
		return "absent"
	}
	return "ok"
}
