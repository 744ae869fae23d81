// Package macos makes macOS guest bundles for Virtualization.framework: it
// fetches and checks restore images (IPSW), installs them, provisions the
// qoslab agent as a LaunchDaemon and imports tart VMs.
package macos
