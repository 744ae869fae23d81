package signing

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/qoslab/qoslab/internal/shquote"
)

// Check is one thing the vz backend needs of this Mac and of the qoslab
// binary, present or missing, and the command that fixes it: the vz
// backend's Check reports them as hv.Check, field for field.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Names of the host checks, as `qoslab doctor` lists them.
const (
	checkNameMacOS        = "macOS 13 or later"
	checkNameAppleSilicon = "Apple silicon"
	CheckNameEntitlement  = "entitlement " + virtualizationEntitlement
)

// MacOSVersion is a macOS product version, such as 14.2.1.
type MacOSVersion struct {
	Major, Minor, Patch int
}

// minMacOS is the oldest macOS the vz backend supports: 13 (Ventura).
func minMacOS() MacOSVersion { return MacOSVersion{Major: 13} }

// parseMacOSVersion reads a product version as sysctl kern.osproductversion
// and sw_vers -productVersion print it: "13", "13.0", "14.2.1".
func parseMacOSVersion(s string) (MacOSVersion, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) > 3 {
		return MacOSVersion{}, fmt.Errorf("macOS version %q: more than three numbers", s)
	}
	var n [3]int
	for i, p := range parts {
		// Atoi alone would take "+1" and "-1".
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return MacOSVersion{}, fmt.Errorf("macOS version %q: %q is not a number", s, p)
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return MacOSVersion{}, fmt.Errorf("macOS version %q: %w", s, err)
		}
		n[i] = v
	}
	return MacOSVersion{Major: n[0], Minor: n[1], Patch: n[2]}, nil
}

// AtLeast says whether v is w or newer.
func (v MacOSVersion) AtLeast(w MacOSVersion) bool {
	if v.Major != w.Major {
		return v.Major > w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor > w.Minor
	}
	return v.Patch >= w.Patch
}

func (v MacOSVersion) String() string {
	if v.Patch == 0 {
		return fmt.Sprintf("%d.%d", v.Major, v.Minor)
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// MacOSCheck turns the product version (sysctl kern.osproductversion) and
// the error reading it into the doctor's check.
func MacOSCheck(productVersion string, readErr error) Check {
	c := Check{Name: checkNameMacOS}
	if readErr != nil {
		c.Detail = fmt.Sprintf("cannot read sysctl kern.osproductversion: %v", readErr)
		return c
	}
	v, err := parseMacOSVersion(productVersion)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	if v.AtLeast(minMacOS()) {
		c.OK, c.Detail = true, "macOS "+v.String()
		return c
	}
	c.Detail = fmt.Sprintf("macOS %s; the vz backend needs %s (Ventura) or later", v, minMacOS())
	if v == (MacOSVersion{Major: 10, Minor: 16}) {
		// macOS 11 and later say 10.16 to programs in compatibility mode.
		c.Detail += " (10.16 is what macOS 11 or later reports when SYSTEM_VERSION_COMPAT=1 is set: unset it and run again)"
	}
	c.Fix = "update macOS: System Settings > General > Software Update"
	return c
}

// CPUFacts is what sysctl says about the processor and this process.
type CPUFacts struct {
	// ARM64: hw.optional.arm64 is 1, the Mac has Apple silicon. It is 1
	// under Rosetta 2 too; Intel Macs lack the name or say 0.
	ARM64 bool
	// Translated: sysctl.proc_translated is 1, this process is an x86_64
	// binary running under Rosetta 2.
	Translated bool
}

// appleSiliconCheck turns the processor facts and the error reading them
// into the doctor's check. A process under Rosetta is refused although the
// Mac qualifies: vz's macOS-guest API exists only in arm64 builds, and QoS
// measured through the translator is not the native host's.
func appleSiliconCheck(cpu CPUFacts, readErr error) Check {
	c := Check{Name: checkNameAppleSilicon}
	switch {
	case readErr != nil:
		c.Detail = fmt.Sprintf("cannot read sysctl hw.optional.arm64 or sysctl.proc_translated: %v", readErr)
	case cpu.Translated:
		c.Detail = "this qoslab is an x86_64 build running under Rosetta 2 (sysctl.proc_translated = 1): " +
			"macOS guests need a native arm64 process, and QoS measured through Rosetta is not the host's"
		c.Fix = "rebuild natively with an arm64 Go (go env GOARCH must say arm64), then make build"
	case !cpu.ARM64:
		// Nothing to fix on this Mac, so no Fix.
		c.Detail = "an Intel Mac (hw.optional.arm64 is not 1): the vz backend needs Apple silicon; the qemu backend still works"
	default:
		c.OK, c.Detail = true, "arm64, native (hw.optional.arm64 = 1, not under Rosetta)"
	}
	return c
}

// EntitlementCheck turns what `codesign -d --entitlements - --xml EXE`
// printed on stdout, and its error (with its stderr), into the doctor's
// check of the running binary exe: signed with the entitlement, signed
// without it (go build's and go install's binaries: the linker's ad-hoc
// signature carries none), or not signed. Exported for the vz backend's
// tests, which feed it codesign's outputs.
func EntitlementCheck(exe string, codesignOut []byte, runErr error) Check {
	c := Check{Name: CheckNameEntitlement, Fix: signFix(exe)}
	if runErr != nil {
		c.Detail = fmt.Sprintf("cannot read the signature of %s: %v", exe, runErr)
		if strings.Contains(runErr.Error(), "not signed at all") {
			c.Detail = exe + " is not signed; Virtualization.framework refuses to create VMs in it (make signs bin/qoslab; go build and go install do not)"
		}
		return c
	}
	e, err := parseCodesignOutput(codesignOut)
	if err != nil {
		c.Detail = fmt.Sprintf("%s: %v", exe, err)
		return c
	}
	if err := e.Require(virtualizationEntitlement); err != nil {
		c.Detail = fmt.Sprintf("%s: %v; Virtualization.framework refuses to create VMs without it (make signs bin/qoslab; go build and go install do not)", exe, err)
		return c
	}
	c.OK, c.Detail, c.Fix = true, exe+" is signed with it", ""
	return c
}

// signFix is the command that signs binary exe with the entitlement.
func signFix(exe string) string {
	return "make build (signs bin/qoslab), or scripts/codesign.sh " + shquote.Quote(exe) + " in the qoslab repository"
}
