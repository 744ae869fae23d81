#!/usr/bin/env bash
# bench-orchestration.sh: how much of a run is not measuring, and where
# that time goes. Runs a short experiment with `qoslab run --trace` (by
# default the built-in contention spec shrunk with --quick: 48 cell runs of
# 250 ms on the host and in a VM) and prints the run's time line (wall,
# measured, booting, the orchestration's share), the orchestration per cell
# run, and each step's median and mean per cell run on the host and in the
# VM: the controller's (progress line, request, host telemetry, saving the
# samples and telemetry, synced), the transport's, the agent's (threads
# created and classed, the cell's clock started, telemetry stopped and
# sent). The machine's load comes first: a busy machine's figures are
# higher.
#
# Arguments replace the spec flags: `scripts/bench-orchestration.sh
# --default contention` traces the run `make run` makes on Linux. On Linux
# the VM runs under TCG unless the arguments say --accel.
#
# Environment:
#   KEEP=1   keep the results directory (with trace.jsonl) and say where
set -euo pipefail
cd "$(dirname "$0")/.."

args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--default contention --quick)
case " ${args[*]} " in
*" --accel "* | *" --accel="*) ;;
*) [ "$(uname -s)" != Linux ] || args+=(--accel tcg) ;;
esac

out=$(mktemp -d)
if [ "${KEEP:-}" = 1 ]; then
	trap 'echo "kept: $out"' EXIT
else
	trap 'rm -rf "$out"' EXIT
fi
if ! make -s build image >"$out/build.log" 2>&1; then
	cat "$out/build.log" >&2
	exit 1
fi
echo "load: $(uptime | sed 's/.*load average[s]*: //')"
echo "run: bin/qoslab run ${args[*]} --trace"
if ! bin/qoslab run "${args[@]}" --trace --results "$out" >"$out/run.log" 2>&1; then
	cat "$out/run.log" >&2
	exit 1
fi
dir=
for d in "$out"/*/; do dir=$d; done
go run ./scripts/orchtrace "$dir"
