// Package guestinit is the agent's life as PID 1 of a Linux microVM: mount the
// kernel's file systems, load the modules, find the agent's channel, serve, and
// power off.
package guestinit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/qoslab/qoslab/internal/guestchan"
	"github.com/qoslab/qoslab/internal/transport"
)

// Config is written by the image builder and read by the agent at boot.
type Config struct {
	// Modules are paths inside the initramfs, in the order they must load
	// (dependencies first).
	Modules []string `json:"modules"`
	// Listen are the agent's channels: "virtio-port:NAME" (a virtio-serial
	// port found by name under /sys/class/virtio-ports) or any transport
	// address ("vsock:1024", "serial:/dev/hvc0"). The agent serves on every
	// one it can open.
	Listen []string `json:"listen"`
	// ScratchDevice is the raw disk block sinks may overwrite
	// (guestchan.ScratchDisk).
	ScratchDevice string `json:"scratch_device,omitempty"`
	// ScratchDir is a tmpfs the file sink writes in.
	ScratchDir string `json:"scratch_dir"`
	// KernelVersion is the kernel the modules belong to, for messages.
	KernelVersion string `json:"kernel_version"`
}

// ReadConfig reads and checks the init configuration.
func ReadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path) //nolint:gosec // G304: the init configuration the image build put at a fixed path
	if err != nil {
		return c, fmt.Errorf("init config: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("init config %s: %w", path, err)
	}
	if len(c.Listen) == 0 {
		return c, fmt.Errorf("init config %s: no listen addresses; want at least one of %sNAME, %s", path, virtioPortPrefix, transport.AddrForms)
	}
	if _, err := c.Channels(); err != nil {
		return c, fmt.Errorf("init config %s: %w", path, err)
	}
	if c.ScratchDir == "" {
		c.ScratchDir = "/scratch"
	}
	if !filepath.IsAbs(c.ScratchDir) {
		return c, fmt.Errorf("init config %s: scratch_dir %q is not an absolute path", path, c.ScratchDir)
	}
	if c.ScratchDevice != "" && !filepath.IsAbs(c.ScratchDevice) {
		return c, fmt.Errorf("init config %s: scratch_device %q is not an absolute path such as %s", path, c.ScratchDevice, guestchan.ScratchDisk)
	}
	return c, nil
}

// Channels parses Listen, in order.
func (c Config) Channels() ([]Channel, error) {
	chans := make([]Channel, 0, len(c.Listen))
	for _, s := range c.Listen {
		ch, err := parseChannel(s)
		if err != nil {
			return nil, err
		}
		chans = append(chans, ch)
	}
	return chans, nil
}
