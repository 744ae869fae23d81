#!/usr/bin/env bash
# Installs what qoslab's build, tests and benchmark scripts need on a Debian
# machine, downloads the Go modules and fetches the Debian kernel the guest
# image is built from. Safe to run again.
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
	scripts/install-golangci-lint.sh
	scripts/fetch-kernel.sh --arch arm64 >/dev/null
	echo "setup: ready ($(go version), $(xcode-select -p))"
	echo "setup: QEMU is not needed on a Mac: VMs run on Virtualization.framework (vz)."
	exit 0
fi
command -v go >/dev/null || { echo "setup: Go is not installed; install Go 1.24 or later from https://go.dev/dl/" >&2; exit 1; }
need=()
command -v gcc >/dev/null || need+=(gcc)
command -v zstd >/dev/null || need+=(zstd)
command -v git >/dev/null || need+=(git)
command -v shellcheck >/dev/null || need+=(shellcheck)
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-img >/dev/null || need+=(qemu-utils)
# The arm64 guest a Mac boots on Virtualization.framework, emulated here.
command -v qemu-system-aarch64 >/dev/null || need+=(qemu-system-arm)
# The fleet playbook's test: an sshd of its own, and a venv for ansible-core.
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null || need+=(openssh-client)
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
if [ ${#need[@]} -gt 0 ]; then
	echo "setup: installing ${need[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
go mod download
scripts/install-golangci-lint.sh
# ansible-core for deploy/ansible (the fleet playbook), and ansible-lint for
# its test, in a venv of their own: nothing is installed into the system's
# Python.
if [ ! -x .venv-ansible/bin/ansible-playbook ] || [ ! -x .venv-ansible/bin/ansible-lint ]; then
	echo "setup: installing ansible-core and ansible-lint into .venv-ansible"
	python3 -m venv .venv-ansible
	.venv-ansible/bin/pip install -q -r deploy/ansible/requirements.txt -r deploy/ansible/requirements-lint.txt
fi
# The guest kernels: Debian's current linux-image for this machine's arch,
# and arm64's (the guest a Mac boots; here it runs emulated).
scripts/fetch-kernel.sh --arch "$(go env GOARCH)" >/dev/null
[ "$(go env GOARCH)" = arm64 ] || scripts/fetch-kernel.sh --arch arm64 >/dev/null
echo "setup: ready ($(go version), $(qemu-system-x86_64 --version | head -n1))"
