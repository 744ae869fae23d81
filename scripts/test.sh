#!/usr/bin/env bash
# make test: what only the tests need (scripts/test-deps.sh), then `go test`
# and the static checks side by side, then each step's time.
#
# go test is the long pole (its VM and fleet tests), and leaves about a
# CPU in three idle on a 2-CPU machine (its fleet tests wait on ansible and
# SSH). The static checks (gofmt, go vet for linux and darwin, the darwin
# type-check and the %w-of-nil check, golangci-lint, actionlint, the
# cross-builds) run one after another beside it at the lowest priority
# there is (below), so that they take that CPU rather than the tests'. What the tests need (the installs, and the agents some tests read
# from bin/) comes first, each beside the others, so that downloads overlap
# builds.
#
# go test's output shows as it comes; a check's shows when it ends (all of
# it when it failed). Every step runs whatever failed before it, so one run
# says everything that is wrong; the exit status is 1 when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."

make=${MAKE:-make}

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

# The static checks (this script again, with --checks LOGS): their tools
# are built first where this machine lacks them (beside the installs,
# which mostly download), the checks once the installs and test-bins are
# done (so that they compile nothing those compile at the same time).
if [ "${1:-}" = --checks ]; then
	logs=$2
	step tools scripts/test-deps.sh golangci-lint actionlint
	while [ ! -e "$logs/ready" ]; do sleep 1; done
	for check in fmt-check vet lint actionlint build; do
		step "$check" "$make" --no-print-directory "$check"
	done
	exit 0
fi

# The checks run at the lowest priority there is: nice 19, and on Linux in a
# session of their own whose autogroup is at nice 19 too. With autogroups
# (on by default in Debian's kernels) the scheduler shares the CPUs between
# sessions first and ranks by nice only within one, and the tests' VMs and
# SSH sessions run in sessions of their own: a merely niced build beside
# them took its full share (the cmd/qoslab tests took 261 s beside one,
# 179 s alone, 207 s beside one in its own session at autogroup nice 19).
# That session is its own process group, which this script ends if it is
# interrupted.
logs=$(mktemp -d "${TMPDIR:-/tmp}/qoslab-test.XXXXXX")
began=$(date +%s)
if [ "$(uname -s)" = Linux ] && command -v setsid >/dev/null; then
	setsid sh -c '{ echo 19 >/proc/self/autogroup; } 2>/dev/null; exec nice -n 19 "$@"' sh scripts/test.sh --checks "$logs" &
else
	nice -n 19 scripts/test.sh --checks "$logs" &
fi
checks=$!
cleanup() {
	kill -- -"$checks" 2>/dev/null || kill "$checks" 2>/dev/null || true
	rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

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
# The tests are done: what is left of the checks takes its normal share
# (raising an autogroup's nice back to 0 needs no privilege), so that on a
# busy machine it is not the last thing to finish by waiting its turn.
{ echo 0 >"/proc/$checks/autogroup"; } 2>/dev/null || true
wait "$checks" || true

echo "test: times (s), $(($(date +%s) - began)) in all:"
while read -r name secs result; do
	printf '  %-26s %5s  %s\n' "$name" "$secs" "$result"
done <"$logs/times"
! grep -q ' FAILED$' "$logs/times"
