package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/doctor"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/render"
)

// doctorOptions are the settings of `qoslab doctor`.
type doctorOptions struct {
	IO        *IOStreams
	AgentPath string
	// Format is --format, one of viewFormats; --json is --format json.
	Format string
	JSON   bool
	VMEnv  guestvm.Env
	// KernelCache is where guest kernels are cached.
	KernelCache string
}

// newCmdDoctor builds `qoslab doctor`.
func newCmdDoctor(f *Factory, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	o := &doctorOptions{IO: f.IO}
	cmd := &cobra.Command{Use: "doctor", Short: "Say what is present and missing for each backend, and how to fix it", Args: noArgs}
	cmd.Flags().StringVar(&o.AgentPath, "agent", "", "the qoslab-agent binary to run on this machine (default: next to qoslab)")
	formatFlags(cmd, &o.Format, &o.JSON, "print the checks as JSON")
	return command(f, cmd, "doctor", o, nil, func([]string) error {
		o.VMEnv = vmEnv(f, o.VMEnv)
		o.KernelCache, _ = image.DefaultKernelCacheDir(f.Env)
		return checkFormat(cmd, &o.Format, o.JSON)
	}, doctorRun, runF)
}

func doctorRun(ctx context.Context, o *doctorOptions) error {
	checks := doctor.Checks(ctx, o.AgentPath, o.VMEnv, o.KernelCache)
	var err error
	switch o.Format {
	case render.FormatJSON:
		return printJSON(o.IO.Out, checks)
	case render.FormatCSV:
		err = render.CSV(o.IO.Out, doctorTable(checks, false))
	case render.FormatMarkdown:
		err = render.Markdown(o.IO.Out, render.Document{Blocks: []render.Block{doctorTable(checks, false)}})
	default:
		// Each check's detail (and fix) wraps beside its row, or under it
		// where a word of it (a path) is wider than the room there: the
		// table fits the terminal, or 100 columns (issue 40).
		err = render.Text(o.IO.Out, render.Document{Blocks: []render.Block{doctorTable(checks, true)}}, o.IO.width(), o.IO.colored())
	}
	if err != nil {
		return err
	}
	missing := 0
	for _, c := range checks {
		if !c.OK {
			missing++
		}
	}
	if missing > 0 {
		return fmt.Errorf("doctor: %d of %d checks failed; the fixes are listed above", missing, len(checks))
	}
	return nil
}

// doctorTable is the checks as a table: each one's mark, toned from its
// outcome (doctorTone), its name and its detail. With fixRows (the
// terminal's view) a check's fix is a row of its own under it, "fix: ..."
// in the detail's column, and the table has no heading line; without (a
// file, a program) the fix has a column, FIX.
func doctorTable(checks []doctor.Check, fixRows bool) *render.Table {
	t := &render.Table{Trailing: fixRows, Headless: fixRows,
		Columns: []render.Column{{Head: "STATUS"}, {Head: "CHECK"}, {Head: "DETAIL"}}}
	if !fixRows {
		t.Columns = append(t.Columns, render.Column{Head: "FIX"})
	}
	for _, c := range checks {
		fix := ""
		if !c.OK || c.Warn {
			fix = c.Fix
		}
		row := []render.Cell{{Text: doctorMark(c), Tone: doctorTone(c)}, {Text: c.Name}, {Text: c.Detail}}
		if !fixRows {
			t.Rows = append(t.Rows, append(row, render.Cell{Text: fix}))
			continue
		}
		t.Rows = append(t.Rows, row)
		if fix != "" {
			t.Rows = append(t.Rows, []render.Cell{{}, {}, {Text: "fix: " + fix}})
		}
	}
	return t
}

// doctorTone is the tone of a check's mark, from its outcome as a
// verdict's is from its: MISSING as a no, warn as a warning, ok as a yes;
// absent and n/a plain.
func doctorTone(c doctor.Check) render.Tone {
	switch {
	case !c.OK:
		return render.No
	case c.Warn:
		return render.Warning
	case !c.NotApplicable && !c.Absent:
		return render.Yes
	}
	return render.Plain
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
