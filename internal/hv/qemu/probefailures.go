package qemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/qoslab/qoslab/internal/atomicfile"
)

// probeFailuresFile is where failed KVM probes are remembered, in the
// backend's cache directory; deleting it makes the next start probe again.
const probeFailuresFile = "kvm-probe.json"

// probeFailureTTL is how long a failed probe is believed: long enough not
// to pay a probe timeout on every run, short enough that a host fixed
// since (a new outer hypervisor, nested virtualization turned on) is found
// out without anyone remembering to delete the file.
const probeFailureTTL = 7 * 24 * time.Hour

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

// probeFailures is the failures file's content.
type probeFailures struct {
	Version  int            `json:"version"`
	Failures []probeFailure `json:"failures"`
}

const probeFailuresVersion = 1

// readProbeFailures reads the failures file; a missing or unreadable one
// remembers no failure, which only costs a probe.
func readProbeFailures(path string) (probeFailures, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the failures file in qoslab's cache directory
	if errors.Is(err, fs.ErrNotExist) {
		return probeFailures{Version: probeFailuresVersion}, nil
	}
	if err != nil {
		return probeFailures{Version: probeFailuresVersion}, fmt.Errorf("KVM probe verdicts: %w", err)
	}
	var v probeFailures
	if err := json.Unmarshal(b, &v); err != nil || v.Version != probeFailuresVersion {
		return probeFailures{Version: probeFailuresVersion}, fmt.Errorf("KVM probe verdicts %s: not a version %d verdict file; ignoring it", path, probeFailuresVersion)
	}
	return v, nil
}

// failed returns the unexpired failure recorded for key.
func (v probeFailures) failed(key probeKey, now time.Time) (probeFailure, bool) {
	for _, f := range v.Failures {
		if f.probeKey == key && now.Sub(f.At) < probeFailureTTL {
			return f, true
		}
	}
	return probeFailure{}, false
}

// latest returns the newest unexpired failure for any key.
func (v probeFailures) latest(now time.Time) (probeFailure, bool) {
	var newest probeFailure
	found := false
	for _, f := range v.Failures {
		if now.Sub(f.At) < probeFailureTTL && (!found || f.At.After(newest.At)) {
			newest, found = f, true
		}
	}
	return newest, found
}

// record adds f, replacing any failure with the same key and dropping
// expired ones.
func (v probeFailures) record(f probeFailure, now time.Time) probeFailures {
	kept := []probeFailure{}
	for _, old := range v.Failures {
		if old.probeKey != f.probeKey && now.Sub(old.At) < probeFailureTTL {
			kept = append(kept, old)
		}
	}
	return probeFailures{Version: probeFailuresVersion, Failures: append(kept, f)}
}

// writeProbeFailures replaces the failures file.
func writeProbeFailures(path string, v probeFailures) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // G301: qoslab's directory in the user cache directory, which holds nothing secret, made as mkdir -p makes it
		return fmt.Errorf("save the KVM probe verdict: %w", err)
	}
	if err := atomicfile.WriteJSON(path, v); err != nil {
		return fmt.Errorf("save the KVM probe verdict %s: %w", path, err)
	}
	return nil
}
