#!/usr/bin/env bash
# Installs what `make run` needs on a Debian machine (QEMU for this
# machine's architecture), downloads the Go modules and fetches the Debian
# kernel the guest image is built from; no more: what only the tests need
# is scripts/test-deps.sh's (make test runs it). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(uname -s)" = Darwin ]; then
	# A Mac: nothing is installed with apt (there is none). Everything is
	# checked before anything is downloaded, and each missing piece is said
	# with what to do, so that make setup run stops here, not half way.
	missing=0
	if ! xcode-select -p >/dev/null 2>&1; then
		echo "setup: the Xcode command line tools are missing (cgo builds Virtualization.framework's bindings): run xcode-select --install" >&2
		missing=1
	fi
	# Apple silicon, asked of the hardware: a shell under Rosetta 2 says
	# x86_64 to uname -m, while hw.optional.arm64 stays 1 (an Intel Mac has
	# no such key).
	apple_silicon=$(sysctl -n hw.optional.arm64 2>/dev/null || echo 0)
	if ! command -v go >/dev/null; then
		echo "setup: Go is not installed: brew install go (Homebrew, https://brew.sh), or the arm64 installer from https://go.dev/dl/" >&2
		missing=1
	elif [ "$apple_silicon" = 1 ] && [ "$(go env GOARCH)" != arm64 ]; then
		echo "setup: this Go builds for $(go env GOARCH) and would run under Rosetta 2, where Virtualization.framework cannot start VMs: install the arm64 Go (brew install go on an arm64 Homebrew in /opt/homebrew, or go.dev/dl)" >&2
		missing=1
	fi
	# The Linux guest's kernel is fetched in Go from a Debian mirror, which
	# is configuration: a Mac has no apt sources to find one in.
	if [ -z "${QOSLAB_DEBIAN_MIRROR:-}" ]; then
		echo "setup: no Debian mirror is known (a Mac has no apt sources), and the Linux guest's kernel is fetched from one." >&2
		echo "setup: add the line below to your shell's profile (~/.zprofile for zsh, the default shell), with MIRROR replaced by the host of a Debian mirror near you (the URL is the directory that holds dists/ and pool/), then open a new terminal and run make setup again:" >&2
		echo "export QOSLAB_DEBIAN_MIRROR=https://MIRROR/debian" >&2
		missing=1
	fi
	[ "$missing" -eq 0 ] || exit 1
	go mod download
	scripts/fetch-kernel.sh --arch arm64 >/dev/null
	echo "setup: ready ($(go version), $(xcode-select -p))"
	echo "setup: QEMU is not needed on a Mac: VMs run on Virtualization.framework (vz)."
	exit 0
fi
command -v go >/dev/null || { echo "setup: Go is not installed; install Go 1.24 or later from https://go.dev/dl/" >&2; exit 1; }
arch=$(go env GOARCH)
need=()
command -v git >/dev/null || need+=(git)
# The guest runs in QEMU for this machine's architecture.
case "$arch" in
amd64) qemu=qemu-system-x86_64 package=qemu-system-x86 ;;
arm64) qemu=qemu-system-aarch64 package=qemu-system-arm ;;
*)
	echo "setup: no guest image for $arch: qoslab's guests are amd64 and arm64" >&2
	exit 1
	;;
esac
command -v "$qemu" >/dev/null || need+=("$package")
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
if [ ${#need[@]} -gt 0 ]; then
	echo "setup: installing ${need[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
go mod download
# The guest's kernel: Debian's current linux-image for this machine's arch.
scripts/fetch-kernel.sh --arch "$arch" >/dev/null
echo "setup: ready ($(go version), $("$qemu" --version | head -n1)); make test installs what only the tests need (make test-deps)"
