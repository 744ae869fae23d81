package macos

import (
	"fmt"
	"strings"

	"howett.net/plist"

	"github.com/qoslab/qoslab/internal/guestchan"
)

// Where the agent lives in a macOS guest. /usr/local, /Library and
// /private/var are on the Data volume (firmlinked from the sealed system
// volume), which is why offline provisioning can write them.
const (
	// agentLabel is the LaunchDaemon's label: the agent's channel's name,
	// as in a Linux guest.
	agentLabel = guestchan.PortName
	// agentGuestPath is the agent binary, root:wheel 0755.
	agentGuestPath = "/usr/local/libexec/qoslab-agent"
	// agentPlistGuestPath is the LaunchDaemon, root:wheel 0644: launchd
	// refuses a daemon plist that others can write.
	agentPlistGuestPath = "/Library/LaunchDaemons/" + agentLabel + ".plist"
	// agentLogGuestPath gets the agent's stdout and stderr.
	agentLogGuestPath = "/var/log/qoslab-agent.log"
	// setupDoneGuestPath tells Setup Assistant that first-boot setup is
	// done, so a freshly installed guest boots to the login window instead
	// of waiting for someone to click through setup. LaunchDaemons run
	// either way; the marker keeps the guest from sitting in setup.
	setupDoneGuestPath = "/var/db/.AppleSetupDone"
)

// launchDaemon is the part of launchd.plist(5) the agent uses.
type launchDaemon struct {
	Label            string   `plist:"Label"`
	ProgramArguments []string `plist:"ProgramArguments"`
	RunAtLoad        bool     `plist:"RunAtLoad"`
	KeepAlive        bool     `plist:"KeepAlive"`
	// ProcessType Interactive exempts the agent from the resource limits
	// launchd applies to Standard and Background daemons (CPU and I/O
	// throttling): those would confound the QoS the agent sets per thread,
	// which is what qoslab measures.
	ProcessType       string `plist:"ProcessType"`
	StandardOutPath   string `plist:"StandardOutPath"`
	StandardErrorPath string `plist:"StandardErrorPath"`
}

// agentPowerOffFlag is the agent's --power-off-on-shutdown (internal/agent's
// PowerOffFlag; a test keeps them equal).
const agentPowerOffFlag = "--power-off-on-shutdown"

// agentArgs is how launchd starts the agent: serving on the vsock port
// hv/vz dials, and powering the guest off when asked to shut down. A
// LaunchDaemon without UserName runs as root, which shutdown(8) needs;
// without the flag a Shutdown would only end the agent, which launchd
// starts again (KeepAlive), and stopping the guest would take the power
// button, which opens a dialog in macOS, or a forced stop.
func agentArgs() []string {
	return []string{agentGuestPath, "--listen", fmt.Sprintf("vsock:%d", guestchan.VsockPort), agentPowerOffFlag}
}

// launchDaemonPlist is the agent's LaunchDaemon, as XML.
func launchDaemonPlist() ([]byte, error) {
	return plist.MarshalIndent(launchDaemon{
		Label:             agentLabel,
		ProgramArguments:  agentArgs(),
		RunAtLoad:         true,
		KeepAlive:         true,
		ProcessType:       "Interactive",
		StandardOutPath:   agentLogGuestPath,
		StandardErrorPath: agentLogGuestPath,
	}, plist.XMLFormat, "\t")
}

// guestFile is a file provisioning puts in the guest.
type guestFile struct {
	Path string // in the guest
	Mode uint32
	// Source is a file on the host to copy, or "" to write Content.
	Source  string
	Content []byte
	// KeepExisting leaves a file the guest already has alone.
	KeepExisting bool
}

// guestLayout is every file provisioning writes, all root:wheel.
func guestLayout(agent string, daemon []byte) []guestFile {
	return []guestFile{
		{Path: agentGuestPath, Mode: 0o755, Source: agent},
		{Path: agentPlistGuestPath, Mode: 0o644, Content: daemon},
		{Path: setupDoneGuestPath, Mode: 0o644, KeepExisting: true},
	}
}

// dataVolumePath is where a guest path sits on the Data volume: the
// firmlinked directories keep their place, and /var is /private/var.
func dataVolumePath(guest string) string {
	if rest, ok := strings.CutPrefix(guest, "/var/"); ok {
		return "private/var/" + rest
	}
	return strings.TrimPrefix(guest, "/")
}
