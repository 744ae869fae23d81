#!/usr/bin/env bash
# bench-fp.sh: compare qoslab's fp kernel (Go assembly, internal/workload/kernel.FP)
# and the rate qoslab bench reports per thread with the same loop in C
# (scripts/fpref/fp.c built with gcc -O2).
#
# Runs each RUNS times, alternating C and Go, and prints every rate, the
# medians and the ratio bench/C. The goal is bench/C >= 0.95; the script exits 1
# when the median ratio falls below it.
#
# Environment:
#   RUNS=5            runs of each
#   LOOPS=500000000   iterations per C run
#   BENCHTIME=1s      -benchtime of each Go run (BenchmarkFP, 2^20 loops per call)
#   CC=gcc            C compiler (always with -O2 only)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-5}
loops=${LOOPS:-500000000}
benchtime=${BENCHTIME:-1s}
cc=${CC:-gcc}
goal=0.95

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$cc" -O2 -o "$tmp/fp" "$root/scripts/fpref/fp.c"
(cd "$root" && go test -c -o "$tmp/kernel.test" ./internal/workload/kernel)

# c_rate prints the loops/s of one C run.
c_rate() {
	"$tmp/fp" "$loops" | awk '$2 == "loops/s" { print $1 }'
}

# go_rate prints the loops/s metric of one BenchmarkFP run.
go_rate() {
	(cd "$root/internal/workload/kernel" &&
		"$tmp/kernel.test" -test.run '^$' -test.bench '^BenchmarkFP$' \
			-test.benchtime "$benchtime" -test.count 1 -test.cpu 1) |
		awk '/^BenchmarkFP/ { for (i = 2; i < NF; i++) if ($(i + 1) == "loops/s") print $i }'
}

median() {
	printf '%s\n' "$@" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_rate prints the per-thread rate of one fp cell measured the whole way
# through: qoslab bench drives the agent, whose locked thread runs the kernel in
# chunks with getcpu between them.
bench_rate() {
	"$root/bin/qoslab" bench --workload fp --qos default --threads 1 --loops "$loops" --repeat 1 --format csv 2>/dev/null |
		awk -F, 'NR == 2 { print $12 }'
}

(cd "$root" && make -s bin/qoslab bin/qoslab-agent)
c_rates=()
go_rates=()
bench_rates=()
# Interleaved, so drift in the machine's speed lands on all three alike.
for ((i = 1; i <= runs; i++)); do
	c=$(c_rate)
	g=$(go_rate)
	b=$(bench_rate)
	if [[ -z $c || -z $g || -z $b ]]; then
		echo "bench-fp: run $i produced no rate (C: '$c', Go: '$g', qoslab bench: '$b')" >&2
		exit 2
	fi
	c_rates+=("$c")
	go_rates+=("$g")
	bench_rates+=("$b")
	printf 'run %d: C %.4g loops/s, Go kernel %.4g loops/s, qoslab bench %.4g loops/s\n' "$i" "$c" "$g" "$b"
done

c_med=$(median "${c_rates[@]}")
go_med=$(median "${go_rates[@]}")
bench_med=$(median "${bench_rates[@]}")
ratio=$(awk -v g="$bench_med" -v c="$c_med" 'BEGIN { printf "%.3f", g / c }')
printf 'median: C %.4g loops/s, Go kernel %.4g loops/s (kernel/C %s), qoslab bench per-thread %.4g loops/s\n' \
	"$c_med" "$go_med" "$(awk -v g="$go_med" -v c="$c_med" 'BEGIN { printf "%.3f", g / c }')" "$bench_med"
printf 'qoslab bench / C: %s (goal >= %s)\n' "$ratio" "$goal"

if awk -v r="$ratio" -v g="$goal" 'BEGIN { exit !(r < g) }'; then
	echo "bench-fp: qoslab bench / C below the goal" >&2
	exit 1
fi
