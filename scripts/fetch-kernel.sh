#!/usr/bin/env bash
# Fetches a Debian kernel for qoslab's guest image (kernel.source: debian in
# vmimages/linux-microvm.yaml): resolves the linux-image-<arch> metapackage to
# the kernel package it depends on, downloads that with `apt-get download`,
# extracts it with `dpkg-deb -x` into
#   DIR/<package>_<version>_<arch>/       (boot/vmlinuz-*, lib/modules/*)
# and points DIR/<asked package>_<arch> at it, which is where
# `qoslab image build linux` looks. Prints the extract's directory.
# Idempotent: a version already extracted is not fetched again.
#
# Usage: scripts/fetch-kernel.sh [--arch amd64|arm64] [--dir DIR] [--package NAME]
#   --arch     the kernel's architecture (default: this machine's)
#   --dir      the kernel cache (default: $XDG_CACHE_HOME/qoslab/kernels,
#              else ~/.cache/qoslab/kernels)
#   --package  the package (default: linux-image-<arch>, the current kernel)
#
# A kernel for another architecture needs it in dpkg's list: for arm64 on an
# amd64 machine this script runs `dpkg --add-architecture arm64` and
# `apt-get update` (with sudo when not root), and says so first.
set -euo pipefail

die() { echo "fetch-kernel: $*" >&2; exit 1; }
say() { echo "fetch-kernel: $*" >&2; }

usage() { sed -n '2,/^set -e/p' "$0" | sed -e '/^set -e/d' -e 's/^# \{0,1\}//' >&2; }

arch=""
dir=""
pkg=""
while [ $# -gt 0 ]; do
	case "$1" in
	--arch) [ $# -ge 2 ] || die "--arch needs a value (amd64 or arm64)"; arch="$2"; shift 2 ;;
	--arch=*) arch="${1#*=}"; shift ;;
	--dir) [ $# -ge 2 ] || die "--dir needs a directory"; dir="$2"; shift 2 ;;
	--dir=*) dir="${1#*=}"; shift ;;
	--package) [ $# -ge 2 ] || die "--package needs a package name"; pkg="$2"; shift 2 ;;
	--package=*) pkg="${1#*=}"; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage; die "unknown argument: $1" ;;
	esac
done

for tool in apt-get apt-cache dpkg dpkg-deb; do
	command -v "$tool" >/dev/null || die "$tool not found: this script needs a Debian or Ubuntu machine (elsewhere, use kernel.source: path in a recipe)"
done

native="$(dpkg --print-architecture)"
[ -n "$arch" ] || arch="$native"
case "$arch" in
amd64|arm64) ;;
*) die "--arch $arch: allowed: amd64, arm64" ;;
esac
[ -n "$pkg" ] || pkg="linux-image-$arch"
if [ -z "$dir" ]; then
	case "${XDG_CACHE_HOME:-}" in
	/*) dir="$XDG_CACHE_HOME/qoslab/kernels" ;;
	*) [ -n "${HOME:-}" ] || die "neither XDG_CACHE_HOME nor HOME is set: give --dir"; dir="$HOME/.cache/qoslab/kernels" ;;
	esac
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

if [ "$arch" != "$native" ] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
	say "$arch is not in dpkg's architectures: running '${sudo:+sudo }dpkg --add-architecture $arch' and '${sudo:+sudo }apt-get update' (this changes the machine's apt configuration; undo with 'dpkg --remove-architecture $arch')"
	$sudo dpkg --add-architecture "$arch"
	$sudo apt-get update -qq || die "apt-get update failed after adding $arch: does the mirror in your apt sources carry $arch? (Ubuntu keeps arm64 on ports.ubuntu.com)"
fi

# The metapackage (linux-image-amd64) depends on the current kernel package
# (linux-image-6.1.0-56-amd64); a kernel package names itself.
candidate() { apt-cache policy "$1:$arch" 2>/dev/null | awk '/Candidate:/ {print $2; exit}' || true; }
real="$pkg"
if ! [[ "$pkg" =~ ^linux-image-[0-9] ]]; then
	real="$(apt-cache depends "$pkg:$arch" 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ {print $2; exit}' || true)"
	real="${real%%:*}"
	if [ -z "$real" ]; then
		[ -n "$(candidate "$pkg")" ] || die "apt does not know $pkg for $arch: is the name right? If it is, run '${sudo:+sudo }apt-get update' and try again"
		die "$pkg ($arch) depends on no linux-image-<version> package: give the kernel package with --package"
	fi
fi
version="$(candidate "$real")"
[ -n "$version" ] && [ "$version" != "(none)" ] || die "apt has no candidate version of $real for $arch: is the name right? If it is, run '${sudo:+sudo }apt-get update' and try again"

name="${real}_${version//:/%3a}_${arch}"
dest="$dir/$name"
link="$dir/${pkg}_${arch}"
mkdir -p "$dir"

point() {
	# Atomically point the link at the extract.
	if [ "$(readlink "$link" 2>/dev/null || true)" != "$name" ]; then
		ln -sfn "$name" "$link.tmp.$$"
		mv -Tf "$link.tmp.$$" "$link"
	fi
}

if [ -d "$dest" ]; then
	say "$real $version ($arch) is already in $dest"
	point
	echo "$dest"
	exit 0
fi

# The .deb goes to a temporary directory the _apt user can write in (apt-get
# download run by root drops to _apt); the extract is made beside its final
# place, then renamed into it.
dl="$(mktemp -d)"
tmp="$(mktemp -d "$dir/.fetch.XXXXXX")"
trap 'rm -rf "$dl" "$tmp"' EXIT
if [ "$(id -u)" -eq 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi
say "downloading $real $version ($arch)"
(cd "$dl" && apt-get download -q "$real:$arch=$version" >&2) ||
	die "apt-get download $real:$arch=$version failed: if the mirror no longer has that version, run '${sudo:+sudo }apt-get update' and try again"
deb="$(ls "$dl"/*.deb 2>/dev/null | head -n1)"
[ -n "$deb" ] || die "apt-get download left no .deb in $dl"
got="$(dpkg-deb -f "$deb" Version)"
[ "$got" = "$version" ] || die "downloaded $real version $got, expected $version"
say "extracting $(basename "$deb")"
mkdir "$tmp/x"
dpkg-deb -x "$deb" "$tmp/x"
ls "$tmp"/x/boot/vmlinuz-* >/dev/null 2>&1 || ls "$tmp"/x/usr/lib/modules/*/vmlinuz >/dev/null 2>&1 ||
	die "$(basename "$deb") holds no kernel image (boot/vmlinuz-*): is $real a kernel package?"
chmod 0755 "$tmp/x"
mv -T "$tmp/x" "$dest"
point
say "$real $version ($arch) is in $dest"
echo "$dest"
