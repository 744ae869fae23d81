package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qoslab/qoslab/internal/agent"
	"github.com/qoslab/qoslab/internal/guestvm"
	"github.com/qoslab/qoslab/internal/image"
	"github.com/qoslab/qoslab/internal/image/macos"
)

// imageProvisionOptions are the settings of `qoslab image provision`.
type imageProvisionOptions struct {
	imageOptions
	Name, Via, SSH, GuestAgent string
}

func newCmdImageProvision(f *Factory, runF func(context.Context, *imageProvisionOptions) error) *cobra.Command {
	o := &imageProvisionOptions{}
	cmd := &cobra.Command{
		Use:   "provision NAME [--via ssh USER@ADDR]",
		Short: "Install the agent in a macOS image as a LaunchDaemon (offline as root, or --via ssh USER@ADDR)",
		Long: `Offline provisioning attaches the stopped guest's disk and writes the agent,
its LaunchDaemon plist and the setup-done marker, owned by root: run it with
sudo. --via ssh USER@ADDR installs into a running guest that has Remote Login,
key login and passwordless sudo.`,
		Args: func(_ *cobra.Command, args []string) error { return o.parseArgs(args) },
	}
	cmd.Flags().StringVar(&o.Via, "via", "offline", "offline (attach the stopped guest's disk; needs sudo) or ssh (then give USER@ADDR)")
	cmd.Flags().StringVar(&o.GuestAgent, "guest-agent", "", "the darwin/arm64 agent (default: bin/darwin-arm64/qoslab-agent beside qoslab)")
	completeArgs(cmd, func() []string { return image.Names(vmEnv(f, guestvm.Env{}).Store) })
	return imageCommand(f, cmd, &o.imageOptions, o, imageProvisionRun, runF)
}

func (o *imageProvisionOptions) parseArgs(args []string) error {
	if len(args) == 0 {
		return usageErrorf("image provision needs the image's NAME")
	}
	var err error
	if o.Name, err = vmName(args[:1]); err != nil {
		return err
	}
	addrs := args[1:]
	switch {
	case o.Via == "offline" && len(addrs) == 0:
	case o.Via == "ssh" && len(addrs) == 1:
		o.SSH = addrs[0]
	case o.Via == "ssh":
		return usageErrorf("--via ssh needs one USER@ADDR after the image name, got %d", len(addrs))
	case strings.HasPrefix(o.Via, "ssh ") && len(addrs) == 0:
		o.SSH = strings.TrimSpace(o.Via[4:])
	default:
		return usageErrorf("--via %q with %d extra arguments: allowed offline (the default), or ssh USER@ADDR", o.Via, len(addrs))
	}
	return nil
}

func imageProvisionRun(ctx context.Context, o *imageProvisionOptions) error {
	po := macos.ProvisionOptions{Bundle: filepath.Join(o.Store, o.Name), Log: o.IO.ErrOut, SSH: o.SSH}
	var err error
	if po.Agent, err = agent.FindGuestAgent(o.GuestAgent, "darwin", "arm64"); err != nil {
		return err
	}
	res, err := macos.Provision(ctx, po)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "provisioned %s (%s): agent %s\n", o.Name, res.Via, res.Agent.Path)
	return nil
}
