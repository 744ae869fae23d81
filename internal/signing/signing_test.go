package signing

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vzEntitlements is the file vz's README and examples sign with.
const vzEntitlements = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>com.apple.security.virtualization</key>
	<true/>
</dict>
</plist>
`

// codesignXML is `codesign -d --entitlements - --xml` output on macOS 13 and
// later: one line, no newline at the end.
const codesignXML = `<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "https://www.apple.com/DTDs/PropertyList-1.0.dtd"><plist version="1.0"><dict><key>com.apple.security.virtualization</key><true/></dict></plist>`

func TestParseEntitlementsEveryType(t *testing.T) {
	e, err := parseEntitlements([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment -->
<plist version="1.0">
<dict>
	<key>t</key><true/>
	<key>f</key><false></false>
	<key>s</key><string>a &amp; b</string>
	<key>empty</key><string/>
	<key>i</key><integer> -42 </integer>
	<key>big</key><integer>18446744073709551615</integer>
	<key>r</key><real>1.5</real>
	<key>d</key><date>2024-01-02T03:04:05Z</date>
	<key>b</key><data>
		aGVs
		bG8=
	</data>
	<key>a</key><array><string>x</string><integer>1</integer><array/></array>
	<key>nested</key><dict><key>k</key><true/></dict>
</dict>
</plist>`))
	require.NoError(t, err)
	assert.Equal(t, Entitlements{
		"t":      true,
		"f":      false,
		"s":      "a & b",
		"empty":  "",
		"i":      int64(-42),
		"big":    uint64(18446744073709551615),
		"r":      1.5,
		"d":      time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		"b":      []byte("hello"),
		"a":      []any{"x", int64(1), []any{}},
		"nested": map[string]any{"k": true},
	}, e)
	assert.Equal(t, []string{"a", "b", "big", "d", "empty", "f", "i", "nested", "r", "s", "t"}, e.Keys())
}

func TestParseEntitlementsWithoutPlistWrapper(t *testing.T) {
	e, err := parseEntitlements([]byte(`<dict><key>com.apple.security.virtualization</key><true/></dict>`))
	require.NoError(t, err)
	assert.NoError(t, e.Require(virtualizationEntitlement))
}

func TestParseEntitlementsRefuses(t *testing.T) {
	tests := []struct {
		name, plist, want string
	}{
		{"empty", ``, "no property list"},
		{"not XML", `com.apple.security.virtualization = true`, "no property list"},
		{"binary plist", "bplist00\xd1\x01\x02", "binary property list"},
		{"root is an array", `<plist><array/></plist>`, "not a <dict>"},
		{"root is a string", `<plist><string>x</string></plist>`, "not a <dict>"},
		{"empty plist", `<plist></plist>`, "holds no value"},
		{"truncated", `<plist><dict><key>a</key><true/>`, "inside <dict>"},
		{"unclosed key", `<plist><dict><key>a`, "inside <key>"},
		{"mismatched end", `<plist><dict><key>a</key><true/></array></plist>`, "inside <dict>"},
		{"key without value", `<plist><dict><key>a</key></dict></plist>`, `key "a" has no value`},
		{"key after key", `<plist><dict><key>a</key><key>b</key><true/></dict></plist>`, `key "a" has no value`},
		{"value without key", `<plist><dict><true/></dict></plist>`, "where a <key> belongs"},
		{"duplicate key", `<plist><dict><key>a</key><true/><key>a</key><false/></dict></plist>`, "appears twice"},
		{"unknown element", `<plist><dict><key>a</key><yes/></dict></plist>`, "<yes> is not a property list element"},
		{"text in true", `<plist><dict><key>a</key><true>yes</true></dict></plist>`, "must be empty"},
		{"element in string", `<plist><dict><key>a</key><string><b/></string></dict></plist>`, "holds only text"},
		{"text in dict", `<plist><dict>oops<key>a</key><true/></dict></plist>`, "directly inside <dict>"},
		{"bad integer", `<plist><dict><key>a</key><integer>0x10</integer></dict></plist>`, "not a decimal integer"},
		{"bad real", `<plist><dict><key>a</key><real>fast</real></dict></plist>`, "not a number"},
		{"bad date", `<plist><dict><key>a</key><date>yesterday</date></dict></plist>`, "not an ISO 8601"},
		{"bad data", `<plist><dict><key>a</key><data>!!!</data></dict></plist>`, "not base64"},
		{"bad array item", `<plist><dict><key>a</key><array><true/><nope/></array></dict></plist>`, "array item 1"},
		{"two roots", `<plist><dict/><dict/></plist>`, "a second root value"},
		{"text after root", `<plist><dict/></plist>trailing`, "after the root value"},
		{"stray end tag first", `</plist>`, "no property list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseEntitlements([]byte(tt.plist))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "entitlements: ")
		})
	}
}

