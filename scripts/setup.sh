#!/usr/bin/env bash
# Installs what qoslab's build, tests and benchmark scripts need on a Debian
# machine, downloads the Go modules and fetches the Debian kernel the guest
# image is built from. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null || { echo "setup: Go is not installed; install Go 1.24 or later from https://go.dev/dl/" >&2; exit 1; }
need=()
command -v gcc >/dev/null || need+=(gcc)
command -v zstd >/dev/null || need+=(zstd)
command -v git >/dev/null || need+=(git)
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-img >/dev/null || need+=(qemu-utils)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
if [ ${#need[@]} -gt 0 ]; then
	echo "setup: installing ${need[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
go mod download
# The guest kernel: Debian's current linux-image for this machine's arch.
scripts/fetch-kernel.sh --arch "$(go env GOARCH)" >/dev/null
echo "setup: ready ($(go version), $(qemu-system-x86_64 --version | head -n1))"
