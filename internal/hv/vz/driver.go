package vz

import (
	"context"
	"os"
	"path/filepath"

	"github.com/qoslab/qoslab/internal/hv"
)

// Name is the backend's name.
const Name = backendName

// Driver is the backend as it registers itself (hv/registry):
// Virtualization.framework, macOS and Linux guests, macOS 13+ on Apple
// silicon, where it is the default. agentStop stops a guest through its
// agent first (a macOS guest's power button opens a dialog); it is the
// agent package's, which this package does not import.
func Driver(agentStop AgentStop) hv.Driver {
	return hv.Driver{
		Name:      Name,
		Platform:  "darwin/arm64",
		DefaultOn: "darwin/arm64",
		New: func(hv.DriverOptions) hv.Backend {
			return New(Options{AgentStop: agentStop})
		},
		OpenBundle: openBundleImage,
		Helpers: []hv.Helper{{Name: HostCommand, Arg: "STATE_DIR", Main: func(ctx context.Context, stateDir string) error {
			return HostMain(ctx, stateDir, agentStop)
		}}},
	}
}

// openBundleImage opens the macOS (or Linux) VM bundle in dir, when dir
// is one (it has the config file).
func openBundleImage(dir string) (hv.Image, bool, error) {
	if _, err := os.Stat(filepath.Join(dir, BundleConfigFile)); err != nil {
		return hv.Image{}, false, nil
	}
	b, err := OpenBundle(dir)
	if err != nil {
		return hv.Image{}, true, err
	}
	return b.Image(), true, nil
}
