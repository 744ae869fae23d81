package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/signing"
)

// NewCmdDoctor builds `qoslab doctor`.
func NewCmdDoctor(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Say what is present and missing for each backend, and how to fix it",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			checks := doctorChecks(cmd.Context(), f)
			if asJSON {
				enc := json.NewEncoder(f.IO.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(checks)
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
			missing := 0
			for _, c := range checks {
				mark := "ok"
				if !c.OK {
					mark, missing = "MISSING", missing+1
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, c.Name, c.Detail)
				if !c.OK && c.Fix != "" {
					fmt.Fprintf(tw, "\t\tfix: %s\n", c.Fix)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if missing > 0 {
				return fmt.Errorf("doctor: %d of %d checks failed; the fixes are listed above", missing, len(checks))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checks as JSON")
	return cmd
}

func doctorChecks(ctx context.Context, f *Factory) []hv.Check {
	var out []hv.Check
	if p, err := agent.FindAgent(f.agentPath()); err != nil {
		out = append(out, hv.Check{Name: "host agent", Detail: err.Error(), Fix: "make build"})
	} else {
		out = append(out, hv.Check{Name: "host agent", OK: true, Detail: p})
	}
	arch := runtime.GOARCH
	if p, err := guestAgentPath("", "linux", arch); err != nil {
		out = append(out, hv.Check{Name: "guest agent (linux/" + arch + ")", Detail: err.Error(), Fix: "make build"})
	} else {
		out = append(out, hv.Check{Name: "guest agent (linux/" + arch + ")", OK: true, Detail: p})
	}
	for _, c := range signing.CheckHost(ctx) {
		c.Name = "vz: " + c.Name
		out = append(out, c)
	}
	for _, c := range newQEMU(f.Env).Check(ctx) {
		c.Name = "qemu: " + c.Name
		out = append(out, c)
	}
	defKernels, _ := image.DefaultKernelCacheDir(f.Env)
	r := image.DefaultRecipe()
	if ks, err := image.LocateKernel(r, image.LocateOptions{Arch: arch, KernelCacheDir: defKernels, DefaultKernelCacheDir: defKernels}); err != nil {
		out = append(out, hv.Check{Name: "guest kernel (" + r.Kernel.Source + ")", Detail: firstLine(err.Error()), Fix: "scripts/fetch-kernel.sh --arch " + arch})
	} else {
		out = append(out, hv.Check{Name: "guest kernel (" + r.Kernel.Source + ")", OK: true, Detail: fmt.Sprintf("%s from %s", ks.Version, ks.Origin)})
	}
	store, _ := image.DefaultStoreDir(f.Env)
	if img, _, err := image.Load(store, defaultImage()); err != nil {
		out = append(out, hv.Check{Name: "image " + defaultImage(), Detail: firstLine(err.Error()), Fix: "qoslab image build linux"})
	} else {
		out = append(out, hv.Check{Name: "image " + defaultImage(), OK: true, Detail: fmt.Sprintf("kernel %s, agent %s, in %s", img.KernelVersion, img.AgentVersion, img.Dir)})
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
