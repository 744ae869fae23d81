#!/usr/bin/env bash
# Compares qoslab's one-stream zstd compression (klauspost/compress at its
# default level, about zstd -3) with the zstd command on the same generated
# bytes, and prints MB/s for both and their ratio (the goal is >= 0.7).
#
#   scripts/bench-zstd.sh            # 256 MiB, 5 runs each
#   SIZE_MIB=64 RUNS=3 scripts/bench-zstd.sh
#
# zstd -T1 is what is compared, as asked; note that zstd's -T1 runs one
# compression worker beside its I/O thread, while ours is one goroutine.
set -euo pipefail

SIZE_MIB=${SIZE_MIB:-256}
RUNS=${RUNS:-5}
SEED=${SEED:-1}
RATIO=${RATIO:-3}

repo=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v zstd >/dev/null; then
	echo "bench-zstd: the zstd command is missing: apt-get install zstd (macOS: brew install zstd)" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data="$tmp/data.bin"

cd "$repo"
echo "generating $SIZE_MIB MiB (seed $SEED, ratio $RATIO) in $tmp"
go run ./scripts/gendata -size-mib "$SIZE_MIB" -seed "$SEED" -ratio "$RATIO" -o "$data"
bytes=$(wc -c <"$data")
cat "$data" >/dev/null # into the page cache, as ours reads it into memory

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

echo "zstd $(zstd --version | grep -o 'v[0-9.]*'): zstd -3 -T1 -c FILE > /dev/null, $RUNS runs"
zstd_rates=()
for _ in $(seq "$RUNS"); do
	start=$(date +%s%N)
	zstd -q -3 -T1 -c "$data" >/dev/null
	end=$(date +%s%N)
	zstd_rates+=("$(awk -v b="$bytes" -v ns="$((end - start))" 'BEGIN {printf "%.2f", b / (ns / 1e9) / 1e6}')")
done
zstd_size=$(zstd -q -3 -T1 -c "$data" | wc -c)
zstd_mbs=$(printf '%s\n' "${zstd_rates[@]}" | median)

echo "ours: go test -bench BenchmarkZstdCompress (one stream, default level), $RUNS runs"
ours_out=$(QOSLAB_BENCH_FILE="$data" go test -run '^$' -bench '^BenchmarkZstdCompress$' \
	-benchtime 1x -count "$RUNS" ./internal/workload/codec)
ours_mbs=$(awk '/^BenchmarkZstdCompress/ {for (i = 1; i < NF; i++) if ($(i+1) == "MB/s") print $i}' <<<"$ours_out" | median)
ours_ratio=$(awk '/^BenchmarkZstdCompress/ {for (i = 1; i < NF; i++) if ($(i+1) == "ratio") r = $i} END {print r}' <<<"$ours_out")

echo
echo "runs (MB/s, 1 MB = 10^6 bytes):"
echo "  zstd: ${zstd_rates[*]}"
echo "  ours: $(awk '/^BenchmarkZstdCompress/ {for (i = 1; i < NF; i++) if ($(i+1) == "MB/s") printf "%s ", $i}' <<<"$ours_out")"
awk -v z="$zstd_mbs" -v o="$ours_mbs" -v b="$bytes" -v zs="$zstd_size" -v or="$ours_ratio" 'BEGIN {
	printf "zstd -3 -T1:       %8.1f MB/s (median), ratio %.3f\n", z, b / zs
	printf "qoslab zstd (1 T): %8.1f MB/s (median), ratio %s\n", o, or
	printf "ours/zstd:         %8.2f (goal >= 0.70)\n", o / z
}'
