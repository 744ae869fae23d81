#!/usr/bin/env bash
# make test: what only the tests need (scripts/test-deps.sh), then `go test`
# and the static checks side by side, then each step's time.
#
# go test is the long pole (its VM and fleet tests) and keeps the normal
# priority; the static checks (gofmt, go vet for linux and darwin, the
# darwin type-check and the %w-of-nil check, golangci-lint, actionlint, the
# cross-builds) run one after another beside it at nice 10, so they take
# the CPU the tests leave rather than slowing them. What the tests need (the
# installs, and the agents some tests read from bin/) comes first, each
# beside the others, so that downloads overlap builds.
#
# go test's output shows as it comes; a check's shows when it ends (all of
# it when it failed). Every step runs whatever failed before it, so one run
# says everything that is wrong; the exit status is 1 when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

make=${MAKE:-make}
logs=$(mktemp -d "${TMPDIR:-/tmp}/qoslab-test.XXXXXX")
trap 'rm -rf "$logs"' EXIT
began=$(date +%s)

# step NAME COMMAND...: runs COMMAND with its output in NAME's log and
# appends "NAME SECONDS ok|FAILED" to the times.
step() {
	local name=$1 start status=ok
	shift
	start=$(date +%s)
	"$@" >"$logs/$name.log" 2>&1 || status=FAILED
	echo "$name $(($(date +%s) - start)) $status" >>"$logs/times"
	if [ $status = ok ]; then
		echo "test: $name ok ($(($(date +%s) - start)) s)"
	else
		echo "test: $name FAILED ($(($(date +%s) - start)) s):"
		cat "$logs/$name.log"
	fi
}

# The static checks, niced: their tools are built first where this machine
# lacks them (beside the installs, which mostly download), the checks once
# the installs and test-bins are done (so that they compile nothing those
# compile at the same time), beside go test.
(
	step tools nice -n 10 scripts/test-deps.sh golangci-lint actionlint
	while [ ! -e "$logs/ready" ]; do sleep 1; done
	for check in fmt-check vet lint actionlint build; do
		step "$check" nice -n 10 "$make" --no-print-directory "$check"
	done
) &
checks=$!

# What the tests need: the packages first (the others use them), then the
# other installs and the agents tests read from bin/ (make test-bins) at
# once.
step test-deps:packages scripts/test-deps.sh packages
ready=()
for dep in ansible vhost-device-vsock kernels; do
	step "test-deps:$dep" scripts/test-deps.sh "$dep" &
	ready+=($!)
done
step test-bins "$make" --no-print-directory test-bins &
ready+=($!)
for pid in "${ready[@]}"; do
	wait "$pid"
done
touch "$logs/ready"

start=$(date +%s)
status=ok
"$make" --no-print-directory go-test || status=FAILED
echo "go-test $(($(date +%s) - start)) $status" >>"$logs/times"
wait "$checks" || true

echo "test: times (s), $(($(date +%s) - began)) in all:"
while read -r name secs result; do
	printf '  %-26s %5s  %s\n' "$name" "$secs" "$result"
done <"$logs/times"
! grep -q ' FAILED$' "$logs/times"
