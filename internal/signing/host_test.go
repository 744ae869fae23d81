package signing

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseMacOSVersion(t *testing.T) {
	tests := []struct {
		in   string
		want MacOSVersion
	}{
		{"13", MacOSVersion{13, 0, 0}},
		{"13.0", MacOSVersion{13, 0, 0}},
		{"14.2.1", MacOSVersion{14, 2, 1}},
		{"15.10", MacOSVersion{15, 10, 0}},
		{" 26.0.1\n", MacOSVersion{26, 0, 1}},
		{"10.16", MacOSVersion{10, 16, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := parseMacOSVersion(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, v)
		})
	}
	for _, bad := range []string{"", "14.", ".1", "14.x", "14.2.1.1", "-14", "+14", "14 beta", "Ventura"} {
		t.Run("bad "+bad, func(t *testing.T) {
			_, err := parseMacOSVersion(bad)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "macOS version")
		})
	}
}

func TestMacOSVersionAtLeast(t *testing.T) {
	minimum := minMacOS()
	tests := []struct {
		v    string
		want bool
	}{
		{"13.0", true},
		{"13", true},
		{"13.0.1", true},
		{"14.2.1", true},
		{"26.0", true},
		{"12.7.4", false},
		{"12.99.99", false},
		{"10.16", false},
	}
	for _, tt := range tests {
		t.Run(tt.v, func(t *testing.T) {
			v, err := parseMacOSVersion(tt.v)
			require.NoError(t, err)
			assert.Equal(t, tt.want, v.AtLeast(minimum))
		})
	}
	// Every component counts, in order.
	assert.True(t, MacOSVersion{14, 2, 1}.AtLeast(MacOSVersion{14, 2, 1}))
	assert.False(t, MacOSVersion{14, 2, 0}.AtLeast(MacOSVersion{14, 2, 1}))
	assert.False(t, MacOSVersion{14, 1, 9}.AtLeast(MacOSVersion{14, 2, 0}))
	assert.True(t, MacOSVersion{14, 3, 0}.AtLeast(MacOSVersion{14, 2, 9}))
	assert.Equal(t, "14.2.1", MacOSVersion{14, 2, 1}.String())
	assert.Equal(t, "13.0", minMacOS().String())
}

func TestMacOSCheck(t *testing.T) {
	tests := []struct {
		name    string
		version string
		err     error
		ok      bool
		detail  string
		fix     bool
	}{
		{"ventura", "13.0", nil, true, "macOS 13.0", false},
		{"sonoma point release", "14.2.1", nil, true, "macOS 14.2.1", false},
		{"monterey", "12.7.4", nil, false, "macOS 12.7.4; the vz backend needs 13.0 (Ventura) or later", true},
		{"compatibility mode", "10.16", nil, false, "SYSTEM_VERSION_COMPAT", true},
		{"unreadable", "", errors.New("no such file or directory"), false, "cannot read sysctl kern.osproductversion: no such file", false},
		{"garbage", "fourteen", nil, false, `macOS version "fourteen"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := MacOSCheck(tt.version, tt.err)
			assert.Equal(t, checkNameMacOS, c.Name)
			assert.Equal(t, tt.ok, c.OK)
			assert.Contains(t, c.Detail, tt.detail)
			assert.Equal(t, tt.fix, c.Fix != "", "fix: %q", c.Fix)
		})
	}
}

func TestAppleSiliconCheck(t *testing.T) {
	tests := []struct {
		name   string
		cpu    CPUFacts
		err    error
		ok     bool
		detail string
		fix    string
	}{
		{"native arm64", CPUFacts{ARM64: true}, nil, true, "arm64, native", ""},
		{"rosetta", CPUFacts{ARM64: true, Translated: true}, nil, false, "Rosetta 2", "arm64 Go"},
		{"intel", CPUFacts{}, nil, false, "Intel Mac", ""},
		{"unreadable", CPUFacts{ARM64: true}, errors.New("sysctl hw.optional.arm64: permission denied"), false, "permission denied", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := appleSiliconCheck(tt.cpu, tt.err)
			assert.Equal(t, checkNameAppleSilicon, c.Name)
			assert.Equal(t, tt.ok, c.OK)
			assert.Contains(t, c.Detail, tt.detail)
			if tt.fix == "" {
				assert.Empty(t, c.Fix)
			} else {
				assert.Contains(t, c.Fix, tt.fix)
			}
		})
	}
}

func TestEntitlementCheck(t *testing.T) {
	const exe = "/Users/me/qoslab/bin/qoslab"
	tests := []struct {
		name   string
		out    string
		err    error
		ok     bool
		detail string
	}{
		{"signed with it", codesignXML, nil, true, exe + " is signed with it"},
		{"linker signature only", "", nil, false, "the signature carries no entitlements"},
		{"other entitlements", `<plist><dict><key>com.apple.security.cs.allow-jit</key><true/></dict></plist>`, nil, false, "carries only [com.apple.security.cs.allow-jit]"},
		{"false", `<plist><dict><key>com.apple.security.virtualization</key><false/></dict></plist>`, nil, false, "is <false/>"},
		{"unsigned", "", fmt.Errorf("codesign -d: exit status 1: %s: code object is not signed at all", exe), false, exe + " is not signed"},
		{"codesign missing", "", errors.New(`codesign -d: exec: "codesign": executable file not found in $PATH`), false, "cannot read the signature of " + exe},
		{"unreadable output", "garbage", nil, false, "no XML property list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := EntitlementCheck(exe, []byte(tt.out), tt.err)
			assert.Equal(t, CheckNameEntitlement, c.Name)
			assert.Equal(t, tt.ok, c.OK)
			assert.Contains(t, c.Detail, tt.detail)
			if tt.ok {
				assert.Empty(t, c.Fix)
			} else {
				assert.Equal(t, signFix(exe), c.Fix)
			}
		})
	}
}

func TestSignFixQuotes(t *testing.T) {
	assert.Equal(t, "make build (signs bin/qoslab), or scripts/codesign.sh /usr/local/bin/qoslab in the qoslab repository", signFix("/usr/local/bin/qoslab"))
	assert.Contains(t, signFix("/Users/me/My Tools/qoslab"), `scripts/codesign.sh '/Users/me/My Tools/qoslab' in`)
	assert.Contains(t, signFix("/tmp/it's/qoslab"), `'/tmp/it'\''s/qoslab'`)
	assert.Contains(t, signFix(""), "scripts/codesign.sh '' in")
}

func TestCheckHostOffMacOS(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("on macOS CheckHost reads this Mac; see TestCheckHostOnMacOS")
	}
	assert.Empty(t, CheckHost(context.Background()))
}

func TestCheckHostOnMacOS(t *testing.T) {
	if runtime.GOOS != "darwin" {
		t.Skip("needs macOS")
	}
	checks := CheckHost(context.Background())
	require.Len(t, checks, 3)
	assert.Equal(t, []string{checkNameMacOS, checkNameAppleSilicon, CheckNameEntitlement},
		[]string{checks[0].Name, checks[1].Name, checks[2].Name})
	// The test binary carries only the Go linker's signature on arm64, and
	// none on amd64.
	assert.False(t, checks[2].OK, "%+v", checks[2])
	assert.Regexp(t, "carries no entitlements|is not signed", checks[2].Detail)
	for _, c := range checks {
		assert.NotEmpty(t, c.Detail, c.Name)
	}
}
