#!/usr/bin/env bash
# codesign.sh: sign a qoslab binary with the entitlement Virtualization.framework
# requires (com.apple.security.virtualization), then read the signature back
# and fail unless it carries the entitlement. Without it, creating a VM fails
# at run time with an error that does not name the cause. `make build` runs
# this on macOS; so does the Go test of internal/signing, on Linux, for the
# part that runs anywhere.
#
# Usage: scripts/codesign.sh BINARY [ENTITLEMENTS]
#   ENTITLEMENTS   default: qoslab.entitlements at the repository root
#   CODESIGN_IDENTITY (env)   signing identity; default "-", an ad-hoc
#                  signature, which is all running on this Mac needs (the
#                  entitlement is not restricted). A "Developer ID
#                  Application: ..." identity is for binaries given to others.
#
# On macOS: checks the entitlements file (plutil -lint, the key is <true/>),
# signs (codesign --force, replacing the Go linker's ad-hoc signature),
# verifies the signature, and checks that `codesign -d --entitlements -` of
# the signed binary has the key.
# Elsewhere: checks the entitlements file (with python3's plistlib when
# python3 is present; `go test ./internal/signing` checks it in any case),
# says signing is only needed on macOS, and exits 0.
#
# Exit status: 0 signed and checked (or nothing to sign off macOS),
# 1 a check or codesign failed, 2 usage error.
set -euo pipefail

key=com.apple.security.virtualization
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
	echo "usage: scripts/codesign.sh BINARY [ENTITLEMENTS]  (env CODESIGN_IDENTITY, default - for ad hoc)" >&2
	exit 2
}
die() {
	echo "codesign.sh: $*" >&2
	exit 1
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
bin=$1
ent=${2:-$root/qoslab.entitlements}
identity=${CODESIGN_IDENTITY:--}

[ -f "$bin" ] || die "$bin: no such file; build it first (make build)"
[ -f "$ent" ] || die "$ent: no such entitlements file"

if [ "$(uname -s)" != Darwin ]; then
	# A python3 that cannot import plistlib (a pyenv shim without a
	# version, say) counts as none.
	if python3 -c 'import plistlib' >/dev/null 2>&1; then
		# plistlib is strict about XML plists; the key must be a real boolean
		# true, as Apple's checks require, not the string "true".
		python3 - "$ent" "$key" <<-'EOF' || die "$ent: fix the file: it must be an XML plist whose <dict> has <key>$key</key><true/>"
			import plistlib, sys
			path, key = sys.argv[1], sys.argv[2]
			try:
			    with open(path, "rb") as f:
			        d = plistlib.load(f, fmt=plistlib.FMT_XML)
			except Exception as e:
			    sys.exit(f"codesign.sh: {path}: not a well-formed XML property list: {e}")
			if not isinstance(d, dict) or d.get(key) is not True:
			    sys.exit(f"codesign.sh: {path}: {key} is not <true/> in the root <dict>")
		EOF
	else
		echo "codesign.sh: no python3 with plistlib: $ent not checked here (go test ./internal/signing checks it)" >&2
	fi
	echo "codesign.sh: signing is only needed on macOS (this is $(uname -s)); $bin left as it is"
	exit 0
fi

# has_key FILE: FILE, a plist in any format plutil reads, has the key set to
# <true/>. plutil rewrites it as canonical XML, one element per line, so the
# line after the key is its value. (plutil -extract cannot be used: it splits
# key paths at dots.) No grep -q: quitting early could kill the grep before
# it with SIGPIPE, which pipefail would report as a failure.
has_key() {
	local xml
	xml=$(plutil -convert xml1 -o - "$1" 2>/dev/null) || return 1
	grep -A1 -F "<key>$key</key>" <<<"$xml" | grep -F '<true/>' >/dev/null
}

# -s prints only the errors.
plutil -lint -s "$ent" >&2 || die "$ent: not a well-formed property list (plutil's error is above)"
has_key "$ent" || die "$ent: $key is not <true/>; add <key>$key</key><true/> to its <dict>"

# --force replaces the signature the Go linker gives every darwin/arm64
# binary (ad hoc, without entitlements).
codesign --force --sign "$identity" --entitlements "$ent" "$bin" ||
	die "codesign --force --sign $identity failed for $bin (CODESIGN_IDENTITY=$identity; 'security find-identity -v -p codesigning' lists the identities)"
codesign --verify --strict "$bin" || die "$bin: the signature just made does not verify"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The entitlements go to stdout, "Executable=..." to stderr.
codesign -d --entitlements - --xml "$bin" >"$tmp/entitlements.plist" 2>"$tmp/stderr" ||
	die "codesign -d $bin failed: $(cat "$tmp/stderr")"
[ -s "$tmp/entitlements.plist" ] || die "$bin: signed, but the signature carries no entitlements"
has_key "$tmp/entitlements.plist" ||
	die "$bin: signed, but $key is not in its entitlements: $(cat "$tmp/entitlements.plist")"

kind="ad hoc"
[ "$identity" = - ] || kind="by $identity"
echo "codesign.sh: signed $bin ($kind) with $key"
