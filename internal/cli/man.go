package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// WriteManPages writes a man page per command of root into dir
// (qoslab-run.1, ...), each with an EXIT STATUS section, which cobra's
// generator has no place for.
func WriteManPages(root *cobra.Command, header *doc.GenManHeader, dir string) error {
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
				continue
			}
			if err := walk(sub); err != nil {
				return err
			}
		}
		h := *header
		var buf bytes.Buffer
		if err := doc.GenMan(c, &h, &buf); err != nil {
			return err
		}
		page := withExitStatus(buf.String(), exitStatuses(c))
		name := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "-")+"."+h.Section)
		return os.WriteFile(name, []byte(page), 0o644) //nolint:gosec // man pages are for every user of the machine to read
	}
	return walk(root)
}

// exitStatuses are a command's exit statuses and what each means.
func exitStatuses(c *cobra.Command) [][2]string {
	out := [][2]string{
		{"0", "done"},
		{"1", "a failure; what finished is still written (a run's results directory keeps every finished cell)"},
		{"2", "a usage error: a mistyped command, flag or value, with what is allowed and a did-you-mean"},
	}
	switch c.CommandPath() {
	case "qoslab run", "qoslab results show":
		out = append(out,
			[2]string{"3", "with --exit-status: a verdict is no (QoS is not subsumed in the VM)"},
			[2]string{"4", "with --exit-status: no verdict is no, but one is inconclusive; or the run has no verdict, or did not finish every cell"})
	case "qoslab compare":
		out = append(out, [2]string{"3", "with --fail-on PCT: a significant change against the baseline larger than PCT percent either way"})
	}
	return append(out,
		[2]string{"130", "interrupted by Ctrl-C (SIGINT): VMs and agents are stopped, what finished is kept, and the --resume command that finishes the run is printed"},
		[2]string{"143", "stopped by SIGTERM, as for Ctrl-C"})
}

// withExitStatus puts an EXIT STATUS section into a man page, before SEE
// ALSO (man-pages(7)'s order), or at its end.
func withExitStatus(page string, statuses [][2]string) string {
	var b strings.Builder
	b.WriteString(".SH EXIT STATUS\n")
	for _, s := range statuses {
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s\n", s[0], strings.ReplaceAll(s[1], "-", "\\-"))
	}
	b.WriteString("\n")
	if i := strings.Index(page, ".SH SEE ALSO"); i >= 0 {
		return page[:i] + b.String() + page[i:]
	}
	return page + "\n" + b.String()
}
