package vz

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/qoslab/qoslab/internal/signing"
)

// A VM the framework refuses: the error names the entitlement's check, fed
// codesign's output as it reads a binary signed with the entitlement, one
// signed without it (go build's) and an unsigned one, and the command that
// signs the binary when it lacks the entitlement.
func TestRefusedNamesTheSigningCommand(t *testing.T) {
	const exe = "/Users/me/go/bin/qoslab"
	frameworkErr := errors.New("Invalid virtual machine configuration. The process doesn’t have the “com.apple.security.virtualization” entitlement.")
	macOK := signing.Check{Name: "macOS 13 or later", OK: true, Detail: "macOS 15.1"}
	tests := []struct {
		name, out string
		runErr    error
		want      []string
	}{
		{"entitled", `<?xml version="1.0"?><plist version="1.0"><dict><key>com.apple.security.virtualization</key><true/></dict></plist>`, nil, nil},
		{"not entitled", "", nil, []string{"carries no entitlements", "fix: make build (signs bin/qoslab), or scripts/codesign.sh " + exe}},
		{"unsigned", "", errors.New("codesign -d: exit status 1: " + exe + ": code object is not signed at all"), []string{exe + " is not signed", "fix: make build (signs bin/qoslab), or scripts/codesign.sh " + exe}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks := []signing.Check{macOK, signing.EntitlementCheck(exe, []byte(tt.out), tt.runErr)}
			err := refused("start the VM", frameworkErr, checks)
			assert.ErrorIs(t, err, frameworkErr, "the framework's error is kept")
			assert.Contains(t, err.Error(), "start the VM: Invalid virtual machine configuration.")
			if tt.want == nil {
				assert.NotContains(t, err.Error(), "fix:", "nothing to fix when the binary is entitled")
				return
			}
			assert.Contains(t, err.Error(), "entitlement com.apple.security.virtualization: ")
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The entitlement comes first among several problems: without it nothing
// else matters.
func TestRefusedPutsTheEntitlementFirst(t *testing.T) {
	err := refused("create the VM", nil, []signing.Check{
		{Name: "Apple silicon", Detail: "an Intel Mac"},
		signing.EntitlementCheck("/tmp/qoslab", nil, nil),
	})
	assert.Regexp(t, `^create the VM: no reason given; entitlement com\.apple\.security\.virtualization: .*; Apple silicon: an Intel Mac$`, err.Error())
}
