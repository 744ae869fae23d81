package signing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// codesignTimeout bounds reading the running binary's signature, which takes
// milliseconds unless the system is wedged.
const codesignTimeout = 30 * time.Second

// CheckHost reports, for `qoslab doctor`, whether this Mac and the running
// binary can use Virtualization.framework: macOS 13 or later, Apple silicon
// with a native arm64 process, and the virtualization entitlement in the
// running binary's signature.
func CheckHost(ctx context.Context) []Check {
	version, err := unix.Sysctl("kern.osproductversion")
	cpu, cpuErr := readCPUFacts()
	return []Check{
		MacOSCheck(version, err),
		appleSiliconCheck(cpu, cpuErr),
		runningBinaryEntitlementCheck(ctx),
	}
}

// readCPUFacts reads hw.optional.arm64 and sysctl.proc_translated. A name
// the kernel does not have (ENOENT) means 0: Intel Macs lack the first, and
// macOS before Rosetta 2 the second.
func readCPUFacts() (CPUFacts, error) {
	arm64, err := sysctlFlag("hw.optional.arm64")
	if err != nil {
		return CPUFacts{}, err
	}
	translated, err := sysctlFlag("sysctl.proc_translated")
	if err != nil {
		return CPUFacts{}, err
	}
	return CPUFacts{ARM64: arm64, Translated: translated}, nil
}

func sysctlFlag(name string) (bool, error) {
	v, err := unix.SysctlUint32(name)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sysctl %s: %w", name, err)
	}
	return v == 1, nil
}

// runningBinaryEntitlementCheck asks codesign for the entitlements of this
// very process's executable: a binary rebuilt after signing (go build
// replaces the file) has lost them, which is what this catches.
func runningBinaryEntitlementCheck(ctx context.Context) Check {
	exe, err := os.Executable()
	if err != nil {
		return EntitlementCheck("qoslab", nil, fmt.Errorf("find the running binary: %w", err))
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	ctx, cancel := context.WithTimeout(ctx, codesignTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "codesign", "-d", "--entitlements", "-", "--xml", exe) //nolint:gosec // G204: asks codesign about the binary it is given, by design
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return EntitlementCheck(exe, nil, fmt.Errorf("codesign -d: %w", err))
	}
	return EntitlementCheck(exe, stdout.Bytes(), nil)
}
