#!/usr/bin/env bash
# bench-telemetry.sh: what the Linux telemetry sampler costs and how well it
# keeps its 100 ms schedule while the machine is busy.
#
# 1. BenchmarkProcProbeSample: one sample of this machine following four
#    threads (ns/op, allocations, and that cost paid every 100 ms as a share
#    of one core).
# 2. BenchmarkRecorder: the recorder at 100 ms for DURATION seconds while
#    SPINNERS goroutines spin on threads of their own and are followed. It runs
#    with GOMAXPROCS one above the spinners, as the agent must run with
#    GOMAXPROCS above its workers (see StartRecorder). Printed: samples, the
#    sampler thread's CPU time as % of one core, the process's CPU time other
#    than the spinners' (sampler, Go runtime, harness: an upper bound), the
#    share of intervals within 10 ms of 100 ms, and p50/p95/max |interval -
#    100 ms|.
#
# Goals: sampler under 1% of one core; at least 95% of intervals within 10 ms.
# The script exits 1 when a goal is missed.
#
# Environment:
#   DURATION=20          seconds of recording
#   SPINNERS=$(nproc)    busy goroutines during the recording
#   GOMAXPROCS_BENCH=    GOMAXPROCS for the recording (default SPINNERS+1);
#                        SPINNERS shows what happens when every P is busy
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
duration=${DURATION:-20}
spinners=${SPINNERS:-$(nproc)}
procs=${GOMAXPROCS_BENCH:-$((spinners + 1))}
goal_cpu=1
goal_within=95

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/telemetry.test" ./internal/telemetry)

# metric LINE UNIT prints the value reported with UNIT on a benchmark line.
metric() {
	awk -v unit="$2" '{ for (i = 2; i < NF; i++) if ($(i + 1) == unit) { print $i; exit } }' <<<"$1"
}

run_bench() {
	(cd "$root/internal/telemetry" && "$tmp/telemetry.test" -test.run '^$' -test.bench "^$1\$" "${@:2}") |
		grep "^$1"
}

line=$(run_bench BenchmarkProcProbeSample -test.benchtime 2s)
printf 'one sample, 4 threads followed: %s ns, %s B, %s allocs; at 100 ms that is %s%% of one core\n' \
	"$(metric "$line" ns/op)" "$(metric "$line" B/op)" "$(metric "$line" allocs/op)" "$(metric "$line" %core-at-100ms)"

echo "recording at 100 ms for ${duration}s, ${spinners} spinning goroutines followed, GOMAXPROCS=${procs}..."
line=$(GOMAXPROCS=$procs QOSLAB_TELEMETRY_BENCH_SECONDS=$duration QOSLAB_TELEMETRY_BENCH_SPINNERS=$spinners \
	run_bench BenchmarkRecorder -test.benchtime 1x)
cpu=$(metric "$line" sampler-%core)
within=$(metric "$line" %within-10ms)
printf 'samples: %.0f (%.0f with thread rates per spinner)\n' "$(metric "$line" samples)" "$(metric "$line" thread-rates)"
printf 'sampler CPU: %.3f%% of one core (goal < %s%%); process CPU besides the spinners: %.3f%%\n' \
	"$cpu" "$goal_cpu" "$(metric "$line" rest-%core)"
printf 'intervals within 10 ms of 100 ms: %.1f%% (goal >= %s%%)\n' "$within" "$goal_within"
printf 'jitter |interval - 100 ms|: p50 %.2f ms, p95 %.2f ms, max %.2f ms\n' \
	"$(metric "$line" p50-jitter-ms)" "$(metric "$line" p95-jitter-ms)" "$(metric "$line" max-jitter-ms)"

status=0
if awk -v v="$cpu" -v g="$goal_cpu" 'BEGIN { exit !(v >= g) }'; then
	echo "bench-telemetry: sampler CPU above the goal" >&2
	status=1
fi
if awk -v v="$within" -v g="$goal_within" 'BEGIN { exit !(v < g) }'; then
	echo "bench-telemetry: fewer than ${goal_within}% of intervals within 10 ms" >&2
	status=1
fi
exit $status
