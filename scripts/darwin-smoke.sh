#!/usr/bin/env bash
# darwin-smoke.sh: the end-to-end path on a Mac, run by a person. No Mac is
# available to this project's CI, which only checks this script's syntax and
# the portable parts of the code; this script is what proves the real path:
# build and sign qoslab, check the Mac; first and fast, the arm64 Linux guest
# on vz (its kernel fetched in Go, the built-in subsumption spec --quick);
# then fetch macOS, create and provision a macOS guest with the agent, and
# measure on the host and in the guest side by side.
#
# The qoslab flags below follow `bin/qoslab bench --help` and
# `bin/qoslab image --help`: the vz backend and the image are chosen with
# `--vm-backend vz --image NAME`, and `image create macos` takes the new
# image's name with --name. If the help says otherwise, the help wins; fix
# this script to match.
#
# Usage: scripts/darwin-smoke.sh [RESULTS_DIR]
#   RESULTS_DIR   default qoslab-results/darwin-smoke-<UTC timestamp>
# Environment (all optional):
#   IMAGE=qoslab-macos   the guest image's name; an image of that name that
#                        `qoslab image list` already shows is reused, not
#                        created again (creating one takes 20 minutes or more)
#   IPSW=FILE            a macOS restore image already downloaded: skips the
#                        fetch (about 15 GB)
#   DISK=64GiB CPUS=4 MEMORY=8GiB   the guest's size
#   REPEAT=3             repeats of every cell
#   LINUX_GUEST=0        skips the first, fast stage (the Linux guest on vz;
#                        it needs QOSLAB_DEBIAN_MIRROR set to fetch its kernel)
#
# Needs: macOS 13 or later on Apple silicon, Go, the Xcode command line tools
# (cgo compiles Virtualization.framework's bindings), sudo (provisioning
# mounts the guest's disk), and about 100 GB free.
#
# Exit status: 0 every step passed; 2 not a Mac or a prerequisite missing;
# otherwise the status of the step that failed, which is named on stderr.
# Results (CSV and JSON per workload, the terminal tables, doctor's report
# and a description of the host) are in RESULTS_DIR, also after a failure.
set -euo pipefail

if [ "$(uname -s)" != Darwin ]; then
	echo "darwin-smoke.sh: this is the end-to-end test for macOS on Apple silicon; this machine runs $(uname -s)." >&2
	echo "darwin-smoke.sh: on Linux, make test checks what can be checked without a Mac." >&2
	exit 2
fi

cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-qoslab-macos}
IPSW=${IPSW:-}
DISK=${DISK:-64GiB}
CPUS=${CPUS:-4}
MEMORY=${MEMORY:-8GiB}
REPEAT=${REPEAT:-3}
results=${1:-qoslab-results/darwin-smoke-$(date -u +%Y%m%dT%H%M%SZ)}
total_steps=9
step_no=0
step_name="checks"

step() {
	step_no=$((step_no + 1))
	step_name=$*
	printf '\n==> [%d/%d] %s\n' "$step_no" "$total_steps" "$step_name"
}
need() {
	echo "darwin-smoke.sh: $*" >&2
	exit 2
}
fail() {
	echo "darwin-smoke.sh: $*" >&2
	exit 1
}
# image_exists: `qoslab image list` shows an image named $IMAGE. The list is
# read whole first: grep -q quitting early could kill qoslab with SIGPIPE,
# which pipefail would report as a failure.
image_exists() {
	local list
	list=$(bin/qoslab image list 2>/dev/null) || return 1
	awk -v n="$IMAGE" '{ for (i = 1; i <= NF; i++) if ($i == n) found = 1 } END { exit !found }' <<<"$list"
}
on_exit() {
	local status=$1
	if [ "$status" -ne 0 ] && [ "$status" -ne 2 ]; then
		echo "darwin-smoke.sh: step $step_no/$total_steps ($step_name) failed with status $status; results so far in $results" >&2
	fi
}
trap 'on_exit $?' EXIT

