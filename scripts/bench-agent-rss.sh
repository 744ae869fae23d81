#!/usr/bin/env bash
# The agent's resident memory when idle (goal: at most 20 MB), read from
# /proc/PID/status right after start and after Info and one fp cell.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s bin/qoslab-agent
go run ./scripts/agentrss -agent bin/qoslab-agent
