#!/usr/bin/env bash
# The agent's Info round trip: host (stdio) and VM (virtio-serial), plus the
# VM's boot time to agent answering. Needs the image: qoslab image build linux.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s bin/qoslab-agent
go run ./scripts/agentrtt "$@"
