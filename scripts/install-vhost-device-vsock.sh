#!/bin/sh
# Installs rust-vmm's vhost-device-vsock, the version qoslab is tested
# with, when it is missing: the vsock device of the vz device model
# (`qoslab bench --vm-model vz`), in which the VM tests boot the arm64 guest
# laid out as Virtualization.framework lays it out. `make test` runs this;
# `make setup` and `make run` do not (the main job never needs it), and it
# takes minutes to build. Safe to run again.
set -eu

name=vhost-device-vsock
version=0.3.0
cargo_bin=${CARGO_HOME:-$HOME/.cargo}/bin

if [ "$(uname -s)" != Linux ]; then
	# The vz model shares the guest's memory through a memfd: Linux only.
	exit 0
fi

found=$(command -v "$name" 2>/dev/null || true)
if [ -z "$found" ] && [ -x "$cargo_bin/$name" ]; then
	found=$cargo_bin/$name
fi
if [ -n "$found" ] && [ "$("$found" --version 2>/dev/null)" = "$name $version" ]; then
	exit 0
fi

cargo=$(command -v cargo 2>/dev/null || true)
if [ -z "$cargo" ] && [ -x "$cargo_bin/cargo" ]; then
	cargo=$cargo_bin/cargo
fi
if [ -z "$cargo" ]; then
	msg="$name $version (the vz device model's vsock, which the VM tests boot the arm64 guest with) is not installed, and there is no cargo to build it: install Rust from https://rustup.rs, then run make test again (or: cargo install --locked $name@$version)"
	if [ "${QOSLAB_REQUIRE_VM:-}" = 1 ]; then
		echo "install-$name: $msg" >&2
		exit 1
	fi
	echo "install-$name: note: $msg; the tests that need it are skipped" >&2
	exit 0
fi

if [ -n "$found" ]; then
	echo "install-$name: $found is not $version; installing $version with cargo (takes minutes)"
else
	echo "install-$name: installing $name $version with cargo (takes minutes)"
fi
"$cargo" install --locked --force "$name@$version"
