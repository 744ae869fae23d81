package qemu

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanAccel(t *testing.T) {
	linux := accelHost{GOOS: "linux", GOARCH: "amd64", CanProbe: true, FailuresFile: "/cache/kvm-probe.json"}
	mac := accelHost{GOOS: "darwin", GOARCH: "arm64", CanProbe: true}
	failure := &probeFailure{At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Reason: "no agent within 15s (nested KVM?)"}
	with := func(h accelHost, f func(*accelHost)) accelHost { f(&h); return h }

	tests := []struct {
		name      string
		requested string
		arch      string
		host      accelHost
		want      accelPlan
		// note is a substring of the plan's note ("" for no note).
		note string
	}{
		{"linux probes KVM", "", "amd64", linux, accelPlan{Accel: accelKVM, Probe: true}, ""},
		{"linux without Ready trusts KVM", "", "amd64", with(linux, func(h *accelHost) { h.CanProbe = false }), accelPlan{Accel: accelKVM}, ""},
		{"linux without /dev/kvm", "", "amd64", with(linux, func(h *accelHost) { h.KVMProblem = "/dev/kvm does not exist" }),
			accelPlan{Accel: AccelTCG}, "No usable KVM (/dev/kvm does not exist); using TCG, which is slower. Force with --accel kvm|tcg."},
		{"linux remembers a failed probe", "", "amd64", with(linux, func(h *accelHost) { h.KVMFailure = failure }),
			accelPlan{Accel: AccelTCG}, "delete that file to probe again"},
		{"cross-architecture image", "", "arm64", linux, accelPlan{Accel: AccelTCG}, "The image is arm64 and this host amd64"},
		{"forced KVM skips the probe and the remembered failure", "kvm", "amd64", with(linux, func(h *accelHost) { h.KVMFailure = failure }), accelPlan{Accel: accelKVM}, ""},
		{"forced TCG", "tcg", "amd64", linux, accelPlan{Accel: AccelTCG}, ""},
		{"mac uses hvf", "", "arm64", mac, accelPlan{Accel: accelHVF}, ""},
		{"mac without hvf", "", "arm64", with(mac, func(h *accelHost) { h.HVFProblem = "no kern.hv_support" }), accelPlan{Accel: AccelTCG}, "No Hypervisor.framework"},
		{"mac forced hvf", "hvf", "arm64", mac, accelPlan{Accel: accelHVF}, ""},
		{"other OS", "", "amd64", accelHost{GOOS: "freebsd", GOARCH: "amd64"}, accelPlan{Accel: AccelTCG}, "No hardware acceleration for QEMU on freebsd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planAccel(tt.requested, tt.arch, tt.host)
			require.NoError(t, err)
			note := got.Note
			got.Note = ""
			assert.Equal(t, tt.want, got)
			if tt.note == "" {
				assert.Empty(t, note)
			} else {
				assert.Contains(t, note, tt.note)
			}
		})
	}
}

func TestPlanAccelRejects(t *testing.T) {
	linux := accelHost{GOOS: "linux", GOARCH: "amd64"}
	tests := []struct {
		name      string
		requested string
		arch      string
		host      accelHost
		want      string
	}{
		{"kvm without /dev/kvm", "kvm", "amd64", accelHost{GOOS: "linux", GOARCH: "amd64", KVMProblem: "/dev/kvm is not accessible to this user", KVMFix: "sudo usermod -aG kvm $USER"},
			"/dev/kvm is not accessible to this user; fix: sudo usermod -aG kvm $USER; or use --accel tcg"},
		{"kvm for another architecture", "kvm", "arm64", linux, "KVM runs only guests of the host's architecture (host amd64, image arm64)"},
		{"kvm on macOS", "kvm", "arm64", accelHost{GOOS: "darwin", GOARCH: "arm64"}, "KVM exists only on Linux"},
		{"hvf on Linux", "hvf", "amd64", linux, "Hypervisor.framework exists only on macOS"},
		{"hvf for another architecture", "hvf", "amd64", accelHost{GOOS: "darwin", GOARCH: "arm64"}, "hvf runs only guests of the host's architecture"},
		{"unknown", "xen", "amd64", linux, `accelerator "xen": want kvm, tcg, hvf, or none`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := planAccel(tt.requested, tt.arch, tt.host)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
