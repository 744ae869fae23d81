#!/usr/bin/env bash
# Installs what qoslab's build, tests and benchmark scripts need on a Debian
# machine, then downloads the Go modules. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v go >/dev/null || { echo "setup: Go is not installed; install Go 1.24 or later from https://go.dev/dl/" >&2; exit 1; }
command -v gcc >/dev/null || need+=(gcc)
command -v zstd >/dev/null || need+=(zstd)
command -v git >/dev/null || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "setup: installing ${need[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
go mod download
echo "setup: ready ($(go version))"
