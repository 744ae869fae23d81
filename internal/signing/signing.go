// Package signing checks what Virtualization.framework asks of a Mac and of
// the qoslab binary: the com.apple.security.virtualization entitlement in its
// code signature, macOS 13 or later, and Apple silicon.
package signing

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// virtualizationEntitlement is the entitlement without which creating a
// VZVirtualMachine fails. It is the only one qoslab needs: NAT networking
// and vsock need none; bridged networking (com.apple.vm.networking), which
// qoslab does not use, would need a provisioning profile.
const virtualizationEntitlement = "com.apple.security.virtualization"

// Entitlements are the keys and values of an entitlements property list.
type Entitlements map[string]any

// parseEntitlements reads an entitlements file: an XML property list whose
// root is a <dict>.
func parseEntitlements(plist []byte) (Entitlements, error) {
	v, err := decodePlist(plist)
	if err != nil {
		return nil, fmt.Errorf("entitlements: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("entitlements: the root is %s, not a <dict>", plistKind(v))
	}
	return Entitlements(m), nil
}

// Magic numbers of code signature blobs (<Security/CSCommon.h>), big-endian.
const (
	// embeddedEntitlementsMagic starts the XML entitlements blob, which
	// `codesign -d --entitlements -` printed raw, header included, before
	// macOS 12.
	embeddedEntitlementsMagic = 0xfade7171
	// embeddedDEREntitlementsMagic starts the DER form macOS 12 added.
	embeddedDEREntitlementsMagic = 0xfade7172
	blobHeaderLen                = 8 // magic, then the blob's length including the header
)

// parseCodesignOutput reads what `codesign -d --entitlements - --xml BINARY`
// writes to stdout: an XML property list, or nothing at all for a binary
// signed without entitlements (the Go linker's ad-hoc signature on
// darwin/arm64 is one). The raw blob older codesign versions printed (magic
// 0xfade7171, length, then the XML) is read too. Text before the property
// list, such as an "Executable=" line when stderr was merged in, is skipped.
// Empty output gives empty Entitlements and no error.
func parseCodesignOutput(out []byte) (Entitlements, error) {
	if len(out) >= blobHeaderLen {
		switch binary.BigEndian.Uint32(out) {
		case embeddedEntitlementsMagic:
			n := binary.BigEndian.Uint32(out[4:])
			if n < blobHeaderLen || uint64(n) > uint64(len(out)) {
				return nil, fmt.Errorf("codesign entitlements blob: its header says %d bytes but %d were read; the output is truncated or not a blob", n, len(out))
			}
			return parseEntitlements(out[blobHeaderLen:n])
		case embeddedDEREntitlementsMagic:
			return nil, errors.New("codesign printed DER entitlements, which are not read here: run codesign with --xml")
		}
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return Entitlements{}, nil
	}
	i := bytes.Index(out, []byte("<?xml"))
	if i < 0 {
		i = bytes.Index(out, []byte("<plist"))
	}
	if i < 0 {
		return nil, fmt.Errorf("codesign output holds no XML property list (run codesign with --xml): %q", truncate(string(out)))
	}
	return parseEntitlements(out[i:])
}

// Require returns nil if key is present and <true/>, and otherwise an error
// that says what is there instead. Apple's checks take only a boolean true:
// a string "true" or an integer 1 do not grant an entitlement.
func (e Entitlements) Require(key string) error {
	v, ok := e[key]
	if !ok {
		if len(e) == 0 {
			return fmt.Errorf("%s is missing: the signature carries no entitlements", key)
		}
		return fmt.Errorf("%s is missing: the signature carries only %v", key, e.Keys())
	}
	switch b, isBool := v.(bool); {
	case !isBool:
		return fmt.Errorf("%s is %s; it must be <true/>", key, plistKind(v))
	case !b:
		return fmt.Errorf("%s is <false/>; it must be <true/>", key)
	}
	return nil
}

// Keys returns the entitlement keys, sorted.
func (e Entitlements) Keys() []string {
	return slices.Sorted(maps.Keys(e))
}

// plistKind names a decoded value by its plist element, for messages.
func plistKind(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "a <dict>"
	case []any:
		return "an <array>"
	case string:
		return fmt.Sprintf("the <string> %q", truncate(v))
	case int64, uint64:
		return fmt.Sprintf("the <integer> %d", v)
	case float64:
		return fmt.Sprintf("the <real> %g", v)
	case bool:
		if v {
			return "<true/>"
		}
		return "<false/>"
	case []byte:
		return "a <data>"
	default:
		return "a <date>"
	}
}
