package qemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/hv"
)

// probeVerdictFile is where failed KVM probes are remembered, in the
// backend's cache directory; deleting it makes the next start probe again.
const probeVerdictFile = "kvm-probe.json"

// probeVerdictTTL is how long a failed probe is believed: long enough not
// to pay a probe timeout on every run, short enough that a host fixed
// since (a new outer hypervisor, nested virtualization turned on) is found
// out without anyone remembering to delete the file.
const probeVerdictTTL = 7 * 24 * time.Hour

// probeKey is what decides whether a KVM boot works: the QEMU, the guest
// kernel, and the host kernel (with the outer hypervisor, which cannot be
// seen from here).
type probeKey struct {
	QEMU        string `json:"qemu"`
	QEMUVersion string `json:"qemu_version"`
	Kernel      string `json:"kernel"` // the guest kernel's file name and version
	KernelSize  int64  `json:"kernel_size"`
	HostKernel  string `json:"host_kernel"`
}

// probeFailure is one KVM probe that did not reach the agent while TCG did.
type probeFailure struct {
	probeKey
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// probeVerdicts is the verdict file's content.
type probeVerdicts struct {
	Version  int            `json:"version"`
	Failures []probeFailure `json:"failures"`
}

const probeVerdictsVersion = 1

// readProbeVerdicts reads the verdict file; a missing or unreadable one is
// no verdict, which only costs a probe.
func readProbeVerdicts(path string) (probeVerdicts, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the verdict file in qoslab's cache directory
	if errors.Is(err, fs.ErrNotExist) {
		return probeVerdicts{Version: probeVerdictsVersion}, nil
	}
	if err != nil {
		return probeVerdicts{Version: probeVerdictsVersion}, fmt.Errorf("KVM probe verdicts: %w", err)
	}
	var v probeVerdicts
	if err := json.Unmarshal(b, &v); err != nil || v.Version != probeVerdictsVersion {
		return probeVerdicts{Version: probeVerdictsVersion}, fmt.Errorf("KVM probe verdicts %s: not a version %d verdict file; ignoring it", path, probeVerdictsVersion)
	}
	return v, nil
}

// failed returns the unexpired failure recorded for key.
func (v probeVerdicts) failed(key probeKey, now time.Time) (probeFailure, bool) {
	for _, f := range v.Failures {
		if f.probeKey == key && now.Sub(f.At) < probeVerdictTTL {
			return f, true
		}
	}
	return probeFailure{}, false
}

// latest returns the newest unexpired failure for any key.
func (v probeVerdicts) latest(now time.Time) (probeFailure, bool) {
	var newest probeFailure
	found := false
	for _, f := range v.Failures {
		if now.Sub(f.At) < probeVerdictTTL && (!found || f.At.After(newest.At)) {
			newest, found = f, true
		}
	}
	return newest, found
}

// record adds f, replacing any failure with the same key and dropping
// expired ones.
func (v probeVerdicts) record(f probeFailure, now time.Time) probeVerdicts {
	kept := []probeFailure{}
	for _, old := range v.Failures {
		if old.probeKey != f.probeKey && now.Sub(old.At) < probeVerdictTTL {
			kept = append(kept, old)
		}
	}
	return probeVerdicts{Version: probeVerdictsVersion, Failures: append(kept, f)}
}

// writeProbeVerdicts replaces the verdict file.
func writeProbeVerdicts(path string, v probeVerdicts) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // G301: qoslab's directory in the user cache directory, which holds nothing secret, made as mkdir -p makes it
		return fmt.Errorf("save the KVM probe verdict: %w", err)
	}
	if err := hv.WriteJSONFile(path, v); err != nil {
		return fmt.Errorf("save the KVM probe verdict %s: %w", path, err)
	}
	return nil
}