func TestRequire(t *testing.T) {
	const key = virtualizationEntitlement
	tests := []struct {
		name string
		e    Entitlements
		want string // "" for no error
	}{
		{"true", Entitlements{key: true}, ""},
		{"true among others", Entitlements{key: true, "com.apple.vm.networking": true}, ""},
		{"no entitlements", Entitlements{}, "the signature carries no entitlements"},
		{"nil entitlements", nil, "the signature carries no entitlements"},
		{"others only", Entitlements{"b": true, "a": false}, "carries only [a b]"},
		{"false", Entitlements{key: false}, "is <false/>"},
		{"string true", Entitlements{key: "true"}, `the <string> "true"`},
		{"integer 1", Entitlements{key: int64(1)}, "the <integer> 1"},
		{"dict", Entitlements{key: map[string]any{}}, "a <dict>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.e.Require(key)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), key)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// blob wraps an entitlements plist the way codesign before macOS 12 printed
// it: magic 0xfade7171 and the length including the 8-byte header.
func blob(magic uint32, plist string, length int) []byte {
	b := make([]byte, 8, 8+len(plist))
	binary.BigEndian.PutUint32(b, magic)
	binary.BigEndian.PutUint32(b[4:], uint32(length))
	return append(b, plist...)
}

func TestParseCodesignOutput(t *testing.T) {
	tests := []struct {
		name    string
		out     []byte
		granted bool
		empty   bool
	}{
		{"xml, macOS 13", []byte(codesignXML), true, false},
		{"xml with a trailing newline", []byte(codesignXML + "\n"), true, false},
		{"pretty xml", []byte(vzEntitlements), true, false},
		{"stderr merged in front", []byte("Executable=/Users/me/qoslab/bin/qoslab\n" + codesignXML), true, false},
		{"no <?xml> declaration", []byte("Executable=/x\n<plist version=\"1.0\"><dict><key>com.apple.security.virtualization</key><true/></dict></plist>"), true, false},
		{"blob, before macOS 12", blob(0xfade7171, vzEntitlements, 8+len(vzEntitlements)), true, false},
		{"blob with bytes after it", append(blob(0xfade7171, vzEntitlements, 8+len(vzEntitlements)), 0, 0, 0), true, false},
		{"other entitlements", []byte(`<plist><dict><key>com.apple.security.cs.allow-jit</key><true/></dict></plist>`), false, false},
		{"entitlement false", []byte(`<plist><dict><key>com.apple.security.virtualization</key><false/></dict></plist>`), false, false},
		{"signed without entitlements", nil, false, true},
		{"only whitespace", []byte("\n"), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := parseCodesignOutput(tt.out)
			require.NoError(t, err)
			assert.Equal(t, tt.empty, len(e) == 0)
			assert.Equal(t, tt.granted, e.Require(virtualizationEntitlement) == nil)
		})
	}
}

func TestParseCodesignOutputRefuses(t *testing.T) {
	tests := []struct {
		name string
		out  []byte
		want string
	}{
		{"blob longer than the output", blob(0xfade7171, vzEntitlements, 8+len(vzEntitlements)+1), "truncated"},
		{"blob length below its header", blob(0xfade7171, vzEntitlements, 4), "truncated"},
		{"blob cut inside the plist", blob(0xfade7171, vzEntitlements, 40), "entitlements: "},
		{"DER blob", blob(0xfade7172, "\x70\x00", 10), "--xml"},
		{"human-readable form", []byte("[Dict]\n\t[Key] com.apple.security.virtualization\n\t[Value]\n\t\t[Bool] true\n"), "no XML property list"},
		{"malformed xml", []byte(`<?xml version="1.0"?><plist><dict><key>a</key>`), "entitlements: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseCodesignOutput(tt.out)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
