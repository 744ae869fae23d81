package cli

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/experiment"
	"github.com/qoslab/qoslab/internal/hv"
	"github.com/qoslab/qoslab/internal/hv/registry"
	"github.com/qoslab/qoslab/internal/image"
)

// DoctorOptions are the settings of `qoslab doctor`.
type DoctorOptions struct {
	IO        *IOStreams
	AgentPath string
	JSON      bool
	// Env reads the environment (where kernels and images are cached).
	Env func(string) string
}

// NewCmdDoctor builds `qoslab doctor`.
func NewCmdDoctor(f *Factory, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	o := &DoctorOptions{IO: f.IO, Env: f.Env}
	cmd := &cobra.Command{Use: "doctor", Short: "Say what is present and missing for each backend, and how to fix it", Args: noArgs}
	cmd.Flags().StringVar(&o.AgentPath, "agent", "", "the qoslab-agent binary to run on this machine (default: next to qoslab)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the checks as JSON")
	return command(f, cmd, "doctor", o, nil, nil, doctorRun, runF)
}

func doctorRun(ctx context.Context, o *DoctorOptions) error {
	checks := doctorChecks(ctx, o)
	if o.JSON {
		return printJSON(o.IO.Out, checks)
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	missing := 0
	for _, c := range checks {
		mark := "ok"
		if c.NotApplicable {
			mark = "n/a"
		}
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
}

// doctorChecks asks for the agents, then each registered backend, then the
// guest kernel and image.
func doctorChecks(ctx context.Context, o *DoctorOptions) []doctorCheck {
	found := func(name, fix string, detail string, err error) doctorCheck {
		if err != nil {
			return doctorCheck{Check: hv.Check{Name: name, Detail: firstLine(err.Error()), Fix: fix}}
		}
		return doctorCheck{Check: hv.Check{Name: name, OK: true, Detail: detail}}
	}
	arch := runtime.GOARCH
	p, err := agent.FindAgent(o.AgentPath)
	out := []doctorCheck{found("host agent", "make build", p, err)}
	p, err = guestAgentPath("", "linux", arch)
	out = append(out, found("guest agent (linux/"+arch+")", "make build", p, err))
	for _, b := range registry.All(registry.Options{CacheDir: cacheHome(o.Env)}) {
		if why := registry.NotApplicable(b.Name()); why != "" {
			out = append(out, doctorCheck{Check: hv.Check{Name: b.Name(), OK: true, Detail: why}, NotApplicable: true})
			continue
		}
		for _, c := range b.Check(ctx) {
			c.Name = b.Name() + ": " + c.Name
			out = append(out, doctorCheck{Check: c})
		}
	}
	kernels, _ := image.DefaultKernelCacheDir(o.Env)
	r := image.DefaultRecipe()
	ks, err := image.LocateKernel(r, image.LocateOptions{Arch: arch, KernelCacheDir: kernels, DefaultKernelCacheDir: kernels})
	out = append(out, found("guest kernel ("+r.Kernel.Source+")", "scripts/fetch-kernel.sh --arch "+arch, fmt.Sprintf("%s from %s", ks.Version, ks.Origin), err))
	name := experiment.DefaultImage()
	img, _, err := image.Load(imageStore(o.Env), name)
	return append(out, found("image "+name, "qoslab image build linux", fmt.Sprintf("kernel %s, agent %s, in %s", img.KernelVersion, img.AgentVersion, img.Dir), err))
}

// doctorCheck is one line of doctor: a check, or a backend that does not
// apply to this platform (not counted as missing).
type doctorCheck struct {
	hv.Check
	NotApplicable bool `json:"not_applicable,omitempty"`
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