# --- 1. This Mac -------------------------------------------------------------
step "check this Mac: macOS 13 or later, Apple silicon, Xcode command line tools, Go"
version=$(sw_vers -productVersion)
[ "${version%%.*}" -ge 13 ] || need "macOS $version: the vz backend needs macOS 13 (Ventura) or later; update in System Settings > General > Software Update"
if [ "$(uname -m)" != arm64 ]; then
	# A shell under Rosetta 2 says x86_64 on Apple silicon, and would build
	# an x86_64 qoslab, which cannot boot macOS guests.
	if [ "$(sysctl -n hw.optional.arm64 2>/dev/null || echo 0)" = 1 ]; then
		need "this shell runs under Rosetta 2; run natively: arch -arm64 /bin/bash scripts/darwin-smoke.sh"
	fi
	need "an Intel Mac: the vz backend's macOS guests need Apple silicon"
fi
xcode-select -p >/dev/null 2>&1 || need "the Xcode command line tools are missing (cgo needs clang): xcode-select --install"
command -v go >/dev/null || need "Go is missing: install it from https://go.dev/dl/ (or brew install go)"
[ "$(go env GOARCH)" = arm64 ] || need "go env GOARCH says $(go env GOARCH): install the arm64 (Apple silicon) Go"
echo "macOS $version, $(sysctl -n machdep.cpu.brand_string), $(go version)"
free_gb=$(df -g . | awk 'NR == 2 { print $4 }')
if [ "${free_gb:-0}" -lt 100 ]; then
	echo "warning: ${free_gb} GB free here; the IPSW and the guest's disk need about 100 GB" >&2
fi

mkdir -p "$results"
{
	sw_vers
	echo "cpu: $(sysctl -n machdep.cpu.brand_string)"
	echo "performance cores: $(sysctl -n hw.perflevel0.physicalcpu 2>/dev/null || echo ?)"
	echo "efficiency cores: $(sysctl -n hw.perflevel1.physicalcpu 2>/dev/null || echo ?)"
	echo "memory bytes: $(sysctl -n hw.memsize)"
	go version
	git describe --tags --always --dirty 2>/dev/null || true
} >"$results/host.txt"

# --- 2. Build ----------------------------------------------------------------
step "make build (builds bin/qoslab and signs it with com.apple.security.virtualization)"
make build

# --- 3. Doctor ---------------------------------------------------------------
step "bin/qoslab doctor"
# doctor fails when anything is missing, QEMU included, which the vz path
# does not use; only the checks of this Mac and of the signature must pass.
doctor_status=0
bin/qoslab doctor 2>&1 | tee "$results/doctor.txt" || doctor_status=$?
if grep -E 'MISSING.*(macOS 13 or later|Apple silicon|entitlement com\.apple\.security\.virtualization)' "$results/doctor.txt" >&2; then
	fail "doctor says the vz backend cannot run here (above); its fix lines say what to do"
fi
[ "$doctor_status" -eq 0 ] || echo "(doctor reported other missing items; the vz path does not need them)"

# --- 4. The Linux guest on vz: the first, fast stage ---------------------------
step "the Linux guest on vz: image build linux --arch arm64, then run --default subsumption --quick"
if [ "${LINUX_GUEST:-1}" = 0 ]; then
	echo "skipped (LINUX_GUEST=0)"
