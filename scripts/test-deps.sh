#!/usr/bin/env bash
# Installs what only `make test` needs, beyond `make setup` (which installs
# what `make run` needs): each tool pinned, and each skipped when it is
# there already, so that a machine builds each once. Safe to run again.
#
#   scripts/test-deps.sh              everything below
#   scripts/test-deps.sh NAME...      only these: golangci-lint, actionlint,
#                                     packages, ansible, vhost-device-vsock,
#                                     kernels
#
# - golangci-lint and actionlint: Go tools built from the Go module proxy
#   (golangci-lint takes minutes) into qoslab's tools directory,
#   ${XDG_DATA_HOME:-~/.local/share}/qoslab/tools/NAME@VERSION, once per
#   machine, and linked from bin/tools/NAME in this checkout.
# - packages (Debian, with apt): shellcheck, QEMU for the other
#   architecture (the arm64 guest the vz device model boots, or the amd64
#   one on an arm64 machine), sshd, ssh and Python's venv for the fleet
#   playbook's test.
# - ansible: ansible-core and ansible-lint for that test, in a venv of their
#   own (nothing goes into the system's Python) in qoslab's data directory,
#   one per set of pins, linked as .venv-ansible here (a .venv-ansible of
#   your own that has both is kept).
# - vhost-device-vsock: rust-vmm's, built with cargo (minutes; see
#   install-vhost-device-vsock.sh).
# - kernels: the other architecture's Debian kernel, for the image tests.
#
# A Mac gets the Go tools only: it has no apt, and its VM tests skip
# without QEMU.
set -euo pipefail
cd "$(dirname "$0")/.."

golangci_lint_version=v2.15.0
actionlint_version=v1.7.12
data=${XDG_DATA_HOME:-$HOME/.local/share}/qoslab

# go_tool NAME PACKAGE VERSION builds PACKAGE@VERSION once per machine and
# links it as bin/tools/NAME.
go_tool() {
	local name=$1 pkg=$2 version=$3
	local dir=$data/tools/$name@$version
	if [ ! -x "$dir/$name" ]; then
		echo "test-deps: $name $version -> $dir (built from source, once per machine)"
		local tmp
		tmp=$(mktemp -d "${TMPDIR:-/tmp}/qoslab-$name.XXXXXX")
		GOFLAGS='' GOBIN=$tmp go install "$pkg@$version"
		mkdir -p "$dir"
		# A rename: another checkout installing at the same time finds
		# the whole binary or none.
		mv -f "$tmp/$name" "$dir/$name"
		rm -rf "$tmp"
	fi
	mkdir -p bin/tools
	ln -sf "$dir/$name" "bin/tools/$name"
}

packages() {
	[ "$(uname -s)" = Linux ] || return 0
	local need=()
	command -v shellcheck >/dev/null || need+=(shellcheck)
	command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
	command -v qemu-system-aarch64 >/dev/null || need+=(qemu-system-arm)
	[ -x /usr/sbin/sshd ] || need+=(openssh-server)
	command -v ssh >/dev/null || need+=(openssh-client)
	command -v python3 >/dev/null || need+=(python3)
	python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
	[ ${#need[@]} -gt 0 ] || return 0
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "test-deps: installing ${need[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

ansible_venv() {
	[ "$(uname -s)" = Linux ] || return 0
	if [ -d .venv-ansible ] && [ ! -L .venv-ansible ] && [ -x .venv-ansible/bin/ansible-playbook ] && [ -x .venv-ansible/bin/ansible-lint ]; then
		return 0
	fi
	local reqs=(deploy/ansible/requirements.txt deploy/ansible/requirements-lint.txt)
	local sum
	sum=$(cat "${reqs[@]}" | cksum | cut -d' ' -f1)
	local venv=$data/venv-ansible-$sum
	if [ ! -x "$venv/bin/ansible-playbook" ] || [ ! -x "$venv/bin/ansible-lint" ]; then
		echo "test-deps: ansible-core and ansible-lint -> $venv (once per machine)"
		rm -rf "$venv"
		mkdir -p "$data"
		python3 -m venv "$venv"
		"$venv/bin/pip" install -q -r "${reqs[0]}" -r "${reqs[1]}"
	fi
	rm -rf .venv-ansible
	ln -s "$venv" .venv-ansible
}

kernels() {
	[ "$(uname -s)" = Linux ] || return 0
	case "$(go env GOARCH)" in
	amd64) scripts/fetch-kernel.sh --arch arm64 >/dev/null ;;
	arm64) scripts/fetch-kernel.sh --arch amd64 >/dev/null ;;
	esac
}

install_dep() {
	case $1 in
	golangci-lint) go_tool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint "$golangci_lint_version" ;;
	actionlint) go_tool actionlint github.com/rhysd/actionlint/cmd/actionlint "$actionlint_version" ;;
	packages) packages ;;
	ansible) ansible_venv ;;
	vhost-device-vsock) scripts/install-vhost-device-vsock.sh ;;
	kernels) kernels ;;
	*)
		echo "test-deps: unknown $1: allowed golangci-lint, actionlint, packages, ansible, vhost-device-vsock, kernels" >&2
		exit 2
		;;
	esac
}

if [ $# -eq 0 ]; then
	set -- packages golangci-lint actionlint ansible vhost-device-vsock kernels
fi
for name in "$@"; do
	install_dep "$name"
done