else
	# The arm64 kernel is fetched in Go from the Debian mirror
	# QOSLAB_DEBIAN_MIRROR names (a Mac has no apt sources).
	bin/qoslab image build linux --arch arm64 2>&1 | tee "$results/linux-image.txt"
	bin/qoslab run --default subsumption --quick --vm-backend vz --results "$results/linux-guest" 2>&1 |
		tee "$results/linux-guest.txt"
	# One vsock connection outlives the framework's completion handler: it
	# answers after an idle second and then 100 calls, without a redial
	# (vzpatched/README.md: the connection holds its
	# VZVirtioSocketConnection until it is closed).
	bin/qoslab vm start smoke-vsock --vm-backend vz 2>&1 | tee "$results/vsock-hold.txt"
	hold_status=0
	go run ./scripts/vsockhold -idle 1s -calls 100 smoke-vsock 2>&1 | tee -a "$results/vsock-hold.txt" || hold_status=$?
	bin/qoslab vm stop smoke-vsock 2>&1 | tee -a "$results/vsock-hold.txt"
	bin/qoslab vm delete smoke-vsock
	[ "$hold_status" -eq 0 ] || fail "a vsock connection to the Linux guest did not survive an idle second and 100 calls (above)"
fi

# --- 5. macOS restore image --------------------------------------------------
step "bin/qoslab image fetch macos --ipsw latest"
if image_exists; then
	echo "image $IMAGE exists: no restore image needed"
elif [ -n "$IPSW" ]; then
	[ -f "$IPSW" ] || need "IPSW=$IPSW: no such file"
	echo "using IPSW=$IPSW"
else
	bin/qoslab image fetch macos --ipsw latest | tee "$results/fetch.txt"
	# fetch prints where it put the restore image; the last .ipsw path it
	# printed that exists is the one.
	IPSW=$(grep -o '/[^[:space:]]*\.ipsw' "$results/fetch.txt" | tail -n 1 || true)
	if [ -z "$IPSW" ] || [ ! -f "$IPSW" ]; then
		fail "could not tell from its output where image fetch put the .ipsw; run again with IPSW=/path/to/the.ipsw"
	fi
fi

# --- 6. Guest image ----------------------------------------------------------
step "bin/qoslab image create macos --ipsw FILE --disk $DISK --cpus $CPUS --memory $MEMORY ($IMAGE)"
if image_exists; then
	echo "image $IMAGE exists: reused (delete it to start from scratch)"
else
	# Installs macOS into the new disk: 20 minutes or more.
	bin/qoslab image create macos --name "$IMAGE" --ipsw "$IPSW" --disk "$DISK" --cpus "$CPUS" --memory "$MEMORY"
fi

# --- 7. Agent in the guest ---------------------------------------------------
step "sudo bin/qoslab image provision $IMAGE (the agent just built, as a LaunchDaemon)"
# Provisioning mounts the guest's disk, which needs root, but must find the
# image in this user's store, hence this user's HOME and XDG directories.
# Run every time, so the guest's agent is the one just built.
sudo env "HOME=$HOME" \
	"XDG_CACHE_HOME=${XDG_CACHE_HOME:-$HOME/.cache}" \
	"XDG_STATE_HOME=${XDG_STATE_HOME:-$HOME/.local/state}" \
	bin/qoslab image provision "$IMAGE"

# bench writes one format per run: JSON (everything, agents' Info included)
# and the tidy CSV are two runs of the same cells; the table printed on the
# terminal is kept too.
bench() {
	local name=$1
	shift
	local format
	for format in json csv; do
		echo "--- $name, $format -> $results/$name.$format"
		bin/qoslab bench --target host,vm --vm-backend vz --image "$IMAGE" \
			--cpus "$CPUS" --memory "$MEMORY" --repeat "$REPEAT" \
			--format "$format" --out "$results/$name.$format" "$@" 2>&1 |
			tee "$results/$name.$format.txt"
	done
}

# --- 8. fp -------------------------------------------------------------------
step "bench fp: host and vz guest, QoS 9 and 33, 1-4 threads"
bench fp --workload fp --qos 9,33 --threads 1-4

# --- 9. compress and decompress ----------------------------------------------
step "bench compress,decompress: host and vz guest, 1 GiB, QoS 9 and 33, 1-4 threads"
bench compress --workload compress,decompress --size 1GiB --qos 9,33 --threads 1-4

printf '\n==> done: results in %s\n' "$results"
ls -l "$results"
